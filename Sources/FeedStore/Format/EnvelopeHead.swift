import ConcurrencyPrimitives

/// The schema version a `feed.json` declares, read from its first bytes: a read that filters by
/// schema version learns that a generation is the wrong one without reading or parsing the rest.
///
/// This project writes `schemaVersion` first, and WidgetBridge's writer does too; a file that
/// puts it after a large payload is simply read whole.
enum EnvelopeHead {
    /// How much of a `feed.json` is read to find its schema version.
    static let prefixBytes = 4096

    /// The integer value of the top-level `schemaVersion` member when `prefix` shows it before
    /// anything this scan does not step over (a member name with escapes, the end of the
    /// prefix); nil when the prefix does not tell. A wrong version found here is a skip whatever
    /// the rest of the file holds; a matching one is still read whole.
    static func schemaVersion(in prefix: [UInt8]) -> Int? {
        var scan = Scan(bytes: prefix)
        scan.skipWhitespace()
        guard scan.consume(UInt8(ascii: "{")) else { return nil }
        while true {
            scan.skipWhitespace()
            guard let name = scan.plainString() else { return nil }
            scan.skipWhitespace()
            guard scan.consume(UInt8(ascii: ":")) else { return nil }
            scan.skipWhitespace()
            if name.elementsEqual("schemaVersion".utf8) { return scan.integer() }
            guard scan.skipValue() else { return nil }
            scan.skipWhitespace()
            guard scan.consume(UInt8(ascii: ",")) else { return nil }
        }
    }

    /// A cursor over the prefix that steps over values without building them.
    private struct Scan {
        let bytes: [UInt8]
        var position = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func skipWhitespace() {
            while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
        }

        mutating func consume(_ byte: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }

        /// A string without escapes, as its raw bytes.
        mutating func plainString() -> ArraySlice<UInt8>? {
            guard consume(UInt8(ascii: "\"")) else { return nil }
            let start = position
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: "\""):
                    position += 1
                    return bytes[start..<position - 1]
                case UInt8(ascii: "\\"): return nil
                default: position += 1
                }
            }
            return nil
        }

        /// An integer literal followed by a delimiter (a fraction or exponent is no integer).
        mutating func integer() -> Int? {
            let start = position
            _ = consume(UInt8(ascii: "-"))
            while position < bytes.count, (0x30...0x39).contains(bytes[position]) { position += 1 }
            guard position < bytes.count, position > start else { return nil }
            switch bytes[position] {
            case UInt8(ascii: ","), UInt8(ascii: "}"), 0x20, 0x09, 0x0A, 0x0D:
                return Int(String(decoding: bytes[start..<position], as: UTF8.self))
            default:
                return nil
            }
        }

        /// Steps over one value (strings with their escapes, containers by depth); false when
        /// the prefix ends inside it.
        mutating func skipValue() -> Bool {
            var depth = 0
            while position < bytes.count {
                let byte = bytes[position]
                switch byte {
                case UInt8(ascii: "\""):
                    guard skipString() else { return false }
                    if depth == 0 { return true }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    guard depth > 0 else { return true }
                    depth -= 1
                    if depth == 0 {
                        position += 1
                        return true
                    }
                case UInt8(ascii: ","):
                    if depth == 0 { return true }
                default:
                    break
                }
                position += 1
            }
            return false
        }

        private mutating func skipString() -> Bool {
            position += 1
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: "\\"): position += 2
                case UInt8(ascii: "\""):
                    position += 1
                    return true
                default: position += 1
                }
            }
            return false
        }
    }
}

/// What an earlier read learned of one generation's `feed.json`.
enum EnvelopeOutcome: Equatable, Sendable {
    /// Its first bytes declare this schema version (the rest was not read).
    case declared(Int)
    /// It parses, and says this.
    case parsed(EnvelopeSummary)
    /// Readers skip it for this reason (whatever schema is asked for).
    case skip(SkipReason)

    /// The schema version it declares, when known.
    var schemaVersion: Int? {
        switch self {
        case .declared(let version): return version
        case .parsed(let summary): return summary.schemaVersion
        case .skip: return nil
        }
    }
}

/// What earlier reads learned of each generation's `feed.json`, by its path and file status:
/// its schema version, or why it cannot be read. A generation is immutable once visible, so a
/// status that has not changed means content that has not; a read filtering by a version nobody
/// published then costs one `lstat` per candidate, not a read and a parse.
typealias EnvelopeMemo = StatusMemo<EnvelopeOutcome>
