import ConcurrencyPrimitives
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The server's own folder for request bodies streamed to disk: `<root>/.feed-server-uploads/`,
/// one folder per process inside it (`<pid>-<n>`), so two servers on one root never touch each
/// other's uploads. Readers never look at it (its name is not a safe group name). Each process
/// holds a `flock` on its folder's `owner.lock` while it runs; at start a process removes the
/// folders whose lock it can take (their process is gone: a crash, a SIGKILL), and each
/// request's folder is removed when the request is done.
public struct UploadArea: Sendable {
    /// The shared folder under the root.
    public let base: String
    /// This process's folder, where request folders are made.
    public let path: String
    private let owner = Owner()
    private let fileSystem: any FileSystem
    private static let counter = Atomic<UInt64>(0)
    private static let lockName = "owner.lock"
    /// The file in `base` whose lock `prepare` holds while it sweeps and makes its folder.
    private static let turnstileName = "prepare.lock"

    /// The upload area of a store root for this process.
    public init(root: String, fileSystem: any FileSystem = PosixFileSystem()) {
        base = (root.hasSuffix("/") ? root : root + "/") + ".feed-server-uploads"
        path = base + "/\(getpid())-\(String(UInt32.random(in: .min ... .max), radix: 16))"
        self.fileSystem = fileSystem
    }

    /// Removes what processes that are gone left, then creates this process's folder and
    /// holds its lock until the process ends.
    public func prepare() throws {
        _ = try fileSystem.ensureDirectory(base)
        // Sweeping and making this process's folder happen under one lock that every server on
        // this root takes in turn: otherwise a server starting at the same moment could find this
        // folder after it is made and before its lock is held, take it for a dead process's and
        // remove it. The kernel drops the lock if a process dies here; the file itself is never
        // removed, or two servers could each lock a different one.
        let turn = try fileSystem.lockExclusive(base + "/" + Self.turnstileName)
        defer { turn.unlock() }
        for entry in try fileSystem.listDirectory(base)
        where entry.name != lastComponent(path) && entry.name != Self.turnstileName {
            let folder = base + "/" + entry.name
            guard entry.isDirectory else {
                try? fileSystem.removeTree(folder)
                continue
            }
            if isAbandoned(folder) { try? fileSystem.removeTree(folder) }
        }
        _ = try fileSystem.ensureDirectory(path)
        try owner.hold(path + "/" + Self.lockName, fileSystem: fileSystem)
    }

    /// A new, empty folder for one request's files.
    public func makeFolder() throws -> UploadFolder {
        let folder = path + "/request-\(Self.counter.add(1, ordering: .relaxed).newValue)"
        try fileSystem.createDirectory(folder)
        return UploadFolder(path: folder, fileSystem: fileSystem)
    }

    /// Whether no running process holds the folder's lock (taken and released at once when so).
    /// A folder without a lock file is one whose owner died between making it and locking it.
    private func isAbandoned(_ folder: String) -> Bool {
        let lockFile = folder + "/" + Self.lockName
        guard fileSystem.status(lockFile) != nil else { return true }
        guard let lock = try? fileSystem.tryLockExclusive(lockFile) else { return false }
        lock.unlock()
        return true
    }

    private func lastComponent(_ path: String) -> String {
        String(path[path.index(after: path.lastIndex(of: "/") ?? path.startIndex)...])
    }

    /// Holds the folder's lock while the area lives (a server's life); the kernel releases a
    /// `flock` when the process ends, however it ends.
    final class Owner: Sendable {
        private let held = Lock<(any FileLock)?>(nil)

        func hold(_ lockFile: String, fileSystem: any FileSystem) throws {
            try held.withLock { held in
                guard held == nil else { return }
                guard let lock = try fileSystem.tryLockExclusive(lockFile) else {
                    throw FileSystemError(kind: .other, operation: "flock (held by another process)", path: lockFile)
                }
                held = lock
            }
        }
    }
}

/// One request's upload folder; removed (with its files) when the last reference goes.
public final class UploadFolder: Sendable {
    /// The folder.
    public let path: String
    private let files = Atomic<Int>(0)
    private let fileSystem: any FileSystem

    init(path: String, fileSystem: any FileSystem) {
        self.path = path
        self.fileSystem = fileSystem
    }

    /// Creates the next file in the folder, for writing. Written through its own descriptor, a
    /// piece at a time as the body arrives: the file system seam deals in whole files.
    public func makeFile() throws -> StreamingFile {
        try StreamingFile(path: path + "/part-\(files.add(1, ordering: .relaxed).newValue)")
    }

    deinit { try? fileSystem.removeTree(path) }
}

/// A file written piece by piece as a body arrives, hashed on the way (SHA-256); owns its
/// descriptor (`open` in init, `close` in `finish` or deinit) and its write buffer.
///
/// Pieces arrive as libmicrohttpd reads them, about 8 KB each: written one by one, each would be
/// a `write` that ends inside a page, which the kernel zeroes first. Gathered into
/// `bufferBytes`, every write but the last covers whole pages.
public final class StreamingFile {
    /// The size of each `write` but the last.
    public static let bufferBytes = 32 << 10

    private var descriptor: Int32
    private var hasher = SHA256Hasher()
    private let path: String
    /// Bytes gathered and not yet written (allocated at the first append, freed by `finish`).
    private var buffer: UnsafeMutableRawBufferPointer?
    private var buffered = 0
    /// The write that failed: every later call fails with it (the file is incomplete).
    private var failure: (any Error)?
    /// Bytes appended so far.
    public private(set) var byteCount = 0

    init(path: String) throws {
        self.path = path
        descriptor = try Syscall.run("open", path) {
            open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        }
    }

    /// Appends bytes: gathered, and written whenever the buffer fills.
    public func append(_ bytes: UnsafeRawBufferPointer) throws {
        if let failure { throw failure }
        guard bytes.baseAddress != nil, !bytes.isEmpty else { return }
        hasher.update(bytes.assumingMemoryBound(to: UInt8.self))
        byteCount += bytes.count
        let buffer = self.buffer ?? .allocate(byteCount: Self.bufferBytes, alignment: 16)
        self.buffer = buffer
        var taken = 0
        while taken < bytes.count {
            let count = min(bytes.count - taken, buffer.count - buffered)
            UnsafeMutableRawBufferPointer(rebasing: buffer[buffered..<buffered + count])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[taken..<taken + count]))
            buffered += count
            taken += count
            if buffered == buffer.count { try writeBuffered() }
        }
    }

    /// Writes what is gathered (`write`, retried until all is written).
    private func writeBuffered() throws {
        if let failure { throw failure }
        guard let base = buffer?.baseAddress else { return }
        var written = 0
        do {
            while written < buffered {
                written += try Syscall.run("write", path) { write(descriptor, base + written, buffered - written) }
            }
        } catch {
            failure = error
            throw error
        }
        buffered = 0
    }

    /// Writes what is gathered, closes the file and describes it. (Not flushed: an upload is
    /// thrown away after its request.)
    public func finish() throws -> UploadedFile {
        defer { releaseBuffer() }
        try writeBuffered()
        let fd = descriptor
        descriptor = -1
        try Syscall.close(fd, path)
        return UploadedFile(path: path, byteCount: byteCount, sha256: HexEncoding.lowercase(hasher.finalize()))
    }

    private func releaseBuffer() {
        buffer?.deallocate()
        buffer = nil
        buffered = 0
    }

    deinit {
        releaseBuffer()
        if descriptor >= 0 { close(descriptor) }
    }
}

/// A finished upload file: where it is, its size, its SHA-256.
public struct UploadedFile: Sendable, Equatable {
    /// Its path.
    public let path: String
    /// Its size in bytes.
    public let byteCount: Int
    /// Lowercase hex SHA-256 of its bytes.
    public let sha256: String

    /// Describes a finished file.
    public init(path: String, byteCount: Int, sha256: String) {
        self.path = path
        self.byteCount = byteCount
        self.sha256 = sha256
    }
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

    /// Its first `count` bytes (fewer when it is shorter).
    public func prefix(_ count: Int) throws -> [UInt8] {
        switch self {
        case .bytes(let bytes): return Array(bytes.prefix(count))
        case .file(let file): return try PosixFileSystem().readPrefix(file.path, count: count)
        }
    }

    /// All its bytes, when there are at most `limit` of them.
    public func bytes(limit: Int) throws -> [UInt8] {
        switch self {
        case .bytes(let bytes):
            guard bytes.count <= limit else {
                throw FileSystemError(kind: .tooLarge, operation: "read", path: "upload")
            }
            return bytes
        case .file(let file):
            return try PosixFileSystem().readFile(file.path, limit: limit)
        }
    }
}
