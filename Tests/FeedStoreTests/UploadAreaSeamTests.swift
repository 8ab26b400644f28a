import FeedStore
import FeedStoreTesting
import Testing

/// The upload area reaches the disk only through the `FileSystem` seam.
@Suite struct UploadAreaSeamTests {
    /// Over an in-memory file system: the area, its process folder and its lock are made there,
    /// a request's folder is removed when its last reference goes, and a second area on the same
    /// root sweeps a folder whose owner's lock is free but never one that is held.
    @Test func anAreaLivesEntirelyInTheFileSystemItIsGiven() throws {
        let memory = InMemoryFileSystem()
        try memory.createDirectory("/data")
        let area = UploadArea(root: "/data", fileSystem: memory)
        try area.prepare()
        #expect(memory.status(area.path)?.kind == .directory)
        #expect(memory.status(area.path + "/owner.lock") != nil)
        var folder: UploadFolder? = try area.makeFolder()
        let request = try #require(folder?.path)
        #expect(memory.status(request)?.kind == .directory)
        folder = nil
        #expect(memory.status(request) == nil, "removed with its last reference")

        try memory.createDirectory(area.base + "/1-dead")
        let other = UploadArea(root: "/data", fileSystem: memory)
        try other.prepare()
        #expect(memory.status(area.base + "/1-dead") == nil, "a folder without a held lock is swept")
        #expect(memory.status(area.path)?.kind == .directory, "a running area's folder stays")
        withExtendedLifetime(area) {}
    }
}
