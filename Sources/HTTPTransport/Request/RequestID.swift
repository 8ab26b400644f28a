import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Request ids. A client that sends a sane `X-Request-Id` gets it echoed in the answer, and the
/// access log shows it. Otherwise the answer carries none (so a cached read can queue one
/// prepared response for every client) and the access log, when on, shows a generated one: a
/// process prefix and a counter (unique per process, cheap, sortable).
package enum RequestID {
    private static let prefix = String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16)
    private static let counter = Atomic<UInt64>(0)

    /// The client's `X-Request-Id` when it is sane (1 to 64 of `A-Z a-z 0-9 - _ .`), else nil.
    package static func sane(_ clientSupplied: UnsafePointer<CChar>?) -> String? {
        guard let clientSupplied else { return nil }
        return sane(String(cString: clientSupplied))
    }

    /// The same for a value already read (the write journal's).
    package static func sane(_ value: String) -> String? {
        (1...64).contains(value.utf8.count) && value.utf8.allSatisfy(isAllowed) ? value : nil
    }

    /// A new id for a request that brought none (access log only).
    package static func generate() -> String {
        "\(prefix)-\(counter.add(1, ordering: .relaxed).newValue)"
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            return true
        default:
            return false
        }
    }
}
