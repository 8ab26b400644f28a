#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open regular file, reached without following any symlink below the root. Owns its
/// descriptor (closed in deinit) until `takeDescriptor()` hands it to someone who closes it.
public final class OpenedFile: @unchecked Sendable {
    // Only the thread that opened it uses it until the descriptor is taken.
    private var descriptor: Int32
    /// Its status at open time (`fstat`).
    public let status: FileStatus

    /// Wraps an open descriptor and its status.
    public init(descriptor: Int32, status: FileStatus) {
        self.descriptor = descriptor
        self.status = status
    }

    /// Size in bytes.
    public var size: Int { status.size }

    /// Up to `count` bytes from `offset` (`pread`, which leaves the file position alone).
    public func read(count: Int, at offset: Int = 0) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: max(0, count))
        var filled = 0
        while filled < count {
            let got = try bytes.withUnsafeMutableBytes { buffer in
                try Syscall.run("pread", "fd \(descriptor)") {
                    pread(descriptor, buffer.baseAddress! + filled, count - filled, off_t(offset + filled))
                }
            }
            if got == 0 { break }
            filled += got
        }
        return Array(bytes.prefix(filled))
    }

    /// A second descriptor of the same open file (`F_DUPFD_CLOEXEC`), for a reader that closes
    /// its own while this object keeps the file; readers at offsets (`pread`, `sendfile`) share
    /// no position through it.
    public func duplicateDescriptor() throws -> Int32 {
        let original = descriptor
        return try Syscall.run("fcntl(F_DUPFD_CLOEXEC)", "fd \(original)") { fcntl(original, F_DUPFD_CLOEXEC, 0) }
    }

    /// Gives the descriptor away (for example to libmicrohttpd, which closes it); this object
    /// no longer closes it.
    public func takeDescriptor() -> Int32 {
        defer { descriptor = -1 }
        return descriptor
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }
}

extension PosixFileSystem {
    /// Opens `root/components...` one component at a time with `openat(O_NOFOLLOW)`, so no
    /// symlink below `root` is ever followed and `..` cannot appear; the last must be a regular file.
    public func openBeneath(_ root: String, _ components: [String]) throws -> OpenedFile {
        var directory = try Syscall.run("open", root) { open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { close(directory) }
        for component in components.dropLast() {
            let next = try Syscall.run("openat", component) {
                openat(directory, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
            close(directory)
            directory = next
        }
        guard let last = components.last else {
            throw FileSystemError(kind: .notFound, operation: "openat", path: root)
        }
        let fd = try Syscall.run("openat", last) { openat(directory, last, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw FileSystemError(kind: .other, operation: "open (not a regular file)", path: last)
        }
        return OpenedFile(descriptor: fd, status: FileStatus(posix: info))
    }
}
