import Foundation
import HTTPTransport
import Testing

@testable import FeedServerKit

#if canImport(Glibc)
import Glibc
#endif

/// The request history's ring and the read counts as values: no server, no sockets.
@Suite struct RecentRequestsTests {
    /// Records a request for `path` from `client` (an IPv4 or IPv6 literal, or nil).
    private func record(
        _ ring: RecentRequests, _ path: String, status: Int = 200, client: String? = "127.0.0.1",
        served: ServedVersion? = nil, at: Int64 = 1
    ) {
        var storage = sockaddr_storage()
        let hasAddress = client.map { Self.fill(&storage, $0) } ?? false
        withUnsafePointer(to: &storage) { storagePointer in
            storagePointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                "GET".withCString { method in
                    path.withCString { path in
                        ring.record(
                            AnsweredRequest(
                                method: method, path: path, status: status, client: hasAddress ? address : nil,
                                served: served), at: at)
                    }
                }
            }
        }
    }

    private static func fill(_ storage: inout sockaddr_storage, _ text: String) -> Bool {
        withUnsafeMutablePointer(to: &storage) { pointer in
            if text.contains(":") {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    $0.pointee.sin6_family = sa_family_t(AF_INET6)
                    return inet_pton(AF_INET6, text, &$0.pointee.sin6_addr) == 1
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                $0.pointee.sin_family = sa_family_t(AF_INET)
                return inet_pton(AF_INET, text, &$0.pointee.sin_addr) == 1
            }
        }
    }

    @Test func theRingKeepsTheNewestAndWrapsOverTheOldest() {
        let ring = RecentRequests(capacity: 3)
        for n in 1...5 { record(ring, "/feeds/g\(n)", at: Int64(n)) }
        #expect(ring.newest(10).map(\.path) == ["/feeds/g5", "/feeds/g4", "/feeds/g3"])
        #expect(ring.newest(2).map(\.at) == [5, 4])
        #expect(ring.newest(10) { $0.hasSuffix("4") }.map(\.path) == ["/feeds/g4"])
        ring.clear()
        #expect(ring.newest(10).isEmpty)
        record(ring, "/after")
        #expect(ring.newest(10).map(\.path) == ["/after"])
    }

    @Test func fieldsAreKeptAsSentAndAddressesFormattedWhenRead() {
        let ring = RecentRequests(capacity: 4)
        record(
            ring, "/feeds/g", status: 304, client: "::1",
            served: ServedVersion(id: "gen-1", fallbackReason: "unparsable"))
        record(ring, "/healthz", status: 200, client: nil)
        record(ring, "/x", client: "10.1.2.3")
        let records = ring.newest(4)
        #expect(records.map(\.client) == ["10.1.2.3", nil, "::1"])
        #expect(records[2].status == 304)
        #expect(records[2].generationId == "gen-1")
        #expect(records[2].fallbackReason == "unparsable")
        #expect(records[1].generationId == nil && records[1].fallbackReason == nil)
        #expect(records.allSatisfy { $0.method == "GET" && !$0.pathCut })
    }

    @Test func longFieldsAreCutAndSayTheyWere() {
        let ring = RecentRequests(capacity: 1)
        let long = "/" + String(repeating: "a", count: 1000)
        // An id of two-byte characters cut where one would be split keeps whole characters only.
        let served = ServedVersion(id: String(repeating: "é", count: 40), fallbackReason: nil)
        record(ring, long, served: served)
        let record = ring.newest(1)[0]
        #expect(record.pathCut)
        #expect(record.path == String(long.prefix(RecentRequests.Layout.pathCapacity)))
        #expect(record.generationId == String(repeating: "é", count: RecentRequests.Layout.servedCapacity / 2))
    }

    @Test func noCapacityKeepsNothingAndTheCapacityIsBounded() {
        let none = RecentRequests(capacity: 0)
        record(none, "/feeds/g")
        #expect(none.newest(10).isEmpty)
        #expect(RecentRequests(capacity: Int.max).capacity == RecentRequests.maxCapacity)
    }

    @Test func readsAreCountedPerGenerationAndFoldedPastTheBound() {
        let counts = ReadCounts(since: 7, maxGenerations: 2, maxGroups: 1)
        do {
            let first = counts.tally(group: "g", generationId: "one")
            first.count(notModified: false, fallback: false)
            first.count(notModified: true, fallback: true)
            #expect(counts.tally(group: "g", generationId: "one") === first)
        }
        // Held only by the registry now: the oldest tally is folded when a third one is made.
        counts.tally(group: "g", generationId: "two").count(notModified: false, fallback: false)
        _ = counts.tally(group: "h", generationId: "three")
        counts.countNotFound(group: "x")
        counts.countNotFound(group: "y")
        let snapshot = counts.snapshot()
        #expect(snapshot.since == 7)
        #expect(snapshot.otherNotFound == 1)
        let g = snapshot.groups.first { $0.group == "g" }
        #expect(g?.generations.map(\.generationId) == ["two"])
        #expect(g?.earlier == ReadCounts.Counts(ok: 1, notModified: 1, fallbackServed: 1))
        #expect(snapshot.groups.map(\.group) == ["g", "x"], "a tally never read is not listed")
        counts.reset(now: 9)
        #expect(counts.snapshot().groups.isEmpty)
        #expect(counts.snapshot().since == 9)
    }

    @Test func aTallyHeldByACachedAnswerIsNotFoldedWhileAnUnheldOneIs() {
        let counts = ReadCounts(since: 0, maxGenerations: 2)
        let held = counts.tally(group: "g", generationId: "held")
        _ = counts.tally(group: "g", generationId: "unheld")
        _ = counts.tally(group: "g", generationId: "new")
        held.count(notModified: false, fallback: false)
        #expect(counts.snapshot().groups.first?.generations.map(\.generationId) == ["held"])
        #expect(counts.tally(group: "g", generationId: "held") === held)
    }
}
