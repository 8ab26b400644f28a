import ConcurrencyPrimitives
import FeedStore
import HTTPTransport

#if canImport(Glibc)
import Glibc
#endif

/// The last N answered requests (`--recent-requests`), for `GET /journal/reads`: a ring of
/// fixed-size slots allocated once, so recording one (on every request, cached reads included)
/// is a lock held for a copy of a few hundred bytes, with no allocation. Fields longer than their
/// slot are cut and the record says so; addresses are kept as bytes and formatted when read.
final class RecentRequests: Sendable {
    /// One request as `GET /journal/reads` lists it.
    struct Record: Equatable, Sendable {
        /// When it was answered, epoch ms.
        var at: Int64
        var method: String
        /// The path as sent (percent-encoded, no query), cut at `Layout.path` bytes.
        var path: String
        /// Whether `path` was cut.
        var pathCut: Bool
        var status: Int
        /// The generation served (feed reads), and why it was a fallback.
        var generationId: String?
        var fallbackReason: String?
        /// The client's IP address (nil when the transport had none).
        var client: String?
    }

    /// Byte offsets of a slot's fields.
    enum Layout {
        static let at = 0  // Int64
        static let status = 8  // UInt16
        static let methodLength = 10
        static let servedLength = 11
        static let reasonLength = 12
        static let clientFamily = 13  // 0 none, 4 or 6
        static let pathLength = 14  // UInt16, the top bit set when cut
        static let client = 16  // 16 address bytes
        static let method = 32
        static let methodCapacity = 12
        static let served = 44
        static let servedCapacity = 64
        static let reason = 108
        static let reasonCapacity = 36
        static let path = 144
        static let pathCapacity = 240
        static let size = 384
    }

    /// How many a server keeps unless told (`--recent-requests`).
    static let defaultCapacity = 1000
    /// The most records a server can be asked to keep (3.7 MiB of slots; an answer listing them
    /// all is about 4 MB).
    static let maxCapacity = 10_000

    /// How many it keeps (0: none).
    let capacity: Int
    private struct State {
        var slots: [UInt8]
        /// Records written since start (or the last clear); the next goes to `written % capacity`.
        var written = 0
    }
    private let state: Lock<State>

    /// A ring of `capacity` records (clamped to `0...maxCapacity`).
    init(capacity: Int) {
        self.capacity = min(max(capacity, 0), Self.maxCapacity)
        state = Lock(State(slots: [UInt8](repeating: 0, count: self.capacity * Layout.size)))
    }

    /// Keeps `request`, answered at `at` (epoch ms), over the oldest record when full.
    func record(_ request: AnsweredRequest, at: Int64 = coarseNow()) {
        guard capacity > 0 else { return }
        state.withLock { state in
            let offset = (state.written % capacity) * Layout.size
            state.written &+= 1
            state.slots.withUnsafeMutableBytes { bytes in
                Self.write(request, at: at, into: UnsafeMutableRawBufferPointer(rebasing: bytes[offset...]))
            }
        }
    }

    /// Up to `limit` records whose path `matches` (nil: every record), newest first. The slots
    /// are copied under the lock (a few hundred bytes each; without a filter only the `limit`
    /// newest, since every request waits for that lock) and decoded after it.
    func newest(_ limit: Int, matching matches: ((String) -> Bool)? = nil) -> [Record] {
        guard capacity > 0, limit > 0 else { return [] }
        let (copied, count) = state.withLock { state -> ([UInt8], Int) in
            let count = min(state.written, capacity, matches == nil ? limit : .max)
            var copied = [UInt8]()
            copied.reserveCapacity(count * Layout.size)
            for back in 0..<count {
                let offset = ((state.written - 1 - back) % capacity) * Layout.size
                copied.append(contentsOf: state.slots[offset..<offset + Layout.size])
            }
            return (copied, count)
        }
        var records: [Record] = []
        copied.withUnsafeBytes { bytes in
            for index in 0..<count where records.count < limit {
                let slot = UnsafeRawBufferPointer(rebasing: bytes[(index * Layout.size)...])
                if let matches, !matches(Self.path(slot).text) { continue }
                records.append(Self.read(slot))
            }
        }
        return records
    }

    /// Now in epoch ms from the kernel's coarse clock: a few nanoseconds, to within a tick (1–4 ms),
    /// which is all a request history needs.
    static func coarseNow() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    /// Forgets every record (`DELETE /journal`).
    func clear() {
        state.withLock { $0.written = 0 }
    }

    private static func write(_ request: AnsweredRequest, at: Int64, into slot: UnsafeMutableRawBufferPointer) {
        slot.storeBytes(of: at, toByteOffset: Layout.at, as: Int64.self)
        slot.storeBytes(of: UInt16(clamping: request.status), toByteOffset: Layout.status, as: UInt16.self)
        slot[Layout.methodLength] = UInt8(
            copy(request.method, to: slot, at: Layout.method, Layout.methodCapacity).count)
        let path = copy(request.path, to: slot, at: Layout.path, Layout.pathCapacity)
        slot.storeBytes(
            of: UInt16(path.count) | (path.cut ? 0x8000 : 0), toByteOffset: Layout.pathLength, as: UInt16.self)
        // The served version's bytes are read in place: it lives as long as the answer it is on.
        let served = request.served
        slot[Layout.servedLength] = UInt8(copy(served?.idBytes, to: slot, at: Layout.served, Layout.servedCapacity))
        slot[Layout.reasonLength] = UInt8(
            copy(served?.fallbackReasonBytes, to: slot, at: Layout.reason, Layout.reasonCapacity))
        slot[Layout.clientFamily] = copyAddress(request.client, to: slot)
    }

    /// Copies a C string's bytes (at most `capacity`): how many, and whether it was cut.
    private static func copy(
        _ text: UnsafePointer<CChar>, to slot: UnsafeMutableRawBufferPointer, at offset: Int, _ capacity: Int
    ) -> (count: Int, cut: Bool) {
        let length = strnlen(text, capacity + 1)
        let count = min(length, capacity)
        if count > 0, let target = slot.baseAddress { (target + offset).copyMemory(from: text, byteCount: count) }
        return (count, length > capacity)
    }

    /// Copies UTF-8 bytes (at most `capacity`, cut before a partial character); how many.
    private static func copy(
        _ bytes: UnsafeRawBufferPointer?, to slot: UnsafeMutableRawBufferPointer, at offset: Int, _ capacity: Int
    ) -> Int {
        guard let bytes, let source = bytes.baseAddress, let target = slot.baseAddress else { return 0 }
        var count = min(bytes.count, capacity)
        // A byte 0b10xxxxxx continues a character: cut before the character it belongs to.
        while count < bytes.count, count > 0, bytes[count] & 0xC0 == 0x80 { count -= 1 }
        (target + offset).copyMemory(from: source, byteCount: count)
        return count
    }

    /// Copies an IPv4 or IPv6 address's bytes; its family (4, 6) or 0.
    private static func copyAddress(
        _ address: UnsafePointer<sockaddr>?, to slot: UnsafeMutableRawBufferPointer
    )
        -> UInt8
    {
        guard let address, let base = slot.baseAddress else { return 0 }
        let target = base + Layout.client
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                withUnsafeBytes(of: $0.pointee.sin_addr) { target.copyMemory(from: $0.baseAddress!, byteCount: 4) }
            }
            return 4
        case AF_INET6:
            address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                withUnsafeBytes(of: $0.pointee.sin6_addr) { target.copyMemory(from: $0.baseAddress!, byteCount: 16) }
            }
            return 6
        default: return 0
        }
    }

    private static func read(_ slot: UnsafeRawBufferPointer) -> Record {
        func text(_ offset: Int, _ count: Int) -> String {
            String(decoding: UnsafeRawBufferPointer(rebasing: slot[offset..<offset + count]), as: UTF8.self)
        }
        let path = path(slot)
        let served = Int(slot[Layout.servedLength])
        let reason = Int(slot[Layout.reasonLength])
        return Record(
            at: slot.loadUnaligned(fromByteOffset: Layout.at, as: Int64.self),
            method: text(Layout.method, Int(slot[Layout.methodLength])),
            path: path.text, pathCut: path.cut,
            status: Int(slot.loadUnaligned(fromByteOffset: Layout.status, as: UInt16.self)),
            generationId: served > 0 ? text(Layout.served, served) : nil,
            fallbackReason: reason > 0 ? text(Layout.reason, reason) : nil,
            client: address(family: slot[Layout.clientFamily], UnsafeRawBufferPointer(rebasing: slot[Layout.client...]))
        )
    }

    /// A slot's path, and whether it was cut.
    private static func path(_ slot: UnsafeRawBufferPointer) -> (text: String, cut: Bool) {
        let field = slot.loadUnaligned(fromByteOffset: Layout.pathLength, as: UInt16.self)
        let count = min(Int(field & 0x7FFF), Layout.pathCapacity)
        let bytes = UnsafeRawBufferPointer(rebasing: slot[Layout.path..<Layout.path + count])
        return (String(decoding: bytes, as: UTF8.self), field & 0x8000 != 0)
    }

    /// An address's bytes as text (`127.0.0.1`, `::1`).
    private static func address(family: UInt8, _ bytes: UnsafeRawBufferPointer) -> String? {
        guard family == 4 || family == 6 else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(family == 4 ? AF_INET : AF_INET6, bytes.baseAddress, &text, socklen_t(text.count)) != nil
        else { return nil }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
