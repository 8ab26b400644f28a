#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension FeedStore {
    /// Creates the root folder (and missing parents) and proves it writable by creating and
    /// removing a probe file; throws the first failure so the server can refuse to start.
    public func prepareRoot() throws(FileSystemError) {
        var path = root.hasPrefix("/") ? "" : "."
        for component in root.split(separator: "/") {
            path += "/" + component
            do { try fileSystem.ensureDirectory(path) } catch {
                throw error as? FileSystemError ?? FileSystemError(kind: .other, operation: "mkdir", path: path)
            }
        }
        // A name of this process's own: two servers starting on one root must not remove each
        // other's probe (the second would then fail its own removal and refuse to start).
        let probe = GroupLayout(
            root: root, group: ".feed-server-write-probe-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        ).directory
        do {
            try fileSystem.writeFileDurably(probe, contents: [])
            try fileSystem.removeTree(probe)
        } catch {
            throw error as? FileSystemError ?? FileSystemError(kind: .other, operation: "write probe", path: probe)
        }
    }
}
