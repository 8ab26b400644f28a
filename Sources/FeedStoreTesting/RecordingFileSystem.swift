import ConcurrencyPrimitives
import FeedStore

/// Wraps a `FileSystem` and records every mutating or flushing operation in order, to prove
/// that files and folders are flushed before the rename that makes them visible.
public final class RecordingFileSystem: FileSystem {
    /// One recorded operation.
    public enum Operation: Equatable, Sendable {
        case createDirectory(String)
        case writeFileDurably(String)
        case syncDirectory(String)
        case rename(String, String)
        case removeTree(String)
        case touch(String)
        case lock(String)
    }

    private let base: any FileSystem
    private let log = Lock<[Operation]>([])

    /// Records the operations sent to `base`.
    public init(wrapping base: any FileSystem) { self.base = base }

    /// The operations so far, oldest first.
    public var operations: [Operation] { log.withLock { $0 } }

    /// Forgets what was recorded so far.
    public func reset() { log.withLock { $0.removeAll() } }

    private func record(_ operation: Operation) { log.withLock { $0.append(operation) } }

    public func readFile(_ path: String, limit: Int) throws -> [UInt8] {
        readHook.withLock { $0 }?(path)
        wholeReadLog.withLock { $0.append(path) }
        return try base.readFile(path, limit: limit)
    }

    private let wholeReadLog = Lock<[String]>([])

    /// The paths read whole so far (`readFile`), oldest first.
    public var wholeReads: [String] { wholeReadLog.withLock { $0 } }

    /// Forgets the whole reads recorded so far.
    public func resetWholeReads() { wholeReadLog.withLock { $0.removeAll() } }

    public func readPrefix(_ path: String, count: Int) throws -> [UInt8] {
        readHook.withLock { $0 }?(path)
        return try base.readPrefix(path, count: count)
    }

    private let readHook = Lock<(@Sendable (String) -> Void)?>(nil)

    /// Runs `hook` with the path before every `readFile` (nil: none), to act in the middle of a read.
    public func beforeReadFile(_ hook: (@Sendable (String) -> Void)?) { readHook.withLock { $0 = hook } }
    public func status(_ path: String) -> FileStatus? {
        statuses.withLock { $0.append(path) }
        return base.status(path)
    }

    private let statuses = Lock<[String]>([])

    /// The paths `status` was asked for since the last `resetStatusCalls()`, oldest first.
    public var statusCalls: [String] { statuses.withLock { $0 } }

    /// Forgets the recorded `status` calls.
    public func resetStatusCalls() { statuses.withLock { $0.removeAll() } }
    public func listDirectory(_ path: String) throws -> [DirectoryEntry] { try base.listDirectory(path) }
    public func openBeneath(_ root: String, _ components: [String]) throws -> OpenedFile {
        try base.openBeneath(root, components)
    }

    public func createDirectory(_ path: String) throws {
        try base.createDirectory(path)
        record(.createDirectory(path))
    }

    public func writeFileDurably(_ path: String, contents: [UInt8]) throws {
        try base.writeFileDurably(path, contents: contents)
        record(.writeFileDurably(path))
    }

    public func copyFileDurably(from source: String, byteCount: Int, to path: String) throws {
        try base.copyFileDurably(from: source, byteCount: byteCount, to: path)
        record(.writeFileDurably(path))
    }

    public func syncDirectory(_ path: String) throws {
        try base.syncDirectory(path)
        record(.syncDirectory(path))
    }

    public func rename(_ source: String, to destination: String) throws {
        try base.rename(source, to: destination)
        record(.rename(source, destination))
    }

    public func removeTree(_ path: String) throws {
        let existed = base.status(path) != nil
        try base.removeTree(path)
        if existed { record(.removeTree(path)) }
    }

    public func touch(_ path: String) throws {
        try base.touch(path)
        record(.touch(path))
    }

    public func lockExclusive(_ path: String) throws -> any FileLock {
        let lock = try base.lockExclusive(path)
        record(.lock(path))
        return lock
    }

    public func tryLockExclusive(_ path: String) throws -> (any FileLock)? {
        guard let lock = try base.tryLockExclusive(path) else { return nil }
        record(.lock(path))
        return lock
    }
}

extension RecordingFileSystem: @unchecked Sendable {}
