#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The server's own folder for request bodies streamed to disk (`<root>/.feed-server-uploads`).
/// Readers never look at it (its name is not a safe group name); it is emptied at start, and
/// each request's folder is removed when the request is done.
public struct UploadArea: Sendable {
    /// The folder.
    public let path: String
    private let fileSystem = PosixFileSystem()
    private static let counter = Atomic<UInt64>(0)

    /// The upload area of a store root.
    public init(root: String) {
        path = (root.hasSuffix("/") ? root : root + "/") + ".feed-server-uploads"
    }

    /// Removes what earlier runs left and creates the folder.
    public func prepare() throws {
        try fileSystem.removeTree(path)
        _ = try fileSystem.ensureDirectory(path)
    }

    /// A new, empty folder for one request's files.
    public func makeFolder() throws -> UploadFolder {
        let name = "\(getpid())-\(Self.counter.add(1, ordering: .relaxed).newValue)"
        let folder = path + "/" + name
        _ = try fileSystem.ensureDirectory(path)
        try fileSystem.createDirectory(folder)
        return UploadFolder(path: folder)
    }
}

/// One request's upload folder; removed (with its files) when the last reference goes.
public final class UploadFolder: Sendable {
    /// The folder.
    public let path: String
    private let files = Atomic<Int>(0)

    init(path: String) { self.path = path }

    /// Creates the next file in the folder, for writing.
    public func makeFile() throws -> StreamingFile {
        try StreamingFile(path: path + "/part-\(files.add(1, ordering: .relaxed).newValue)")
    }

    deinit { try? PosixFileSystem().removeTree(path) }
}

/// A file written piece by piece as a body arrives, hashed on the way (SHA-256); owns its
/// descriptor (`open` in init, `close` in `finish` or deinit).
public final class StreamingFile {
    private var descriptor: Int32
    private var hasher = SHA256Hasher()
    private let path: String
    /// Bytes written so far.
    public private(set) var byteCount = 0

    init(path: String) throws {
        self.path = path
        descriptor = try Syscall.run("open", path) { open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) }
    }

    /// Appends bytes (`write`, retried until all are written).
    public func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        var written = 0
        while written < bytes.count {
            written += try Syscall.run("write", path) { write(descriptor, base + written, bytes.count - written) }
        }
        hasher.update(UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: bytes.count))
        byteCount += bytes.count
    }

    /// Closes the file and describes it. (Not flushed: an upload is thrown away after its request.)
    public func finish() throws -> UploadedFile {
        let fd = descriptor
        descriptor = -1
        _ = try Syscall.run("close", path) { close(fd) }
        return UploadedFile(path: path, byteCount: byteCount, sha256: HexEncoding.lowercase(hasher.finalize()))
    }

    deinit { if descriptor >= 0 { close(descriptor) } }
}

/// A finished upload file: where it is, its size, its SHA-256.
public struct UploadedFile: Sendable, Equatable {
    /// Its path.
    public let path: String
    /// Its size in bytes.
    public let byteCount: Int
    /// Lowercase hex SHA-256 of its bytes.
    public let sha256: String
}

/// Where an uploaded image is: in memory, or in a file the upload was streamed to.
public enum AssetSource: Sendable {
    /// Bytes in memory.
    case bytes([UInt8])
    /// A streamed upload on disk.
    case file(UploadedFile)

    /// Its size in bytes.
    public var byteCount: Int {
        switch self {
        case .bytes(let bytes): return bytes.count
        case .file(let file): return file.byteCount
        }
    }

    /// Lowercase hex SHA-256 of its bytes (computed once for a file, while it was written).
    public var sha256: String {
        switch self {
        case .bytes(let bytes): return SHA256Hash.hex(bytes)
        case .file(let file): return file.sha256
        }
    }

    /// All its bytes, when there are at most `limit` of them.
    public func bytes(limit: Int) throws -> [UInt8] {
        switch self {
        case .bytes(let bytes):
            guard bytes.count <= limit else { throw FileSystemError(kind: .tooLarge, operation: "read", path: "upload") }
            return bytes
        case .file(let file):
            return try PosixFileSystem().readFile(file.path, limit: limit)
        }
    }
}
