import ConcurrencyPrimitives

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The journal on disk: `<root>/.feed-server-journal/journal.jsonl`, one `JournalEntry` per line,
/// and the previous file `journal.1.jsonl` once it passed `maxFileBytes`. Every process on the
/// root (servers, the offline CLI) appends to the same files, each line with one `write` on an
/// `O_APPEND` descriptor under the folder's `flock`, so lines never interleave and a rotation is
/// seen by all. Lines are not flushed one by one: a crash of the process loses nothing written,
/// a power loss may lose the last entries (the generations themselves are durable).
public struct JournalFile: Sendable {
    /// The store's root the journal is kept under.
    public let root: String
    /// The journal's folder.
    public let directory: String
    /// The size past which the current file becomes the previous one.
    public let maxFileBytes: Int
    /// The files this process keeps open to append (shared by the copies of this value).
    let appender = JournalAppender()
    /// How long an append or a read waits for another process's hold of the lock.
    static let lockWaitMs: Int64 = 1_000

    /// The folder's name under the root: hidden, so no reader takes it for a group.
    public static let folderName = ".feed-server-journal"

    /// The journal of the store at `root`, rotated at `maxFileBytes` (two files are kept).
    public init(root: String, maxFileBytes: Int = 4 << 20) {
        self.root = root
        directory = (root.hasSuffix("/") ? root : root + "/") + Self.folderName
        self.maxFileBytes = maxFileBytes
    }

    var current: String { directory + "/journal.jsonl" }
    var previous: String { directory + "/journal.1.jsonl" }
    var lockFile: String { directory + "/journal.lock" }

    /// Makes the journal's folder if it is missing: a server keeping a journal does so at start,
    /// so the offline CLI, which records only into a journal a server keeps, records its first
    /// publishes on a fresh root too.
    public func prepare() throws {
        if mkdir(directory, 0o755) != 0 && errno != EEXIST {
            throw FileSystemError(operation: "mkdir", path: directory, errno: errno)
        }
    }

    /// Why the journal failed, in words a client may read: paths relative to the root.
    public func reason(_ error: any Error) -> String {
        (error as? FileSystemError).map { "\($0.relativized(to: root))" } ?? "\(error)"
    }

    /// Appends `entry` as one line, rotating first when the line would take the current file
    /// past `maxFileBytes`. Throws when the lock is held past `lockWaitMs` or the disk refuses.
    public func append(_ entry: JournalEntry) throws {
        try appender.append(entry.line + [0x0A], to: self)
    }

    /// The current file for appending and its status (the size, read once): never waits (a FIFO
    /// put there opens at once) and must be a regular file, or a write could block with the lock held.
    func openForAppend() throws -> (descriptor: Int32, status: stat) {
        let fd = try Syscall.run("open", current) {
            open(current, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o644)
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            try? Syscall.close(fd, current)
            throw FileSystemError(kind: .other, operation: "append (not a regular file)", path: current)
        }
        return (fd, info)
    }

    /// Every entry in both files, oldest first; lines that are not entries (a line torn by a
    /// crash) are skipped. The files' bytes are copied under the lock (at most `maxFileBytes` and a
    /// line each: the newest of a file grown past that by hand) and parsed after it, so an append
    /// never waits for a parse.
    public func entries() throws -> [JournalEntry] {
        let files = try underLock { try [previous, current].compactMap { try read($0) } }
        var entries: [JournalEntry] = []
        for bytes in files {
            for line in bytes.split(separator: 0x0A) {
                if let entry = JournalEntry(line: line) { entries.append(entry) }
            }
        }
        return entries
    }

    /// Removes both files (a test's set-up).
    public func clear() throws {
        try underLock {
            for path in [current, previous] where unlink(path) != 0 && errno != ENOENT {
                throw FileSystemError(operation: "unlink", path: path, errno: errno)
            }
        }
    }

    /// A regular file's bytes (up to `maxFileBytes` and a line), nil when there is none.
    private func read(_ path: String) throws -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw FileSystemError(operation: "open", path: path, errno: errno)
        }
        defer { try? Syscall.close(fd, path) }
        var info = stat()
        _ = try Syscall.run("fstat", path) { fstat(fd, &info) }
        // A FIFO or a device in its place: unavailable, as a symbolic link is (never "empty").
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw FileSystemError(kind: .other, operation: "read (not a regular file)", path: path)
        }
        let limit = maxFileBytes + JournalEntry.maxPayloadBytes * 2
        let size = Int(info.st_size)
        // The newest lines of a file grown past its bound (by hand): its end, from a line start.
        let start = max(0, size - limit)
        var bytes = [UInt8](repeating: 0, count: size - start)
        var filled = 0
        while filled < bytes.count {
            let got = try bytes.withUnsafeMutableBytes { buffer in
                try Syscall.run("pread", path) {
                    pread(fd, buffer.baseAddress! + filled, buffer.count - filled, off_t(start + filled))
                }
            }
            if got == 0 { break }
            filled += got
        }
        let read = bytes.prefix(filled)
        guard start > 0, let newline = read.firstIndex(of: 0x0A) else { return Array(read) }
        return Array(read[(newline + 1)...])
    }

    /// Runs `body` holding the journal's lock, made with its folder when missing.
    private func underLock<T>(_ body: () throws -> T) throws -> T {
        let deadline = Self.lockDeadline().monotonicNanos
        let fd = try openLockFile()
        defer { try? Syscall.close(fd, lockFile) }
        try waitForLock(fd, until: deadline)
        return try body()
    }

    /// The lock file, opened (made with its folder when missing).
    func openLockFile() throws -> Int32 {
        func openLock() throws -> Int32 {
            try Syscall.run("open", lockFile) { open(lockFile, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644) }
        }
        do {
            return try openLock()
        } catch let error as FileSystemError where error.kind == .notFound {
            // The folder went (or never was): made again, then the lock file in it.
            try prepare()
            return try openLock()
        }
    }

    /// When a wait for the lock that starts now gives up: `lockWaitMs` from now, on the monotonic
    /// clock and on the wall clock (which `pthread_mutex_timedlock` takes).
    static func lockDeadline() -> (monotonicNanos: Int64, wallClock: timespec) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let wait = lockWaitMs &* 1_000_000
        let nanos = Int(now.tv_nsec) &+ Int(wait % 1_000_000_000)
        let wallClock = timespec(
            tv_sec: now.tv_sec &+ Int(wait / 1_000_000_000) &+ nanos / 1_000_000_000, tv_nsec: nanos % 1_000_000_000)
        return (MonotonicClock.nanos() &+ wait, wallClock)
    }

    /// Takes the lock on the lock file `fd`, waiting until `deadline` (monotonic nanoseconds) at
    /// most for another holder (`flock` has no timed wait, so this polls).
    func waitForLock(_ fd: Int32, until deadline: Int64) throws {
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR, MonotonicClock.nanos() < deadline else {
                throw FileSystemError(operation: "flock", path: lockFile, errno: code)
            }
            usleep(1_000)
        }
    }
}
