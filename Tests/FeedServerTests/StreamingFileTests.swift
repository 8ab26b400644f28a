import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// An upload file gathers the body's small pieces into whole-page writes, and stores and hashes
/// exactly the bytes appended.
@Suite struct StreamingFileTests {
    /// `write` calls this thread has made (`/proc/thread-self/io`).
    private func writeCalls() throws -> Int {
        let text = try String(contentsOfFile: "/proc/thread-self/io", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("syscw:") })
        return try #require(Int(line.dropFirst("syscw:".count).trimmingCharacters(in: .whitespaces)))
    }

    private func uploadFolder(in scratch: ScratchDirectory) throws -> UploadFolder {
        let area = UploadArea(root: scratch.path)
        try area.prepare()
        return try area.makeFolder()
    }

    private func bytes(_ count: Int, seed: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &* 7 &+ ($0 >> 8)) }
    }

    @Test func piecesAsLibmicrohttpdReadsThemAreWrittenInWholeBuffers() throws {
        let scratch = ScratchDirectory("streaming")
        let folder = try uploadFolder(in: scratch)
        let file = try folder.makeFile()
        // 100 pieces of 7,961 bytes: what libmicrohttpd hands over from its read buffer.
        let pieces = (0..<100).map { bytes(7_961, seed: $0) }
        let before = try writeCalls()
        for piece in pieces { try piece.withUnsafeBytes { try file.append($0) } }
        let uploaded = try file.finish()
        let writes = try writeCalls() - before
        let total = pieces.reduce(0) { $0 + $1.count }
        let whole = (total + StreamingFile.bufferBytes - 1) / StreamingFile.bufferBytes
        #expect(writes == whole, "\(writes) writes for \(total) bytes")
        let stored = try [UInt8](Data(contentsOf: URL(fileURLWithPath: uploaded.path)))
        #expect(stored == pieces.flatMap { $0 })
        #expect(uploaded.byteCount == total && uploaded.sha256 == SHA256Hash.hex(stored))
    }

    @Test func emptyLargeAndBoundaryCrossingPiecesAreStoredAsAppended() throws {
        let scratch = ScratchDirectory("streaming-sizes")
        let folder = try uploadFolder(in: scratch)
        let buffer = StreamingFile.bufferBytes
        let sizes = [0, 1, buffer - 1, 0, buffer, 3 * buffer + 5, 2, buffer - 2]
        let pieces = sizes.enumerated().map { bytes($1, seed: $0) }
        let file = try folder.makeFile()
        for piece in pieces { try piece.withUnsafeBytes { try file.append($0) } }
        let uploaded = try file.finish()
        let stored = try [UInt8](Data(contentsOf: URL(fileURLWithPath: uploaded.path)))
        #expect(stored == pieces.flatMap { $0 } && uploaded.sha256 == SHA256Hash.hex(stored))
        let empty = try folder.makeFile().finish()
        #expect(empty.byteCount == 0 && empty.sha256 == SHA256Hash.hex([]))
        // One dropped unfinished gives its buffer and descriptor back (AddressSanitizer's leak check).
        let dropped = try folder.makeFile()
        try bytes(100, seed: 9).withUnsafeBytes { try dropped.append($0) }
    }
}
