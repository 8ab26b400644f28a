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

    @Test func aRotationByAnotherProcessIsFollowed() throws {
        let root = scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        // Two values with files of their own, as two processes on one root have.
        let server = JournalFile(root: root, maxFileBytes: 2_000)
        let cli = JournalFile(root: root, maxFileBytes: 2_000)
        try server.append(entry(0))
        var n = 1
        while !FileManager.default.fileExists(atPath: cli.directory + "/journal.1.jsonl") {
            try cli.append(entry(n))
            n += 1
        }
        try server.append(entry(n))
        // Kept open from before the rotation, the server's descriptor names journal.1.jsonl now.
        let current = try String(contentsOfFile: server.directory + "/journal.jsonl", encoding: .utf8)
        #expect(current.contains(#""generationId":"gen-\#(n)""#))
        #expect(try server.entries().last?.generationId == "gen-\(n)")
    }

    @Test func aClearedOrRemovedJournalIsMadeAgainByTheNextAppend() throws {
        let root = scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let file = JournalFile(root: root)
        try file.append(entry(1))
        try file.clear()
        try file.append(entry(2))
        #expect(try file.entries().map(\.generationId) == ["gen-2"])
        // A lock file removed while kept open locks nobody out: the next append makes it again.
        try FileManager.default.removeItem(atPath: file.directory + "/journal.lock")
        try file.append(entry(3))
        #expect(FileManager.default.fileExists(atPath: file.directory + "/journal.lock"))
        #expect(try file.entries().map(\.generationId) == ["gen-2", "gen-3"])
    }

    @Test func theFilesKeptOpenAreClosedWithTheLastCopy() throws {
        let root = scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        // This process's descriptors open on files under `root` (other tests run beside this one);
        // /proc names them by their resolved paths.
        let resolvedPointer = try #require(realpath(root, nil))
        let resolved = String(cString: resolvedPointer)
        free(resolvedPointer)
        func openBelowRoot() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap {
                try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)
            }.filter { $0.hasPrefix(resolved + "/") }.sorted()
        }
        do {
            let file = JournalFile(root: root)
            let copy = file
            try file.append(entry(1))
            try copy.append(entry(2))
            let folder = resolved + "/" + JournalFile.folderName
            #expect(try openBelowRoot() == [folder + "/journal.jsonl", folder + "/journal.lock"])
        }
        #expect(try openBelowRoot().isEmpty)
    }

    @Test func aFailedAppendLeavesTheLockFreeAndTheNextOneWrites() throws {
        let root = scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let file = JournalFile(root: root)
        try file.append(entry(1))
        // A folder where the current file belongs: the append fails after taking the lock.
        try FileManager.default.moveItem(atPath: file.current, toPath: file.directory + "/saved")
        try FileManager.default.createDirectory(atPath: file.current, withIntermediateDirectories: false)
        #expect(throws: (any Error).self) { try file.append(entry(2)) }
        let lock = open(file.lockFile, O_RDWR | O_CLOEXEC)
        defer { close(lock) }
        #expect(flock(lock, LOCK_EX | LOCK_NB) == 0, "nobody holds the lock after the failure")
        flock(lock, LOCK_UN)
        try FileManager.default.removeItem(atPath: file.current)
        try FileManager.default.moveItem(atPath: file.directory + "/saved", toPath: file.current)
        try file.append(entry(3))
        #expect(try file.entries().map(\.generationId) == ["gen-1", "gen-3"])
    }

    /// Appends of one process that find another process holding the lock each give up after their
    /// own wait, side by side, not one after another.
    @Test func appendsBehindAnotherProcessesLockWaitSideBySide() throws {
        let root = scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let file = JournalFile(root: root)
        try file.append(entry(0))
        let lock = open(file.lockFile, O_RDWR | O_CLOEXEC)
        defer { close(lock) }
        #expect(flock(lock, LOCK_EX) == 0)
        let started = Date()
        let failed = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 3) { n in
            if (try? file.append(entry(n + 1))) == nil { failed.add(1, ordering: .relaxed) }
        }
        let waited = Date().timeIntervalSince(started)
        #expect(failed.load(ordering: .relaxed) == 3)
        // Each waits JournalFile.lockWaitMs (1 s); one after another would take 3 s.
        #expect(waited < 2.5, "waited \(waited) s")
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
