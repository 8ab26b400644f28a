import FeedStore
import Foundation
import Testing

/// The upload area when several servers share one root (as two processes on a simulator's App
/// Group folder do): each has its own folder, and a start removes only what a process that is
/// gone left behind. (Before, every start emptied the whole area: a second server starting
/// deleted the first's uploads in progress, and two starting at once could fail.)
@Suite struct UploadAreaTests {
    @Test func aStartLeavesAnotherLiveServersUploadsAlone() throws {
        let scratch = ScratchDirectory("uploads")
        let first = UploadArea(root: scratch.path)
        try first.prepare()
        let request = try first.makeFolder()
        let file = try request.makeFile()
        try [UInt8](repeating: 7, count: 100).withUnsafeBytes { try file.append($0) }
        _ = try file.finish()

        let second = UploadArea(root: scratch.path)
        try second.prepare()
        #expect(first.path != second.path)
        #expect(FileManager.default.fileExists(atPath: request.path + "/part-1"), "the first server's upload survives")
        #expect(FileManager.default.fileExists(atPath: second.path))
    }

    @Test func aStartRemovesWhatAGoneProcessLeft() throws {
        let scratch = ScratchDirectory("uploads")
        let base = scratch.path + "/.feed-server-uploads"
        // A folder whose owner died after locking (the lock file is there, no one holds it),
        // one whose owner died before locking, and a stray file.
        for folder in ["4242-dead", "4243-early"] {
            try FileManager.default.createDirectory(atPath: base + "/" + folder + "/request-1", withIntermediateDirectories: true)
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: base + "/" + folder + "/request-1/part-1"))
        }
        try Data().write(to: URL(fileURLWithPath: base + "/4242-dead/owner.lock"))
        try Data([9]).write(to: URL(fileURLWithPath: base + "/stray"))

        let area = UploadArea(root: scratch.path)
        try area.prepare()
        let left = try FileManager.default.contentsOfDirectory(atPath: base)
        #expect(left == [String(area.path.split(separator: "/").last ?? "")], "\(left)")
    }
}
