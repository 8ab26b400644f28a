import Synchronization

/// How many changing calls a `WriteCountingFileSystem` has made: a store compares it with the
/// count a cached answer was last checked at, so writes by this process are seen at once without
/// a system call (`FeedStore.isCurrent`).
public final class WriteCounter: Sendable {
    private let count = Atomic<Int>(0)

    public init() {}

    /// Calls that changed (or may have changed) something so far.
    public var value: Int { count.load(ordering: .acquiring) }

    func increment() { count.add(1, ordering: .releasing) }
}

/// Forwards every call to `base` and counts those that change the disk (create, write, rename,
/// remove, touch), after they return or throw (a failed call may have changed something too).
struct WriteCountingFileSystem: FileSystem {
    let base: any FileSystem
    let writes: WriteCounter

    func readFile(_ path: String, limit: Int) throws -> [UInt8] { try base.readFile(path, limit: limit) }
    func readPrefix(_ path: String, count: Int) throws -> [UInt8] { try base.readPrefix(path, count: count) }
    func status(_ path: String) -> FileStatus? { base.status(path) }
    func listDirectory(_ path: String) throws -> [DirectoryEntry] { try base.listDirectory(path) }
    func syncDirectory(_ path: String) throws { try base.syncDirectory(path) }
    func lockExclusive(_ path: String) throws -> any FileLock { try base.lockExclusive(path) }
    func tryLockExclusive(_ path: String) throws -> (any FileLock)? { try base.tryLockExclusive(path) }
    func openBeneath(_ root: String, _ components: [String]) throws -> OpenedFile {
        try base.openBeneath(root, components)
    }

    func createDirectory(_ path: String) throws {
        defer { writes.increment() }
        try base.createDirectory(path)
    }

    func writeFileDurably(_ path: String, contents: [UInt8]) throws {
        defer { writes.increment() }
        try base.writeFileDurably(path, contents: contents)
    }

    func copyFileDurably(from source: String, byteCount: Int, to path: String) throws {
        defer { writes.increment() }
        try base.copyFileDurably(from: source, byteCount: byteCount, to: path)
    }

    func rename(_ source: String, to destination: String) throws {
        defer { writes.increment() }
        try base.rename(source, to: destination)
    }

    func removeTree(_ path: String) throws {
        defer { writes.increment() }
        try base.removeTree(path)
    }

    func touch(_ path: String) throws {
        defer { writes.increment() }
        try base.touch(path)
    }
}
