import ConcurrencyPrimitives
import FeedStore

/// A `FileSystem` kept in memory: the "in-memory storage" test double (WidgetBridge ships one too).
///
/// Counts every write so tests can assert that a deduplicated publish wrote nothing.
public final class InMemoryFileSystem: FileSystem {
    private enum Node {
        case file([UInt8], modifiedNs: Int64, inode: UInt64)
        case directory(modifiedNs: Int64, inode: UInt64)
    }

    private struct State {
        var nodes: [String: Node] = ["/": .directory(modifiedNs: 0, inode: 1)]
        var nextInode: UInt64 = 2
        var writeCount = 0
        var lockedPaths = Set<String>()

        mutating func takeInode() -> UInt64 {
            defer { nextInode += 1 }
            return nextInode
        }
    }

    private let state = Lock(State())
    private let clock: any FeedClock

    /// Creates an empty file system whose timestamps come from `clock`.
    public init(clock: any FeedClock = SystemClock()) {
        self.clock = clock
    }

    /// How many mutating operations (create, write, rename, remove, touch) have run.
    public var writeCount: Int { state.withLock { $0.writeCount } }

    /// Every path present, sorted (for assertions).
    public var allPaths: [String] { state.withLock { $0.nodes.keys.sorted() } }

    /// Replaces a file's bytes in place (to corrupt a generation in a test).
    public func overwrite(_ path: String, with contents: [UInt8]) {
        let now = nowNs
        state.withLock { state in
            guard case .file(_, _, let inode) = state.nodes[normalize(path)] else { return }
            state.nodes[normalize(path)] = .file(contents, modifiedNs: now, inode: inode)
        }
    }

    private var nowNs: Int64 { clock.nowEpochMs() * 1_000_000 }

    public func readPrefix(_ path: String, count: Int) throws -> [UInt8] {
        Array(try readFile(path, limit: .max).prefix(count))
    }

    public func readFile(_ path: String, limit: Int) throws -> [UInt8] {
        try state.withLock { state in
            switch state.nodes[normalize(path)] {
            case .file(let bytes, _, _)?:
                guard bytes.count <= limit else {
                    throw FileSystemError(kind: .tooLarge, operation: "read", path: path)
                }
                return bytes
            case .directory?: throw FileSystemError(kind: .other, operation: "read (not a regular file)", path: path)
            case nil: throw FileSystemError(kind: .notFound, operation: "open", path: path)
            }
        }
    }

    public func status(_ path: String) -> FileStatus? {
        state.withLock { state in
            switch state.nodes[normalize(path)] {
            case .file(let bytes, let modified, let inode)?:
                return FileStatus(
                    kind: .regular, size: bytes.count, modificationNanos: modified, changeNanos: modified, inode: inode)
            case .directory(let modified, let inode)?:
                return FileStatus(
                    kind: .directory, size: 0, modificationNanos: modified, changeNanos: modified, inode: inode)
            case nil:
                return nil
            }
        }
    }

    public func listDirectory(_ path: String) throws -> [DirectoryEntry] {
        try state.withLock { state in
            let directory = normalize(path)
            guard case .directory? = state.nodes[directory] else {
                throw FileSystemError(kind: .notFound, operation: "opendir", path: path)
            }
            let prefix = directory == "/" ? "/" : directory + "/"
            return state.nodes.compactMap { key, node in
                guard key.hasPrefix(prefix), key != directory, !key.dropFirst(prefix.count).contains("/") else {
                    return nil
                }
                if case .directory = node {
                    return DirectoryEntry(name: String(key.dropFirst(prefix.count)), isDirectory: true)
                }
                return DirectoryEntry(name: String(key.dropFirst(prefix.count)), isDirectory: false)
            }
        }
    }

    public func createDirectory(_ path: String) throws {
        let now = nowNs
        try mutate(path, operation: "mkdir") { state, key in
            guard state.nodes[key] == nil else {
                throw FileSystemError(kind: .alreadyExists, operation: "mkdir", path: path)
            }
            state.nodes[key] = .directory(modifiedNs: now, inode: state.takeInode())
        }
    }

    public func writeFileDurably(_ path: String, contents: [UInt8]) throws {
        let now = nowNs
        try mutate(path, operation: "open") { state, key in
            guard state.nodes[key] == nil else {
                throw FileSystemError(kind: .alreadyExists, operation: "open", path: path)
            }
            state.nodes[key] = .file(contents, modifiedNs: now, inode: state.takeInode())
        }
    }

    /// Copies a file of this file system (uploads in a test live here too).
    public func copyFileDurably(from source: String, byteCount: Int, to path: String) throws {
        let contents = try readFile(source, limit: byteCount)
        guard contents.count == byteCount else {
            throw FileSystemError(kind: .other, operation: "copy (the source changed)", path: source)
        }
        try writeFileDurably(path, contents: contents)
    }

    public func syncDirectory(_ path: String) throws {
        guard status(path)?.kind == .directory else {
            throw FileSystemError(kind: .notFound, operation: "fsync", path: path)
        }
    }

    public func rename(_ source: String, to destination: String) throws {
        try state.withLock { state in
            let from = normalize(source)
            let to = normalize(destination)
            guard state.nodes[from] != nil else {
                throw FileSystemError(kind: .notFound, operation: "rename", path: source)
            }
            if case .directory? = state.nodes[to] {
                throw FileSystemError(kind: .alreadyExists, operation: "rename", path: destination)
            }
            for key in state.nodes.keys where key == from || key.hasPrefix(from + "/") {
                state.nodes[to + key.dropFirst(from.count)] = state.nodes.removeValue(forKey: key)
            }
            state.writeCount += 1
        }
    }

    public func removeTree(_ path: String) throws {
        state.withLock { state in
            let key = normalize(path)
            guard state.nodes[key] != nil else { return }
            for candidate in state.nodes.keys where candidate == key || candidate.hasPrefix(key + "/") {
                state.nodes.removeValue(forKey: candidate)
            }
            state.writeCount += 1
        }
    }

    public func touch(_ path: String) throws {
        let now = nowNs
        try state.withLock { state in
            let key = normalize(path)
            switch state.nodes[key] {
            case .file(let bytes, _, let inode)?: state.nodes[key] = .file(bytes, modifiedNs: now, inode: inode)
            case .directory(_, let inode)?: state.nodes[key] = .directory(modifiedNs: now, inode: inode)
            case nil: throw FileSystemError(kind: .notFound, operation: "utimensat", path: path)
            }
            state.writeCount += 1
        }
    }

    /// Copies the file into an unlinked temporary file and returns it open, so callers get a real descriptor.
    public func openBeneath(_ root: String, _ components: [String]) throws -> OpenedFile {
        let path = ([root] + components).joined(separator: "/")
        guard status(path)?.kind == .regular else {
            throw FileSystemError(kind: .notFound, operation: "openat", path: path)
        }
        let bytes = try readFile(path, limit: Int.max)
        var template = Array("/tmp/feedstore-memory-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw FileSystemError(operation: "mkstemp", path: path, errno: errno) }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        return OpenedFile(descriptor: fd, status: status(path)!)
    }

    public func lockExclusive(_ path: String) throws -> any FileLock {
        let key = normalize(path)
        while true {
            let taken = state.withLock { state -> Bool in
                guard !state.lockedPaths.contains(key) else { return false }
                state.lockedPaths.insert(key)
                if state.nodes[key] == nil { state.nodes[key] = .file([], modifiedNs: 0, inode: state.takeInode()) }
                return true
            }
            // A strong capture: the handle lives only while the lock is held, so there is no
            // cycle, and a weak one would give this object a side table that LeakSanitizer
            // reports as leaked for as long as the object lives (docs/testing.md).
            if taken { return InMemoryLock { self.release(key) } }
            Thread.yieldNow()
        }
    }

    public func tryLockExclusive(_ path: String) throws -> (any FileLock)? {
        let key = normalize(path)
        let taken = try state.withLock { state throws -> Bool in
            // As `open(O_CREAT)`: the file is made only in a folder that exists.
            guard case .directory? = state.nodes[parentPath(key)] else {
                throw FileSystemError(kind: .notFound, operation: "open", path: path)
            }
            guard !state.lockedPaths.contains(key) else { return false }
            state.lockedPaths.insert(key)
            if state.nodes[key] == nil { state.nodes[key] = .file([], modifiedNs: 0, inode: state.takeInode()) }
            return true
        }
        return taken ? InMemoryLock { self.release(key) } : nil
    }

    private func release(_ key: String) {
        _ = state.withLock { $0.lockedPaths.remove(key) }
    }

    private func mutate(_ path: String, operation: String, _ body: (inout State, String) throws -> Void) throws {
        try state.withLock { state in
            let key = normalize(path)
            let parent = parentPath(key)
            guard case .directory? = state.nodes[parent] else {
                throw FileSystemError(kind: .notFound, operation: operation, path: path)
            }
            try body(&state, key)
            state.writeCount += 1
        }
    }

    private func normalize(_ path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        return "/" + parts.joined(separator: "/")
    }

    private func parentPath(_ key: String) -> String {
        guard let slash = key.lastIndex(of: "/"), slash != key.startIndex else { return "/" }
        return String(key[..<slash])
    }
}

extension InMemoryFileSystem: @unchecked Sendable {}

private final class InMemoryLock: FileLock, @unchecked Sendable {
    private let release: Lock<(@Sendable () -> Void)?>

    init(release: @escaping @Sendable () -> Void) { self.release = Lock(release) }

    func unlock() {
        let action = release.withLock { current -> (@Sendable () -> Void)? in
            defer { current = nil }
            return current
        }
        action?()
    }

    deinit { unlock() }
}

/// Lets a spinning lock waiter give up its time slice.
enum Thread {
    static func yieldNow() {
        #if canImport(Glibc)
        sched_yield()
        #endif
    }
}
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
