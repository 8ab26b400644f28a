#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Scans of a payload's bytes that run at memory speed in every build.
///
/// A payload string can be megabytes long and every one is scanned on each publish. These go to
/// libc's vectorised `memchr` or walk raw pointers: an unoptimised build (the sanitizer runs)
/// reads a `Slice` through generic accessors that allocate on every byte.
enum ByteScan {
    /// Whether `byte` occurs in `bytes`.
    static func contains(_ byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
        return memchr(base, Int32(byte), bytes.count) != nil
    }

    /// The offset of the first `first` or `second` in `bytes`, or nil when neither occurs.
    static func firstOffset(of first: UInt8, or second: UInt8, in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var offset = 0
        while offset < bytes.count {
            if base[offset] == first || base[offset] == second { return offset }
            offset += 1
        }
        return nil
    }

    /// The offset of the last `byte` in `bytes`, or nil when it does not occur.
    static func lastOffset(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var offset = bytes.count
        while offset > 0 {
            offset -= 1
            if base[offset] == byte { return offset }
        }
        return nil
    }

    /// Whether every byte of `bytes` is ASCII (below 0x80).
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var offset = 0
        while offset < bytes.count {
            if base[offset] >= 0x80 { return false }
            offset += 1
        }
        return true
    }

    /// The offset of the first byte at or after `start` that a JSON string cannot carry as it is
    /// (a quote, a backslash, a control or a non-ASCII byte), or `bytes.count` when none follows.
    ///
    /// Eight bytes at a time: each test below flags a byte by its top bit, and a borrow can only
    /// flag a byte above one truly flagged, so the lowest flag is always the first such byte.
    static func plainStringRunEnd(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = bytes.baseAddress else { return start }
        var offset = start
        let raw = UnsafeRawPointer(base)
        while offset &+ 8 <= bytes.count {
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let flags = notPlainFlags(word)
            if flags != 0 { return offset &+ flags.trailingZeroBitCount / 8 }
            offset &+= 8
        }
        while offset < bytes.count, isPlain(base[offset]) { offset &+= 1 }
        return offset
    }

    /// Whether a JSON string carries `byte` as it is: printable ASCII other than `"` and `\`.
    static func isPlain(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte < 0x80 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let tops: UInt64 = 0x8080_8080_8080_8080

    /// The top bit of each byte of `word` that is not plain, plus perhaps some above one that is not.
    private static func notPlainFlags(_ word: UInt64) -> UInt64 {
        let nonASCII = word & tops
        let control = (word &- (ones &* 0x20)) & ~word & tops
        let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        return nonASCII | control | zeroFlags(quote) | zeroFlags(backslash)
    }

    /// The top bit of each zero byte of `word`, plus perhaps some above a zero byte.
    private static func zeroFlags(_ word: UInt64) -> UInt64 { (word &- ones) & ~word & tops }

    /// How many bytes of `bytes` are `,`, `:`, `[` or `{`.
    static func countStructural(in bytes: UnsafeBufferPointer<UInt8>) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        let raw = UnsafeRawPointer(base)
        var count = 0
        var offset = 0
        while offset &+ 8 <= bytes.count {
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let matches =
                exactZeroFlags(word ^ (ones &* 0x2C)) | exactZeroFlags(word ^ (ones &* 0x3A))
                | exactZeroFlags(word ^ (ones &* 0x5B)) | exactZeroFlags(word ^ (ones &* 0x7B))
            count &+= matches.nonzeroBitCount
            offset &+= 8
        }
        while offset < bytes.count {
            switch base[offset] {
            case UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "{"): count &+= 1
            default: break
            }
            offset &+= 1
        }
        return count
    }

    /// Whether any of the eight bytes of `word` is `byte` (`byte` not zero: a zero byte of
    /// `word` would count only then).
    static func hasByte(_ byte: UInt8, in word: UInt64) -> Bool {
        exactZeroFlags(word ^ (ones &* UInt64(byte))) != 0
    }

    /// The top bit of exactly the zero bytes of `word` (no borrow crosses bytes: the low seven
    /// bits are added apart from the top one).
    private static func exactZeroFlags(_ word: UInt64) -> UInt64 {
        let low = word & ~tops
        return ~((low &+ ~tops) | word | ~tops)
    }
}
