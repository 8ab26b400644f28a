#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The real file system, through POSIX calls (open, fsync, rename, flock, ...).
public struct PosixFileSystem: FileSystem {
    /// Creates the real file system accessor; it has no state.
    public init() {}

    public func readFile(_ path: String, limit: Int) throws -> [UInt8] {
        // O_NONBLOCK: a FIFO put where a file belongs opens at once (and is refused below)
        // instead of waiting for a writer; it changes nothing for a regular file.
        let fd = try Syscall.run("open", path) { open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        defer { close(fd) }
        var info = stat()
        _ = try Syscall.run("fstat", path) { fstat(fd, &info) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw FileSystemError(kind: .other, operation: "read (not a regular file)", path: path)
        }
        guard Int(info.st_size) <= limit else {
            throw FileSystemError(kind: .tooLarge, operation: "read", path: path)
        }
        return try readAll(fd, path: path, expected: Int(info.st_size), limit: limit)
    }

    public func readPrefix(_ path: String, count: Int) throws -> [UInt8] {
        let fd = try Syscall.run("open", path) { open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        defer { close(fd) }
        var info = stat()
        _ = try Syscall.run("fstat", path) { fstat(fd, &info) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw FileSystemError(kind: .other, operation: "read (not a regular file)", path: path)
        }
        var bytes = [UInt8](repeating: 0, count: max(0, min(count, Int(info.st_size))))
        var filled = 0
        while filled < bytes.count {
            let got = try bytes.withUnsafeMutableBytes { buffer in
                try Syscall.run("pread", path) {
                    pread(fd, buffer.baseAddress! + filled, buffer.count - filled, off_t(filled))
                }
            }
            if got == 0 { break }
            filled += got
        }
        return Array(bytes.prefix(filled))
    }

    private func readAll(_ fd: Int32, path: String, expected: Int, limit: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: max(expected, 1))
        var filled = 0
        while true {
            if filled == bytes.count {
                guard bytes.count < limit + 1 else {
                    throw FileSystemError(kind: .tooLarge, operation: "read", path: path)
                }
                bytes.append(contentsOf: [UInt8](repeating: 0, count: max(4096, bytes.count)))
            }
            let count = try bytes.withUnsafeMutableBytes { buffer in
                try Syscall.run("read", path) {
                    read(fd, buffer.baseAddress! + filled, buffer.count - filled)
                }
            }
            if count == 0 { break }
            filled += count
        }
        guard filled <= limit else { throw FileSystemError(kind: .tooLarge, operation: "read", path: path) }
        bytes.removeSubrange(filled...)
        return bytes
    }

    public func status(_ path: String) -> FileStatus? {
        var info = stat()
        // withCString reads a native string in place (passing `path` itself would copy it).
        guard path.withCString({ lstat($0, &info) }) == 0 else { return nil }
        return FileStatus(posix: info)
    }

    public func listDirectory(_ path: String) throws -> [DirectoryEntry] {
        guard let directory = opendir(path) else {
            throw FileSystemError(operation: "opendir", path: path, errno: errno)
        }
        defer { closedir(directory) }
        var entries: [DirectoryEntry] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name == "." || name == ".." { continue }
            let isDirectory: Bool
            switch Int32(entry.pointee.d_type) {
            case Int32(DT_DIR): isDirectory = true
            case Int32(DT_UNKNOWN): isDirectory = status(path + "/" + name)?.kind == .directory
            default: isDirectory = false
            }
            entries.append(DirectoryEntry(name: name, isDirectory: isDirectory))
        }
        return entries
    }

    public func createDirectory(_ path: String) throws {
        _ = try Syscall.run("mkdir", path) { mkdir(path, 0o755) }
    }

    public func writeFileDurably(_ path: String, contents: [UInt8]) throws {
        let fd = try Syscall.run("open", path) {
            open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        }
        var closed = false
        defer { if !closed { close(fd) } }
        try contents.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                written += try Syscall.run("write", path) {
                    write(fd, buffer.baseAddress! + written, buffer.count - written)
                }
            }
        }
        _ = try Syscall.run("fsync", path) { fsync(fd) }
        closed = true
        // close(2) can report a deferred write error (NFS, some FUSE file systems).
        try Syscall.close(fd, path)
    }

    public func copyFileDurably(from source: String, byteCount: Int, to path: String) throws {
        let input = try Syscall.run("open", source) { open(source, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) }
        defer { close(input) }
        let fd = try Syscall.run("open", path) {
            open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        }
        var closed = false
        defer { if !closed { close(fd) } }
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var copied = 0
        while copied <= byteCount {
            let count = try chunk.withUnsafeMutableBytes { buffer in
                try Syscall.run("read", source) { read(input, buffer.baseAddress!, buffer.count) }
            }
            if count == 0 { break }
            copied += count
            try chunk.withUnsafeBytes { buffer in
                var written = 0
                while written < count {
                    written += try Syscall.run("write", path) {
                        write(fd, buffer.baseAddress! + written, count - written)
                    }
                }
            }
        }
        // An upload is never written to once finished: a size that differs is not the file hashed.
        guard copied == byteCount else {
            throw FileSystemError(kind: .other, operation: "copy (the source changed)", path: source)
        }
        _ = try Syscall.run("fsync", path) { fsync(fd) }
        closed = true
        try Syscall.close(fd, path)
    }

    public func syncDirectory(_ path: String) throws {
        let fd = try Syscall.run("open", path) { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { close(fd) }
        _ = try Syscall.run("fsync", path) { fsync(fd) }
    }

    public func rename(_ source: String, to destination: String) throws {
        _ = try Syscall.run("rename", "\(source) -> \(destination)") { posixRename(source, destination) }
    }

    public func removeTree(_ path: String) throws {
        guard let info = status(path) else { return }
        if info.kind == .directory {
            for entry in try listDirectory(path) {
                try removeTree(path + "/" + entry.name)
            }
            _ = try Syscall.run("rmdir", path) { rmdir(path) }
        } else {
            _ = try Syscall.run("unlink", path) { unlink(path) }
        }
    }

    public func touch(_ path: String) throws {
        _ = try Syscall.run("utimensat", path) { utimensat(AT_FDCWD, path, nil, AT_SYMLINK_NOFOLLOW) }
    }

    public func lockExclusive(_ path: String) throws -> any FileLock {
        let fd = try Syscall.run("open", path) {
            open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        }
        do {
            _ = try Syscall.run("flock", path) { flock(fd, LOCK_EX) }
        } catch {
            close(fd)
            throw error
        }
        return PosixFileLock(fd: fd)
    }

    public func tryLockExclusive(_ path: String) throws -> (any FileLock)? {
        let fd = try Syscall.run("open", path) {
            open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK { return nil }
            throw FileSystemError(operation: "flock", path: path, errno: code)
        }
        return PosixFileLock(fd: fd)
    }
}

/// A held `flock(2)` lock; closing the descriptor releases it.
final class PosixFileLock: FileLock, @unchecked Sendable {
    // Only touched under `lock`-free single ownership: the publisher that took it releases it.
    private var fd: Int32

    init(fd: Int32) { self.fd = fd }

    func unlock() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
    }

    deinit { unlock() }
}

extension FileStatus {
    init(posix info: stat) {
        let kind: Kind
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        default: kind = .other
        }
        self.init(
            kind: kind,
            size: Int(info.st_size),
            modificationNanos: Self.nanos(Self.modified(info)),
            changeNanos: Self.nanos(Self.changed(info)),
            inode: UInt64(info.st_ino)
        )
    }

    private static func nanos(_ time: timespec) -> Int64 { Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec) }

    // The same timestamps under Darwin's field names.
    #if canImport(Darwin)
    private static func modified(_ info: stat) -> timespec { info.st_mtimespec }
    private static func changed(_ info: stat) -> timespec { info.st_ctimespec }
    #else
    private static func modified(_ info: stat) -> timespec { info.st_mtim }
    private static func changed(_ info: stat) -> timespec { info.st_ctim }
    #endif
}

/// rename(2) by its module's name (the file system's own `rename` method hides the C call).
private func posixRename(_ source: String, _ destination: String) -> Int32 {
    #if canImport(Glibc)
    Glibc.rename(source, destination)
    #else
    Darwin.rename(source, destination)
    #endif
}
