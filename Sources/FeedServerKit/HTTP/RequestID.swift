import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Request ids for `X-Request-Id` and the access log: the client's own when it sent a sane one,
/// otherwise a process prefix and a counter (unique per process, cheap, sortable).
enum RequestID {
    private static let prefix = String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16)
    private static let counter = Atomic<UInt64>(0)

    /// The id for a request, given the `X-Request-Id` it sent (if any).
    static func make(clientSupplied: UnsafePointer<CChar>?) -> String {
        if let clientSupplied {
            let value = String(cString: clientSupplied)
            if (1...64).contains(value.utf8.count), value.utf8.allSatisfy(isAllowed) { return value }
        }
        return "\(prefix)-\(counter.add(1, ordering: .relaxed).newValue)"
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            return true
        default:
            return false
        }
    }
}
