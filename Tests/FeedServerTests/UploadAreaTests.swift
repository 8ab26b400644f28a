import ConcurrencyPrimitives
import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

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

    /// A start waits while another server is making its folder: sweeping and making a folder
    /// take turns on `prepare.lock`, or the start would find that folder between its making and
    /// its lock, take it for a dead process's and remove it (a CI run: "owner.lock: No such file
    /// or directory"). Here the test plays the other server, holding the turn with a folder made
    /// and not yet locked (a `flock` belongs to each open of the file, so one process can play two).
    @Test func aStartWaitsWhileAnotherServerMakesItsFolder() throws {
        let scratch = ScratchDirectory("uploads")
        let base = scratch.path + "/.feed-server-uploads"
        let other = base + "/4244-starting"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        let turn = open(base + "/prepare.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(turn >= 0 && flock(turn, LOCK_EX) == 0)

        let prepared = Lock(false)
        let area = UploadArea(root: scratch.path)
        try DetachedThread.start {
            try? area.prepare()
            prepared.withLock { $0 = true }
        }
        usleep(300_000)
        #expect(!prepared.withLock { $0 }, "the start waits for its turn")
        #expect(FileManager.default.fileExists(atPath: other), "the other server's folder is left alone")

        // The other server locks its folder and ends its turn: the start goes on, and keeps it.
        let owner = open(other + "/owner.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(owner >= 0 && flock(owner, LOCK_EX | LOCK_NB) == 0)
        close(turn)
        try waitUntil(seconds: 5) { prepared.withLock { $0 } }
        #expect(FileManager.default.fileExists(atPath: other + "/owner.lock"), "still there once the start is done")
        #expect(FileManager.default.fileExists(atPath: area.path + "/owner.lock"))
        close(owner)
    }

    @Test func aStartRemovesWhatAGoneProcessLeft() throws {
        let scratch = ScratchDirectory("uploads")
        let base = scratch.path + "/.feed-server-uploads"
        // A folder whose owner died after locking (the lock file is there, no one holds it),
        // one whose owner died before locking, and a stray file.
        for folder in ["4242-dead", "4243-early"] {
            try FileManager.default.createDirectory(
                atPath: base + "/" + folder + "/request-1", withIntermediateDirectories: true)
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: base + "/" + folder + "/request-1/part-1"))
        }
        try Data().write(to: URL(fileURLWithPath: base + "/4242-dead/owner.lock"))
        try Data([9]).write(to: URL(fileURLWithPath: base + "/stray"))

        let area = UploadArea(root: scratch.path)
        try area.prepare()
        let left = try FileManager.default.contentsOfDirectory(atPath: base)
        // Its own folder, and the file whose lock starts take turns on (never removed).
        #expect(
            left.sorted() == [String(area.path.split(separator: "/").last ?? ""), "prepare.lock"].sorted(), "\(left)")
    }
}
