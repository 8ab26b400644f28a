#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A time zone's offsets from UTC over time, read from the system's tzdata (TZif files, RFC 8536)
/// without ICU: the transitions the file lists, then its footer's POSIX rule for later times.
///
/// What a device does when it computes the local hour of a moment (`TimeZone.secondsFromGMT(for:)`
/// on iOS, `ZoneId.getRules().getOffset` on Android); a fixed offset is a zone without rules.
public struct ZoneRules: Sendable, Equatable {
    /// The zone's name (`Europe/Berlin`), or the offset as written (`+02:00`).
    public let name: String
    private let transitions: [Int64]  // seconds since the epoch, ascending
    private let offsets: [Int32]  // the offset from each transition on
    private let initialOffset: Int32
    private let rule: PosixRule?

    /// Where tzdata lives.
    public static let directory = "/usr/share/zoneinfo"

    /// UTC itself, named so.
    public static let utc = ZoneRules(fixedOffsetSeconds: 0, name: "UTC")

    /// A fixed offset east of UTC, in seconds.
    public init(fixedOffsetSeconds: Int) {
        self.init(fixedOffsetSeconds: fixedOffsetSeconds, name: nil)
    }

    private init(fixedOffsetSeconds: Int, name given: String?) {
        let clamped = Int32(clamping: fixedOffsetSeconds)
        name = given ?? Self.describe(offset: Int(clamped))
        transitions = []
        offsets = []
        initialOffset = clamped
        rule = nil
    }

    /// The rules of an IANA zone (`Europe/Berlin`), read from `directory`; nil when the name is
    /// not a zone name or no readable TZif file has it. Links are followed (tzdata names aliases
    /// with them, `UTC` → `Etc/UTC`): the files are the system's, and the name cannot leave the
    /// folder.
    public init?(named name: String) {
        guard Self.isZoneName(name), let bytes = Self.readSystemFile(Self.directory + "/" + name),
            let parsed = TZif(bytes)
        else { return nil }
        self.name = name
        transitions = parsed.transitions
        offsets = parsed.offsets
        initialOffset = parsed.initialOffset
        rule = parsed.footer.flatMap(PosixRule.init)
    }

    /// A whole system file of at most 1 MiB, or nil.
    private static func readSystemFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size <= 1 << 20 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let got = bytes.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress! + filled, $0.count - filled) }
            if got <= 0 { break }
            filled += got
        }
        return filled == bytes.count ? bytes : nil
    }

    /// The offset from UTC, in seconds, at the moment `epochSeconds`.
    public func offsetSeconds(at epochSeconds: Int64) -> Int {
        if let last = transitions.last, epochSeconds >= last, let rule {
            return Int(rule.offset(at: epochSeconds))
        }
        // The last transition at or before the moment.
        var low = 0
        var high = transitions.count
        while low < high {
            let middle = (low + high) / 2
            if transitions[middle] <= epochSeconds { low = middle + 1 } else { high = middle }
        }
        return Int(low == 0 ? initialOffset : offsets[low - 1])
    }

    /// A zone name tzdata could hold: ASCII letters, digits, `/`, `_`, `-`, `+`; no empty,
    /// `.` or `..` component (the name becomes a path under `directory`).
    public static func isZoneName(_ name: String) -> Bool {
        guard (1...64).contains(name.utf8.count), !name.hasPrefix("/") else { return false }
        for component in name.split(separator: "/", omittingEmptySubsequences: false) {
            guard !component.isEmpty, component != ".", component != ".." else { return false }
        }
        return name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "/"), UInt8(ascii: "_"), UInt8(ascii: "-"),
                UInt8(ascii: "+"):
                return true
            default:
                return false
            }
        }
    }

    /// `+02:00`, `-05:30`, `+00:00`; `-00:00:01` when the offset has seconds (WidgetRotation
    /// counts seconds, so a fixed offset must keep them).
    static func describe(offset: Int) -> String {
        let magnitude = offset.magnitude
        let seconds = magnitude % 60
        let text = (offset < 0 ? "-" : "+") + twoDigits(magnitude / 3600) + ":" + twoDigits(magnitude % 3600 / 60)
        return seconds == 0 ? text : text + ":" + twoDigits(seconds)
    }

    private static func twoDigits(_ value: UInt) -> String { (value < 10 ? "0" : "") + "\(value)" }

    /// The most an offset may be from UTC either way: 18 hours, as ISO 8601 and java.time allow.
    public static let maxOffsetSeconds = 64_800

    /// An offset written `+HH:MM` or `-HH:MM`, or `±HH:MM:SS` with seconds (digits only, at most
    /// 18:00 either way), in seconds; nil otherwise.
    public static func parseOffset(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard bytes.count == 6 || bytes.count == 9, bytes[0] == UInt8(ascii: "+") || bytes[0] == UInt8(ascii: "-")
        else { return nil }
        var seconds = 0
        for (index, start) in stride(from: 1, to: bytes.count, by: 3).enumerated() {
            if start > 1, bytes[start - 1] != UInt8(ascii: ":") { return nil }
            guard let value = twoDigitValue(bytes[start], bytes[start + 1]) else { return nil }
            if index > 0, value >= 60 { return nil }
            seconds = seconds * 60 + value
        }
        if bytes.count == 6 { seconds *= 60 }
        guard seconds <= maxOffsetSeconds else { return nil }
        return bytes[0] == UInt8(ascii: "-") ? -seconds : seconds
    }

    private static func twoDigitValue(_ tens: UInt8, _ ones: UInt8) -> Int? {
        let zero = UInt8(ascii: "0")
        guard (zero...zero + 9).contains(tens), (zero...zero + 9).contains(ones) else { return nil }
        return Int(tens - zero) * 10 + Int(ones - zero)
    }
}

/// The parts of a TZif file (versions 2 and later: the 64-bit block) a zone's offsets need.
struct TZif {
    var transitions: [Int64] = []
    var offsets: [Int32] = []
    var initialOffset: Int32 = 0
    var footer: String?

    init?(_ bytes: [UInt8]) {
        var reader = ByteReader(bytes)
        guard let first = reader.header(), first.version >= 2 else { return nil }
        // Skip the version 1 data block: 32-bit times.
        guard reader.skip(first.dataBytes(timeSize: 4)), let second = reader.header() else { return nil }
        guard let times = reader.integers(count: second.timeCount, size: 8),
            let indexes = reader.bytes(count: second.timeCount)
        else { return nil }
        var types: [Int32] = []
        for _ in 0..<second.typeCount {
            guard let offset = reader.integers(count: 1, size: 4)?.first, reader.skip(2) else { return nil }
            types.append(Int32(truncatingIfNeeded: offset))
        }
        guard !types.isEmpty,
            reader.skip(
                second.charCount + second.leapCount * 12 + second.standardCount
                    + second.utCount)
        else { return nil }
        for (time, index) in zip(times, indexes) where Int(index) < types.count {
            transitions.append(time)
            offsets.append(types[Int(index)])
        }
        initialOffset = types[0]
        footer = reader.footer()
    }

    /// Counts in a TZif header.
    struct Header {
        var version: Int
        var utCount: Int
        var standardCount: Int
        var leapCount: Int
        var timeCount: Int
        var typeCount: Int
        var charCount: Int

        func dataBytes(timeSize: Int) -> Int {
            timeCount * timeSize + timeCount + typeCount * 6 + charCount + leapCount * (timeSize + 4)
                + standardCount + utCount
        }
    }

    /// Big-endian reads over the file, refusing anything past its end.
    struct ByteReader {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        mutating func skip(_ count: Int) -> Bool {
            guard count >= 0, position + count <= bytes.count else { return false }
            position += count
            return true
        }

        mutating func bytes(count: Int) -> [UInt8]? {
            guard count >= 0, position + count <= bytes.count else { return nil }
            defer { position += count }
            return Array(bytes[position..<position + count])
        }

        mutating func integers(count: Int, size: Int) -> [Int64]? {
            guard count >= 0, position + count * size <= bytes.count else { return nil }
            var values: [Int64] = []
            values.reserveCapacity(count)
            for _ in 0..<count {
                var value: UInt64 = 0
                for _ in 0..<size {
                    value = value << 8 | UInt64(bytes[position])
                    position += 1
                }
                // Sign-extend from `size` bytes.
                let shift = UInt64(64 - size * 8)
                values.append(Int64(bitPattern: value << shift) >> Int64(shift))
            }
            return values
        }

        mutating func header() -> Header? {
            guard let magic = bytes(count: 4), magic == Array("TZif".utf8), let version = bytes(count: 1),
                skip(15), let counts = integers(count: 6, size: 4), counts.allSatisfy({ (0...1_000_000).contains($0) })
            else { return nil }
            let number = version[0] == 0 ? 1 : Int(version[0]) - Int(UInt8(ascii: "0"))
            return Header(
                version: number, utCount: Int(counts[0]), standardCount: Int(counts[1]), leapCount: Int(counts[2]),
                timeCount: Int(counts[3]), typeCount: Int(counts[4]), charCount: Int(counts[5]))
        }

        /// The footer: a POSIX TZ string between two newlines.
        mutating func footer() -> String? {
            guard position < bytes.count, bytes[position] == 0x0A else { return nil }
            let start = position + 1
            guard let end = bytes[start...].firstIndex(of: 0x0A), end > start else { return nil }
            return String(decoding: bytes[start..<end], as: UTF8.self)
        }
    }
}

/// `read(2)` (the name is taken inside `ZoneRules`).
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
