import Foundation
import Synchronization
import Testing

@testable import FeedStore

/// The journal's file: lines appended whole, rotated, read back, torn lines skipped.
@Suite struct JournalFileTests {
    private func scratch() -> String {
        let path = FileManager.default.temporaryDirectory.path + "/journal-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func entry(_ n: Int, payload: String? = nil) -> JournalEntry {
        var entry = JournalEntry(at: Int64(1_000 + n), kind: .publish, result: "published", group: "g", status: 201)
        entry.generationId = "gen-\(n)"
        entry.warnings = ["asset-not-found"]
        entry.requestId = "r\(n)"
        if let payload { entry.keep(payload: Array(payload.utf8)) }
        return entry
    }

    @Test func anEntryReadsBackAsItWasWritten() throws {
        let root = scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let file = JournalFile(root: root)
        let written = entry(1, payload: #"{ "quotes" : [ {"text":"one"} ] }"#)
        try file.append(written)
        let read = try file.entries()
        #expect(read == [written])
        #expect(read.first.map { String(decoding: $0.payload ?? [], as: UTF8.self) } == #"{"quotes":[{"text":"one"}]}"#)
        var large = entry(2)
        large.keep(payload: Array(("[" + String(repeating: "1,", count: 40_000) + "1]").utf8))
        #expect(large.payload == nil)
        #expect(large.payloadOmittedBytes == 80_003)
        var broken = entry(3)
        broken.keep(payload: Array("{not json".utf8))
        #expect(broken.payload == nil && broken.payloadOmittedBytes == 9)
    }

    @Test func aCanonicalPayloadIsKeptAsTheSentOneWouldBe() throws {
        for sent in [#"{ "quotes" : [ {"text":"one"} ] }"#, "[" + String(repeating: "1, ", count: 40_000) + "1]"] {
            let bytes = Array(sent.utf8)
            var fromSent = entry(1)
            fromSent.keep(payload: bytes)
            var fromCanonical = entry(1)
            fromCanonical.keep(canonical: try CompactJSON.canonicalize(bytes), sentBytes: bytes.count)
            #expect(fromCanonical == fromSent)
        }
        var tooLargeSent = entry(2)
        tooLargeSent.keep(canonical: Array("[1]".utf8), sentBytes: JournalEntry.maxPayloadBytes * 4 + 1)
        #expect(tooLargeSent.payload == nil && tooLargeSent.payloadOmittedBytes == JournalEntry.maxPayloadBytes * 4 + 1)
    }

    @Test func anAppendMakesTheFolderAgainWhenItWasRemoved() throws {
        let root = scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let file = JournalFile(root: root)
        try file.append(entry(1))
        try FileManager.default.removeItem(atPath: file.directory)
        try file.append(entry(2))
        #expect(try file.entries().map(\.generationId) == ["gen-2"])
    }

    @Test func theFileRotatesAndKeepsTheNewestEntries() throws {
        let root = scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let file = JournalFile(root: root, maxFileBytes: 2_000)
        for n in 0..<100 { try file.append(entry(n)) }
        let read = try file.entries()
        #expect(read.count < 100, "the oldest went with a rotation")
        #expect(read.last?.generationId == "gen-99")
        #expect(read.map(\.at) == read.map(\.at).sorted(), "oldest first")
        let sizes = try ["journal.jsonl", "journal.1.jsonl"].map {
            try FileManager.default.attributesOfItem(atPath: file.directory + "/" + $0)[.size] as? Int ?? 0
        }
        #expect(sizes.allSatisfy { $0 <= 2_000 })
    }

    @Test func aTornLineIsSkippedAndTheRestRead() throws {
        let root = scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let file = JournalFile(root: root)
        try file.append(entry(1))
        let handle = try #require(FileHandle(forWritingAtPath: file.directory + "/journal.jsonl"))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"at":5,"kind":"pub"#.utf8))
        try handle.close()
        try file.append(entry(2))
        #expect(try file.entries().map(\.generationId) == ["gen-1", "gen-2"])
        try file.clear()
        #expect(try file.entries().isEmpty)
    }

    @Test func concurrentAppendsNeverInterleave() throws {
        let root = scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let file = JournalFile(root: root)
        let payload = #"{"text":""# + String(repeating: "x", count: 5_000) + #""}"#
        DispatchQueue.concurrentPerform(iterations: 64) { n in
            try? file.append(entry(n, payload: payload))
        }
        let read = try file.entries()
        #expect(read.count == 64)
        #expect(Set(read.compactMap(\.generationId)).count == 64)
    }
}

/// What a file put where the journal belongs, or a reader, can do to appends.
@Suite struct JournalFileHardeningTests {
    private func scratch() -> String {
        let path = FileManager.default.temporaryDirectory.path + "/journal-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func entry(_ n: Int) -> JournalEntry {
        var entry = JournalEntry(at: Int64(n), kind: .publish, result: "published", group: "g", status: 201)
        entry.keep(payload: Array(#"{"text":"\#(String(repeating: "x", count: 2_000))"}"#.utf8))
        return entry
    }

    @Test func readersNeverMakeAnAppendWaitOrLoseItsEntry() throws {
        let root = scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let file = JournalFile(root: root)
        for n in 0..<4_000 { try file.append(entry(n)) }  // both files full: seconds to parse in a debug build
        let reading = Atomic<Bool>(true)
        let reader = Thread {
            while reading.load(ordering: .relaxed) { _ = try? file.entries() }
        }
        reader.start()
        var failed = 0
        for n in 4_000..<4_050 where (try? file.append(entry(n))) == nil { failed += 1 }
        reading.store(false, ordering: .relaxed)
        #expect(failed == 0)
        let ats = Set(try file.entries().map(\.at))
        #expect((4_000..<4_050).allSatisfy { ats.contains(Int64($0)) })
    }

    @Test func aFIFOInPlaceOfTheJournalIsRefusedAtOnce() throws {
        let root = scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let file = JournalFile(root: root)
        try file.append(entry(0))
        try FileManager.default.removeItem(atPath: file.directory + "/journal.jsonl")
        #expect(mkfifo(file.directory + "/journal.jsonl", 0o644) == 0)
        #expect(throws: FileSystemError.self) { try file.append(entry(1)) }
        let reason = file.reason(FileSystemError(kind: .other, operation: "flock", path: file.directory + "/x"))
        #expect(!reason.contains(root), "a reason names paths below the root only: \(reason)")
    }

    @Test func aFileGrownPastItsBoundByHandIsReadFromItsNewestLines() throws {
        let root = scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let big = JournalFile(root: root, maxFileBytes: 1 << 20)
        for n in 0..<200 { try big.append(entry(n)) }
        let small = JournalFile(root: root, maxFileBytes: 4_000)
        let read = try small.entries()
        #expect(!read.isEmpty)
        #expect(read.last?.at == 199, "the newest entry is read")
        #expect(read.count < 200)
    }
}
