/// One fuzz target: a name for the command line and a property check that throws when an input
/// breaks a property. Crashes and traps in the code under test are findings too; libFuzzer
/// (or the replay) reports those itself.
public struct FuzzTarget: Sendable {
    /// The name used by `feed-fuzz <name>`, `scripts/fuzz.sh` and `Fuzz/Corpus/<name>/`.
    public let name: String
    /// What it feeds and which properties it checks, for `feed-fuzz list`.
    public let summary: String
    /// Runs one input; throws the first property it breaks.
    public let check: @Sendable ([UInt8]) throws(PropertyViolation) -> Void
}

/// A property that did not hold for an input.
public struct PropertyViolation: Error, CustomStringConvertible {
    /// The property, stated as what should hold.
    public let property: String
    /// What was observed instead.
    public let observed: String

    /// `property; observed`.
    public var description: String { "\(property); observed: \(observed)" }
}

/// Every target, in the order `scripts/fuzz.sh` runs them.
public enum FuzzTargets {
    /// All targets.
    public static let all: [FuzzTarget] = [
        JSONTarget.target, FormatTarget.target, RoutingTarget.target,
        EntityTagTarget.target, ParameterTarget.target, MultipartTarget.target, ArchiveTarget.target,
        ProfileTarget.target, ExpectationTarget.target,
    ]

    /// The target called `name`.
    public static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}

/// Throws a violation of `property` unless `condition` holds.
func expect(
    _ condition: Bool, _ property: @autoclosure () -> String, observed: @autoclosure () -> String = ""
) throws(PropertyViolation) {
    guard condition else { throw PropertyViolation(property: property(), observed: observed()) }
}

/// Bytes shown in a violation: printable ASCII as is, everything else escaped, cut after 200 bytes.
func shown<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
    var text = ""
    for byte in bytes.prefix(200) {
        switch byte {
        case 0x20..<0x7F where byte != UInt8(ascii: "\\"): text.append(Character(Unicode.Scalar(byte)))
        default: text += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }
    }
    return bytes.count > 200 ? text + "…(\(bytes.count) bytes)" : text
}

/// `text` as shown in a violation.
func shown(_ text: String) -> String { shown(Array(text.utf8)) }
