import Foundation

/// WidgetBridge's reader rules written again for the tests from docs/feed-format.md, with
/// Foundation only and none of the server's code, so that the fault lab's `readerServes` is
/// checked by an independent read of the folder.
enum ReferenceReader {
    struct Result: Equatable {
        /// The generation a WidgetBridge reader returns, nil when none.
        var served: String?
        /// The candidates it skipped first, in order.
        var skipped: [String]
        /// Whether `current.json` exists but is not a usable pointer.
        var pointerUnusable: Bool
    }

    /// Candidates: `current`, each `previous`, then every non-`.tmp` folder of `generations/`,
    /// name descending, duplicates removed. Skipped: unsafe id, `feed.json` missing or not
    /// parsing (as an envelope), another `schemaVersion`. Asset files are never looked at.
    static func read(group directory: String, schemaVersion: Int) -> Result {
        var candidates: [String] = []
        var pointerUnusable = false
        if let data = FileManager.default.contents(atPath: directory + "/current.json") {
            if let pointer = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let current = pointer["current"] as? String
            {
                candidates.append(current)
                candidates += (pointer["previous"] as? [Any] ?? []).compactMap { $0 as? String }
            } else {
                pointerUnusable = true
            }
        }
        let folders = ((try? FileManager.default.contentsOfDirectory(atPath: directory + "/generations")) ?? [])
            .filter { !$0.hasSuffix(".tmp") && isRealFolder(directory + "/generations/" + $0) }
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

    /// The envelope's schema version, nil when the file is missing or not a valid envelope.
    private static func envelopeSchemaVersion(of path: String) -> Int? {
        guard let data = FileManager.default.contents(atPath: path),
            let envelope = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let version = envelope["schemaVersion"] as? Int,
            envelope["generatedAtEpochMs"] is NSNumber, envelope["fingerprint"] is String, envelope["payload"] != nil
        else { return nil }
        return version
    }

    private static func isSafe(_ name: String) -> Bool {
        name != "." && name != ".." && (1...128).contains(name.utf8.count)
            && name.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D
                    || $0 == 0x5F || $0 == 0x2E
            }
    }

    private static func isRealFolder(_ path: String) -> Bool {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        return attributes?[.type] as? FileAttributeType == .typeDirectory
    }
}
