import FeedArchive
import FeedStore

@testable import FeedServerKit

/// Tar archives through libarchive (`TarReader`) and `ArchiveUnpacker.unpack`, the checks a
/// `PUT /feeds/{group}/archive` body goes through before anything is published, its refusals
/// judged as the problems the route sends.
///
/// Input byte 0, lowest bit clear: the rest describes entries of the seed layout (split on 0xFF:
/// a selector byte, then the entry's bytes), written with `TarWriter`. Set: the rest is the tar.
enum ArchiveTarget {
    static let target = FuzzTarget(
        name: "archive",
        summary: "tar bodies through libarchive into ArchiveUnpacker.unpack: an archive TarWriter wrote from "
            + "layout entries unpacks to exactly those entries (payload, asset names and bytes, in order) or is "
            + "refused for the limit it breaks (413) or a missing payload.json (400); any bytes unpack to a payload "
            + "plus unique safe asset names within the entry and byte limits and never to more bytes than the tar "
            + "itself (no sparse hole is filled), or to a 400/413 problem.",
        check: check)

    static let limits = ArchiveLimits(maxEntries: 4, maxBytes: 4096, maxPayloadBytes: 1024)
    static let assetNames = ["a.png", "b.jpg", "q1.jpeg", "x", "a.png"]

    static func check(_ input: [UInt8]) throws(PropertyViolation) {
        if let mode = input.first, mode & 1 == 1 {
            try checkRaw(Array(input.dropFirst()))
        } else {
            try checkWritten(Array(input.dropFirst()))
        }
    }

    private static func checkRaw(_ bytes: [UInt8]) throws(PropertyViolation) {
        guard let reader = try? TarReader(bytes: bytes) else { return }
        switch unpack(reader) {
        case .success(let archive):
            let names = archive.assets.map(\.name)
            try expect(
                Set(names).count == names.count, "asset names are unique", observed: "\(names) for \(shown(bytes))")
            try expect(
                names.allSatisfy(SafeName.isSafe), "asset names are safe", observed: "\(names) for \(shown(bytes))")
            try expect(
                names.count + 1 <= limits.maxEntries, "never more entries than --max-parts",
                observed: "\(names.count) assets")
            let total = archive.assets.reduce(archive.payload.count) { $0 + $1.source.byteCount }
            try expect(
                total <= limits.maxBytes, "never more unpacked bytes than --max-body-bytes", observed: "\(total)")
            try expect(
                total <= bytes.count, "never more unpacked bytes than the archive brought",
                observed: "\(total) from \(bytes.count)")
            try expect(
                archive.payload.count <= limits.maxPayloadBytes, "payload.json within --max-payload-bytes",
                observed: "\(archive.payload.count)")
        case .failure(let problem):
            try expect(
                [400, 413].contains(problem.status), "a refused archive is a 400 or 413",
                observed: "\(problem.status) for \(shown(bytes))")
            try expect(!problem.detail.isEmpty, "a refusal says why")
        }
    }

    /// The unpacked archive in memory, or the problem `PUT /feeds/{group}/archive` answers.
    private static func unpack(_ reader: TarReader) -> Result<UnpackedArchive, Problem> {
        do { return .success(try ArchiveUnpacker.unpack(reader, limits: limits, assets: MemoryAssetSpool())) } catch {
            return .failure(Problem(error))
        }
    }

    /// An entry as generated: its path in the archive and its bytes.
    struct Entry {
        var path: String
        var bytes: [UInt8]
    }

    private static func entries(from bytes: [UInt8]) -> [Entry] {
        var seen = Set<String>()
        return bytes.split(separator: 0xFF, omittingEmptySubsequences: false).compactMap { piece in
            guard let selector = piece.first else { return nil }
            let path = selector % 4 == 0 ? "payload.json" : "assets/" + assetNames[Int(selector / 4) % assetNames.count]
            // A name twice is a 400 of its own; generated archives name each entry once.
            guard seen.insert(path).inserted else { return nil }
            return Entry(path: path, bytes: Array(piece.dropFirst()))
        }
    }

    private static func checkWritten(_ bytes: [UInt8]) throws(PropertyViolation) {
        let generated = entries(from: bytes)
        let tar: [UInt8]
        do {
            tar = try TarWriter.bytes(modificationSeconds: 0) { writer in
                for entry in generated { try writer.addFile(entry.path, entry.bytes) }
            }
        } catch {
            throw PropertyViolation(property: "TarWriter writes any layout entries", observed: "\(error)")
        }
        let reader: TarReader
        do { reader = try TarReader(bytes: tar) } catch {
            throw PropertyViolation(property: "what TarWriter wrote opens", observed: "\(error)")
        }
        let result = unpack(reader)
        let total = generated.reduce(0) { $0 + $1.bytes.count }
        let payload = generated.first { $0.path == "payload.json" }
        let expectedStatus: Int? =
            if generated.count > limits.maxEntries || total > limits.maxBytes
                || (payload?.bytes.count ?? 0) > limits.maxPayloadBytes
            {
                413
            } else if payload == nil {
                400
            } else {
                nil
            }
        switch result {
        case .success(let archive):
            try expect(
                expectedStatus == nil, "an archive over a limit or without payload.json is refused",
                observed: "accepted; expected \(expectedStatus ?? 0) for \(generated.map(\.path))")
            try expect(archive.payload == payload?.bytes, "payload.json unpacks to its bytes")
            let assets = generated.filter { $0.path != "payload.json" }
            try expect(
                archive.assets.map(\.name) == assets.map { String($0.path.dropFirst("assets/".count)) },
                "the assets unpack in archive order",
                observed: "\(archive.assets.map(\.name)) for \(assets.map(\.path))")
            for (unpacked, entry) in zip(archive.assets, assets) {
                let data = try? unpacked.source.bytes(limit: .max)
                try expect(data == entry.bytes, "an asset unpacks to its bytes", observed: "\(entry.path)")
            }
        case .failure(let problem):
            try expect(
                problem.status == expectedStatus,
                "a refusal is the status of the limit broken (413) or the missing payload (400)",
                observed:
                    "\(problem.status) \(problem.detail); expected \(expectedStatus.map(String.init) ?? "success") for \(generated.map(\.path))"
            )
        }
    }
}
