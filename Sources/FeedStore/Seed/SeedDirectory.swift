#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open folder of a seed folder. Everything below the seed folder is reached from the seed
/// folder's own descriptor one component at a time (`openat` with `O_NOFOLLOW`), never by path:
/// a folder checked and then swapped for a symbolic link would otherwise lead a later open by
/// path outside the seed folder, since `O_NOFOLLOW` guards only a path's last component. Once a
/// folder is open, its descriptor keeps naming that folder whatever is renamed around it.
///
/// Owns its descriptor (closed in deinit).
final class SeedDirectory {
    private let descriptor: Int32
    /// Its path relative to the seed folder ("" for the seed folder itself), for the hook.
    private let relative: String
    private let beforeOpening: (@Sendable (String) -> Void)?

    private init(descriptor: Int32, relative: String, beforeOpening: (@Sendable (String) -> Void)?) {
        self.descriptor = descriptor
        self.relative = relative
        self.beforeOpening = beforeOpening
    }

    deinit { try? Syscall.close(descriptor, relative) }

    /// Folders are opened with `O_NONBLOCK` too: with `O_DIRECTORY` a FIFO fails at lookup, and
    /// nothing that is not a folder can make the open wait.
    private static let folderFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC
    /// `O_NONBLOCK` so that a FIFO (or a device) put where a file was expected opens at once and
    /// is then refused by `fstat`, instead of blocking the reader until someone writes to it;
    /// `O_NOCTTY` so that a terminal put there never becomes the server's controlling terminal.
    private static let fileFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC

    /// Opens the seed folder itself. The operator named it, so the path is trusted up to its
    /// last component, which must be a real folder (a link is refused, as below it).
    static func openRoot(
        _ path: String, beforeOpening: (@Sendable (String) -> Void)?
    ) throws(FileSystemError) -> SeedDirectory {
        let descriptor = try retrying("open", path) { open(path, folderFlags) }
        return SeedDirectory(descriptor: descriptor, relative: "", beforeOpening: beforeOpening)
    }

    /// Opens the folder `name` in this one; a link, a file or a missing entry is an error
    /// (`.symbolicLink`, `.notADirectory`, `.notFound`).
    func openFolder(_ name: String) throws(FileSystemError) -> SeedDirectory {
        let path = child(name)
        beforeOpening?(path)
        let opened = try Self.retrying("openat", path) { openat(descriptor, name, Self.folderFlags) }
        return SeedDirectory(descriptor: opened, relative: path, beforeOpening: beforeOpening)
    }

    /// Opens the entry `name` in this folder for reading, whatever it is (the caller checks
    /// `status`): only a link is refused here (`.symbolicLink`).
    func openFile(_ name: String) throws(FileSystemError) -> SeedFile {
        let path = child(name)
        beforeOpening?(path)
        let opened = try Self.retrying("openat", path) { openat(descriptor, name, Self.fileFlags) }
        var info = stat()
        guard fstat(opened, &info) == 0 else {
            let error = FileSystemError(operation: "fstat", path: path, errno: errno)
            try? Syscall.close(opened, path)
            throw error
        }
        return SeedFile(descriptor: opened, status: FileStatus(posix: info), relative: path)
    }

    /// The status of the entry `name` (not following a link), or nil when there is none.
    func status(_ name: String) -> FileStatus? {
        var info = stat()
        guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return FileStatus(posix: info)
    }

    /// The entries of this folder, without `.` and `..`, read from a duplicate of its
    /// descriptor (`fdopendir` takes the descriptor it is given and `closedir` closes it).
    func entries() throws(FileSystemError) -> [DirectoryEntry] {
        let duplicate = try Self.retrying("dup", relative) { fcntl(descriptor, F_DUPFD_CLOEXEC, 0) }
        guard let directory = fdopendir(duplicate) else {
            let error = FileSystemError(operation: "fdopendir", path: relative, errno: errno)
            try? Syscall.close(duplicate, relative)
            throw error
        }
        defer { closedir(directory) }
        // The duplicate shares the file offset with this descriptor: start from the beginning
        // even if the folder was listed before.
        rewinddir(directory)
        var entries: [DirectoryEntry] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name == "." || name == ".." { continue }
            let isDirectory: Bool
            switch Int32(entry.pointee.d_type) {
            case Int32(DT_DIR): isDirectory = true
            case Int32(DT_UNKNOWN): isDirectory = status(name)?.kind == .directory
            default: isDirectory = false
            }
            entries.append(DirectoryEntry(name: name, isDirectory: isDirectory))
        }
        return entries
    }

    private func child(_ name: String) -> String { relative.isEmpty ? name : relative + "/" + name }

    /// `Syscall.run` with its one error type said.
    static func retrying<Result: BinaryInteger>(
        _ operation: String, _ path: String, _ call: () -> Result
    ) throws(FileSystemError) -> Result {
        do { return try Syscall.run(operation, path, call) } catch let error as FileSystemError { throw error } catch {
            throw FileSystemError(kind: .other, operation: operation, path: path)
        }
    }
}

/// An entry of a seed folder opened for reading, with its status at open time (`fstat` on the
/// descriptor, so it describes what is read, not what a path names by then). Owns its
/// descriptor (closed in deinit).
final class SeedFile {
    fileprivate let descriptor: Int32
    /// What was opened.
    let status: FileStatus
    fileprivate let relative: String

    fileprivate init(descriptor: Int32, status: FileStatus, relative: String) {
        self.descriptor = descriptor
        self.status = status
        self.relative = relative
    }

    deinit { try? Syscall.close(descriptor, relative) }

    /// The whole file, or `.tooLarge` as soon as it holds more than `limit` bytes (it may have
    /// grown since `fstat`): never more than `limit + 1` bytes are read or held.
    func read(limit: Int) throws(FileSystemError) -> [UInt8] {
        let limit = max(0, limit)
        let capacity = limit == Int.max ? limit : limit + 1
        // One byte past the size fstat saw, so the end of the file is seen without growing.
        var bytes = [UInt8](repeating: 0, count: min(min(max(status.size, 0), limit) + 1, capacity))
        var filled = 0
        while true {
            if filled == bytes.count {
                guard bytes.count < capacity else {
                    throw FileSystemError(kind: .tooLarge, operation: "read", path: relative)
                }
                let more = min(max(4096, bytes.count), capacity - bytes.count)
                bytes.append(contentsOf: repeatElement(0, count: more))
            }
            let count = try readSome(into: &bytes, from: filled)
            if count == 0 { break }
            filled += count
        }
        guard filled <= limit else { throw FileSystemError(kind: .tooLarge, operation: "read", path: relative) }
        bytes.removeSubrange(filled...)
        return bytes
    }
}

extension SeedFile {
    /// Copies the whole file into `file` 64 KiB at a time (so a large asset never sits in memory
    /// whole), or `.tooLarge` as soon as it holds more than `limit` bytes; the bytes copied.
    func copy(into file: StreamingFile, limit: Int) throws(FileSystemError) -> Int {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var copied = 0
        while true {
            let count = try readSome(into: &chunk, from: 0)
            if count == 0 { return copied }
            copied += count
            guard copied <= limit else { throw FileSystemError(kind: .tooLarge, operation: "read", path: relative) }
            do { try chunk.withUnsafeBytes { try file.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) } } catch {
                throw error as? FileSystemError ?? FileSystemError(kind: .other, operation: "write", path: "upload")
            }
        }
    }

    /// One `read(2)` into `bytes` from `offset` to its end, retried on EINTR.
    fileprivate func readSome(into bytes: inout [UInt8], from offset: Int) throws(FileSystemError) -> Int {
        while true {
            let (count, code) = bytes.withUnsafeMutableBytes { buffer in
                let count = systemRead(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                return (count, count < 0 ? errno : 0)
            }
            if count >= 0 { return count }
            if code != EINTR { throw FileSystemError(operation: "read", path: relative, errno: code) }
        }
    }
}

/// `read(2)` itself (the name is taken inside `SeedFile`).
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
