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
}
