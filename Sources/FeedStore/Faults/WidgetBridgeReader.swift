#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What WidgetBridge's Swift reader (`WidgetFeedReader.read`) returns for a group folder, by its
/// own rules rather than this server's: the fault lab's `readerServes`.
///
/// The reader decodes `current.json` and each `feed.json` with Foundation's `JSONDecoder` into
/// `Codable` structs, so this does the same, with the same decoder (FoundationEssentials'; the
/// one Foundation uses on Linux). That decoder is more lenient than this server's parser, and
/// the prediction must follow it (FaultLabTests checks each case against Foundation itself):
/// a duplicate member is decoded from its first occurrence; one UTF-8 byte-order mark is
/// skipped; one trailing comma before `}` or `]` is accepted; an integer may be spelled with a
/// fraction or an exponent (`1.0`, `1e0`) when its value is whole; nesting goes to 512 levels,
/// not 129. Its other rules: ids are any Unicode letters or digits, `-`, `_` and `.` (so `..`
/// is followed, to `<group>/feed.json`); the folder listing skips hidden (dot) names and `.tmp`
/// folders; the payload is the app's own type, which the lab cannot know, so any payload value
/// counts as decodable.
///
/// Where this stays on the server's side: a `feed.json` larger than `maxBytes` is skipped as
/// unreadable (the reader has no limit), and a symbolic link is never followed (the reader
/// follows one).
struct WidgetBridgeReader {
    let fileSystem: any FileSystem
    let layout: GroupLayout
    /// Largest file read.
    let maxBytes: Int

    /// `current.json` as the reader declares it.
    private struct PointerFile: Decodable {
        let current: String
        let previous: [String]?
    }

    /// `feed.json` as the reader declares it; `payload` is the app's type.
    private struct EnvelopeFile: Decodable {
        let schemaVersion: Int
        let generatedAtEpochMs: Int64
        let fingerprint: String
        let payload: AnyPayload
    }

    /// Any JSON value at all: present is all the lab can ask of a payload.
    private struct AnyPayload: Decodable {
        init(from decoder: any Decoder) throws {}
    }

    /// The reader's candidates in its order (`current`, each `previous`, then the listing), the
    /// first that decodes with `schemaVersion` served.
    func read(schemaVersion: Int) -> FeedRead {
        var candidates: [String] = []
        var pointerProblem: String?
        switch readPointer() {
        case .absent: break
        case .unusable(let reason): pointerProblem = reason
        case .present(let pointer): candidates = [pointer.current] + (pointer.previous ?? [])
        }
        candidates += listedGenerations()
        var seen = Set<String>()
        var skipped: [SkippedCandidate] = []
        for id in candidates where seen.insert(id).inserted {
            switch load(id, schemaVersion: schemaVersion) {
            case .success(let generation):
                return FeedRead(served: generation, skipped: skipped, pointerProblem: pointerProblem)
            case .failure(let reason):
                skipped.append(SkippedCandidate(id: id, reason: reason))
            }
        }
        return FeedRead(served: nil, skipped: skipped, pointerProblem: pointerProblem)
    }

    /// One candidate by the reader's rules (its payload and assets are not kept).
    func load(_ id: String, schemaVersion: Int) -> Result<Generation, SkipReason> {
        guard Self.isSafeName(id) else { return .failure(.unsafeID) }
        switch fileSystem.status(layout.generation(id))?.kind {
        case nil: return .failure(.missing)
        case .directory?: break
        default: return .failure(.notADirectory)
        }
        let bytes: [UInt8]
        do {
            bytes = try fileSystem.readFile(layout.envelope(id), limit: maxBytes)
        } catch let error as FileSystemError where error.kind == .notFound {
            return .failure(.missing)
        } catch {
            return .failure(.unreadable("\(error)"))
        }
        let envelope: EnvelopeFile
        do {
            envelope = try JSONDecoder().decode(EnvelopeFile.self, from: Data(bytes))
        } catch let error as DecodingError {
            return .failure(Self.reason(error, bytes))
        } catch {
            return .failure(.unparsable("\(error)"))
        }
        guard envelope.schemaVersion == schemaVersion else {
            return .failure(.wrongSchema(found: envelope.schemaVersion, wanted: schemaVersion))
        }
        return .success(
            Generation(
                id: id, schemaVersion: envelope.schemaVersion, generatedAtEpochMs: envelope.generatedAtEpochMs,
                fingerprint: envelope.fingerprint, compactPayload: [], assets: []))
    }

    /// The reader's safe names: not empty, every character a letter, a digit, `-`, `_` or `.`
    /// in Unicode's sense (Swift's `Character` properties, as the reader checks them).
    static func isSafeName(_ name: String) -> Bool {
        !name.isEmpty && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }
    }

    /// Folders of `generations/`, hidden names and `.tmp` ones left out, name descending.
    private func listedGenerations() -> [String] {
        ((try? fileSystem.listDirectory(layout.generations)) ?? [])
            .filter { $0.isDirectory && !$0.name.hasPrefix(".") && !$0.name.hasSuffix(GenerationID.temporarySuffix) }
            .map(\.name)
            .sorted(by: >)
    }

    private enum PointerState {
        case absent
        case unusable(String)
        case present(PointerFile)
    }

    private func readPointer() -> PointerState {
        let bytes: [UInt8]
        do {
            bytes = try fileSystem.readFile(layout.pointer, limit: maxBytes)
        } catch let error as FileSystemError where error.kind == .notFound {
            return .absent
        } catch {
            return .unusable("current.json cannot be read: \(error)")
        }
        do {
            return .present(try JSONDecoder().decode(PointerFile.self, from: Data(bytes)))
        } catch {
            return .unusable("current.json is not a valid pointer for Foundation's JSONDecoder: \(error)")
        }
    }

    /// The decoder's refusal as a skip reason: not JSON to it, or JSON of the wrong shape.
    private static func reason(_ error: DecodingError, _ bytes: [UInt8]) -> SkipReason {
        switch error {
        case .dataCorrupted(let context):
            // The decoder says only "not valid JSON"; where this server's parser stops says where.
            var detail = "Foundation's JSONDecoder refuses it (\(context.debugDescription))"
            do { _ = try JSONParser.parse(bytes, limits: JSONLimits(maxDepth: 512, maxBytes: bytes.count)) } catch {
                detail += "; \(error.description)"
            }
            return .unparsable(detail)
        case .keyNotFound(let key, _):
            return .invalidEnvelope("\(key.stringValue) is missing")
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return .invalidEnvelope("\(path.isEmpty ? "feed.json" : path): \(context.debugDescription)")
        @unknown default:
            return .invalidEnvelope("\(error)")
        }
    }
}
