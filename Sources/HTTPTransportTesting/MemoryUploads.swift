import ConcurrencyPrimitives
import HTTPTransport

/// Upload storage that keeps each streamed part's bytes in memory, so a test or fuzz check can
/// compare a part that went to a "file" with the bytes that were sent. A file's `path` is its key here.
package final class MemoryUploads: UploadStorage {
    /// Empty storage.
    package init() {}

    private let files = Lock<[String: [UInt8]]>([:])
    private let counter = Lock(0)

    package func makeFolder() throws(UploadStorageError) -> any UploadFolderHandle { Folder(storage: self) }

    /// The bytes of the file at `path`, removed from memory (each is read once); nil if unknown.
    package func take(_ path: String) -> [UInt8]? {
        files.withLock { $0.removeValue(forKey: path) }
    }

    /// Forgets every file (before each input: files of a refused body are never taken).
    package func removeAll() {
        files.withLock { $0.removeAll() }
    }

    fileprivate func store(_ bytes: [UInt8]) -> String {
        let number = counter.withLock { count in
            count += 1
            return count
        }
        let path = "memory/\(number)"
        files.withLock { $0[path] = bytes }
        return path
    }

    /// One request's folder.
    package final class Folder: UploadFolderHandle {
        let storage: MemoryUploads
        init(storage: MemoryUploads) { self.storage = storage }
        package func makeFile() throws(UploadStorageError) -> any UploadFileWriter { File(storage: storage) }
    }

    /// One part's bytes as they arrive.
    package final class File: UploadFileWriter {
        private let storage: MemoryUploads
        private var bytes: [UInt8] = []
        init(storage: MemoryUploads) { self.storage = storage }

        package func append(_ piece: UnsafeRawBufferPointer) throws(UploadStorageError) {
            bytes.append(contentsOf: piece)
        }

        package func finish() throws(UploadStorageError) -> StoredUpload {
            StoredUpload(path: storage.store(bytes), byteCount: bytes.count, sha256: "")
        }
    }
}
