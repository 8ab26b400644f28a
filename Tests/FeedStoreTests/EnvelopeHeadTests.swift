import FeedStoreTesting
import Foundation
import Testing

@testable import FeedStore

/// Reads that filter by schema version learn a generation's version from its first bytes and
/// remember it; listings skip hidden folders, as WidgetBridge's reader does.
@Suite struct EnvelopeHeadTests {
    /// The declared version is found only where the prefix shows it plainly.
    @Test func theHeadTellsTheVersionWhenItComesFirst() {
        #expect(EnvelopeHead.schemaVersion(in: bytes(#"{"schemaVersion":3,"payload":{}}"#)) == 3)
        #expect(EnvelopeHead.schemaVersion(in: bytes(#" { "schemaVersion" : -2 , "x": 1}"#)) == -2)
        let later = #"{"fingerprint":"ab","nested":{"schemaVersion":9,"a":[1,{"b":"}\""}]},"schemaVersion":4}"#
        #expect(EnvelopeHead.schemaVersion(in: bytes(later)) == 4, "steps over nested values and strings")
        #expect(EnvelopeHead.schemaVersion(in: bytes(#"{"schemaVersion":1.0}"#)) == nil, "not an integer")
        #expect(EnvelopeHead.schemaVersion(in: bytes(#"{"schema\u0056ersion":1}"#)) == nil, "an escaped name")
        #expect(EnvelopeHead.schemaVersion(in: bytes(#"{"payload":"longer than the pref"#)) == nil, "cut short")
        #expect(EnvelopeHead.schemaVersion(in: bytes(#"[1]"#)) == nil)
        #expect(EnvelopeHead.schemaVersion(in: bytes(#"{"a":1}"#)) == nil, "no such member")
    }

    /// A read for a version nobody published reads each candidate's first bytes once, then only
    /// checks their status: no generation is read whole, however often it is asked.
    @Test func aReadForAnUnpublishedVersionReadsNoGenerationWhole() throws {
        let temporary = TemporaryDirectory()
        let recorder = RecordingFileSystem(wrapping: PosixFileSystem())
        let store = FeedStore(root: temporary.path + "/root", fileSystem: recorder)
        let large = "[" + Array(repeating: "\"x\"", count: 50_000).joined(separator: ",") + "]"
        _ = try store.publish(group: "g", payloadJSON: bytes(large), schemaVersion: 1)
        _ = try store.publish(group: "g", payloadJSON: bytes("[2]"), schemaVersion: 1)
        recorder.resetWholeReads()
        for version in 2..<12 {
            #expect(store.read(group: "g", schemaVersion: version).served == nil)
        }
        #expect(!recorder.wholeReads.contains { $0.hasSuffix("feed.json") }, "\(recorder.wholeReads)")
        #expect(store.read(group: "g", schemaVersion: 1).served != nil, "the right version is still served")
    }

    /// Listing a group's generations reads each `feed.json` whole at most once while its file
    /// status holds, whatever schema versions the listings ask for; the states stay right.
    @Test func listingGenerationsReadsEachFeedOnceWhateverTheVersion() throws {
        let temporary = TemporaryDirectory()
        let recorder = RecordingFileSystem(wrapping: PosixFileSystem())
        let store = FeedStore(root: temporary.path + "/root", fileSystem: recorder)
        let large = "[" + Array(repeating: "\"x\"", count: 50_000).joined(separator: ",") + "]"
        _ = try store.publish(group: "g", payloadJSON: bytes(large), schemaVersion: 1)
        let newest = try store.publish(group: "g", payloadJSON: bytes("[2]"), schemaVersion: 2)
        recorder.resetWholeReads()
        let all = try #require(store.generations(group: "g"))
        #expect(all.map(\.state) == [.served, .kept])
        #expect(all.first?.id == newest.generationId)
        for version in 1..<12 {
            let states = try #require(store.generations(group: "g", schemaVersion: version)).map(\.state)
            let expected: [GenerationStatus.State] =
                switch version {
                case 1: [.wrongSchema, .served]
                case 2: [.served, .wrongSchema]
                default: [.wrongSchema, .wrongSchema]
                }
            #expect(states == expected, "schemaVersion \(version)")
        }
        let feedReads = recorder.wholeReads.filter { $0.hasSuffix("feed.json") }
        #expect(feedReads.count <= 2, "each generation read once: \(feedReads)")
        #expect(try #require(store.generations(group: "g", schemaVersion: 3)).first?.generation?.schemaVersion == 2)
    }

    /// A generation rewritten in place (new status) is read again, not answered from memory.
    @Test func aChangedFileIsReadAgain() throws {
        let memo = EnvelopeMemo(capacity: 4096)
        let status = FileStatus(kind: .regular, size: 10, modificationNanos: 1, changeNanos: 1, inode: 7)
        memo.remember(.declared(1), "/g/feed.json", status: status)
        #expect(memo.value("/g/feed.json", status: status) == .declared(1))
        var changed = status
        changed.inode = 8
        #expect(memo.value("/g/feed.json", status: changed) == nil)
    }

    /// Without a usable pointer, a hidden generation folder is not a candidate.
    @Test func aHiddenGenerationIsNeverListed() throws {
        let temporary = TemporaryDirectory()
        let root = temporary.path + "/root"
        let store = FeedStore(root: root)
        _ = try store.publish(group: "g", payloadJSON: bytes("[1]"))
        let generations = root + "/g/generations"
        let served = try #require(store.read(group: "g").served)
        try FileManager.default.copyItem(atPath: generations + "/" + served.id, toPath: generations + "/.hidden")
        try FileManager.default.removeItem(atPath: generations + "/" + served.id)
        try FileManager.default.removeItem(atPath: root + "/g/current.json")
        #expect(store.read(group: "g").served == nil, "only the hidden copy is left")
    }
}
