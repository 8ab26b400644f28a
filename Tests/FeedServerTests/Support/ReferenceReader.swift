import Foundation

/// WidgetBridge's Swift reader (`WidgetFeedReader.read`) written again for the tests from its
/// public source's rules, with Foundation only and none of the server's code, so that the fault
/// lab's `readerServes` is checked by an independent read of the folder: `current.json` and each
/// `feed.json` decoded by Foundation's `JSONDecoder` into `Decodable` structs, as the reader does.
enum ReferenceReader {
    struct Result: Equatable {
        /// The generation a WidgetBridge reader returns, nil when none.
        var served: String?
        /// The candidates it skipped first, in order.
        var skipped: [String]
        /// Whether `current.json` exists but is not a usable pointer.
        var pointerUnusable: Bool
    }

    private struct PointerFile: Decodable {
        var current: String
        var previous: [String]?
    }

    /// The reader's envelope; its payload is the app's type, here one that takes any value.
    private struct EnvelopeFile: Decodable {
        var schemaVersion: Int
        var generatedAtEpochMs: Int64
        var fingerprint: String
        var payload: AnyValue
    }

    private struct AnyValue: Decodable {
        init(from decoder: any Decoder) throws {}
    }

    /// Candidates: `current`, each `previous`, then every folder of `generations/` that is not
    /// hidden and not `.tmp`, name descending, duplicates removed. Skipped: a name that is not
    /// letters, digits, `-`, `_`, `.`; a `feed.json` missing or not decoding as the envelope;
    /// another `schemaVersion`. Asset files are never looked at.
    static func read(group directory: String, schemaVersion: Int) -> Result {
        var candidates: [String] = []
        var pointerUnusable = false
        if let data = FileManager.default.contents(atPath: directory + "/current.json") {
            if let pointer = try? JSONDecoder().decode(PointerFile.self, from: data) {
                candidates = [pointer.current] + (pointer.previous ?? [])
            } else {
                pointerUnusable = true
            }
        }
        let folders = ((try? FileManager.default.contentsOfDirectory(atPath: directory + "/generations")) ?? [])
            .filter { !$0.hasPrefix(".") && !$0.hasSuffix(".tmp") && isRealFolder(directory + "/generations/" + $0) }
            .sorted(by: >)
        var seen = Set<String>()
        var skipped: [String] = []
        for id in candidates + folders where seen.insert(id).inserted {
            if isSafe(id), let version = envelopeSchemaVersion(of: directory + "/generations/" + id + "/feed.json"),
                version == schemaVersion
            {
                return Result(served: id, skipped: skipped, pointerUnusable: pointerUnusable)
            }
            skipped.append(id)
        }
        return Result(served: nil, skipped: skipped, pointerUnusable: pointerUnusable)
    }

    /// The envelope's schema version as Foundation decodes it, nil when it does not decode.
    static func envelopeSchemaVersion(of path: String) -> Int? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONDecoder().decode(EnvelopeFile.self, from: data).schemaVersion
    }

    private static func isSafe(_ name: String) -> Bool {
        !name.isEmpty && name.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) }
    }

    private static func isRealFolder(_ path: String) -> Bool {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        return attributes?[.type] as? FileAttributeType == .typeDirectory
    }
}
