import FeedStore
import FeedStoreTesting
import Testing

/// The flush order of a publish, recorded through the swappable file-system layer over real files.
@Suite struct DurabilityTests {
    @Test func everythingIsFlushedBeforeTheRenameThatMakesItVisible() throws {
        let temporary = TemporaryDirectory()
        let recorder = RecordingFileSystem(wrapping: PosixFileSystem())
        let clock = FixedClock(epochMs: 1_764_450_000_000)
        let root = temporary.path + "/root"
        let store = FeedStore(root: root, fileSystem: recorder, clock: clock)
        _ = try store.publish(group: "g", payloadJSON: bytes("[0]"))
        recorder.reset()
        clock.advance(byMs: 1000)
        let result = try store.publish(
            group: "g", payloadJSON: bytes("[1]"),
            assets: [AssetInput(name: "a.png", bytes: [1]), AssetInput(name: "b.png", bytes: [2])])
        let id = result.generationId
        let group = root + "/g"
        let tmp = "\(group)/generations/\(id).tmp"
        let expected: [RecordingFileSystem.Operation] = [
            .lock("\(group)/publish.lock"),
            .createDirectory(tmp),
            .createDirectory("\(tmp)/assets"),
            .writeFileDurably("\(tmp)/assets/a.png"),
            .writeFileDurably("\(tmp)/assets/b.png"),
            .syncDirectory("\(tmp)/assets"),
            .writeFileDurably("\(tmp)/feed.json"),
            .syncDirectory(tmp),
            .rename(tmp, "\(group)/generations/\(id)"),
            .syncDirectory("\(group)/generations"),
            .writeFileDurably("\(group)/current.json.tmp"),
            .rename("\(group)/current.json.tmp", "\(group)/current.json"),
            .syncDirectory(group),
        ]
        #expect(Array(recorder.operations.prefix(expected.count)) == expected)
    }

    @Test func aNewGroupFlushesTheFoldersItCreates() throws {
        let temporary = TemporaryDirectory()
        let recorder = RecordingFileSystem(wrapping: PosixFileSystem())
        let root = temporary.path + "/root"
        _ = try FeedStore(root: root, fileSystem: recorder).publish(group: "g", payloadJSON: bytes("[0]"))
        let operations = recorder.operations
        let created = operations.firstIndex(of: .createDirectory(root + "/g"))!
        let synced = operations.firstIndex(of: .syncDirectory(root))!
        #expect(created < synced)
        #expect(operations.contains(.syncDirectory(temporary.path)))
        #expect(
            operations.firstIndex(of: .createDirectory(root + "/g/generations"))! < operations.firstIndex(
                of: .syncDirectory(root + "/g"))!)
    }
}
