/// What `FileSystem.status` reports about a path (without following a final symlink).
public struct FileStatus: Equatable, Hashable, Sendable {
    /// The kinds of entries the store distinguishes.
    public enum Kind: Equatable, Hashable, Sendable { case regular, directory, symbolicLink, other }

    /// File, folder, link or something else.
    public var kind: Kind
    /// Size in bytes.
    public var size: Int
    /// Last modification time, nanoseconds since the epoch.
    public var modificationNanos: Int64
    /// Last status change time, nanoseconds since the epoch (changes on any write or rename).
    public var changeNanos: Int64
    /// Inode number; a rename over a path gives it a new inode.
    public var inode: UInt64

    /// Creates a status value (used by file-system implementations).
    public init(kind: Kind, size: Int, modificationNanos: Int64, changeNanos: Int64, inode: UInt64) {
        self.kind = kind
        self.size = size
        self.modificationNanos = modificationNanos
        self.changeNanos = changeNanos
        self.inode = inode
    }
}

/// One entry of a folder listing.
public struct DirectoryEntry: Equatable, Sendable {
    /// The entry's name (no path).
    public var name: String
    /// Whether it is a real folder (symlinks to folders are not).
    public var isDirectory: Bool

    /// Creates a listing entry.
    public init(name: String, isDirectory: Bool) {
        self.name = name
        self.isDirectory = isDirectory
    }
}

/// An exclusive lock held until `unlock()` (or deinitialisation).
public protocol FileLock: AnyObject, Sendable {
    /// Releases the lock; calling it twice is harmless.
    func unlock()
}

/// Every file-system call FeedStore makes, in one swappable place.
///
/// The POSIX implementation turns errno into `FileSystemError`; tests swap in an in-memory
/// implementation or one that records the order of operations (flush before rename).
public protocol FileSystem: Sendable {
    /// Reads a whole regular file, refusing a symlink as the last component and files over `limit` bytes.
    func readFile(_ path: String, limit: Int) throws -> [UInt8]
    /// Reads at most the first `count` bytes of a regular file (same refusals as `readFile`).
    func readPrefix(_ path: String, count: Int) throws -> [UInt8]
    /// The status of a path, not following a final symlink; nil when it does not exist.
    func status(_ path: String) -> FileStatus?
    /// The entries of a folder, without `.` and `..`.
    func listDirectory(_ path: String) throws -> [DirectoryEntry]
    /// Creates a folder; throws `.alreadyExists` when something is there.
    func createDirectory(_ path: String) throws
    /// Creates a new file with `contents`, flushes it to disk (fsync) and closes it.
    func writeFileDurably(_ path: String, contents: [UInt8]) throws
    /// Creates a new file holding what the file `source` (outside the store: an upload) holds,
    /// exactly `byteCount` bytes, a piece at a time; flushes it (fsync) and closes it.
    func copyFileDurably(from source: String, byteCount: Int, to path: String) throws
    /// Flushes a folder's entries to disk (fsync on the folder), making creations and renames in it durable.
    func syncDirectory(_ path: String) throws
    /// Atomically renames `source` to `destination`, replacing a file there.
    func rename(_ source: String, to destination: String) throws
    /// Removes a file, or a folder and everything in it; never follows symlinks.
    func removeTree(_ path: String) throws
    /// Sets a path's modification time to now (marks when a generation was retired).
    func touch(_ path: String) throws
    /// Takes an exclusive advisory lock on `path` (created when missing), waiting for other holders.
    func lockExclusive(_ path: String) throws -> any FileLock
    /// Takes the same lock only when nobody holds it (never waits); nil when someone does.
    func tryLockExclusive(_ path: String) throws -> (any FileLock)?
    /// Opens the regular file `root/components...` for reading without following any symlink below `root`.
    func openBeneath(_ root: String, _ components: [String]) throws -> OpenedFile
}

extension FileSystem {
    /// Creates a folder unless one already exists; reports whether it was created.
    @discardableResult
    public func ensureDirectory(_ path: String) throws -> Bool {
        // Looked at first: the folder is nearly always there, and one `lstat` costs less than a
        // refused `mkdir` and the `lstat` after it.
        if status(path)?.kind == .directory { return false }
        do {
            try createDirectory(path)
            return true
        } catch let error as FileSystemError where error.kind == .alreadyExists {
            guard status(path)?.kind == .directory else {
                throw FileSystemError(kind: .notADirectory, operation: "mkdir", path: path)
            }
            return false
        }
    }
}
