import HTTPTransportTesting
import Testing

@testable import HTTPTransport

/// How pieces from libmicrohttpd's post processor become parts, whatever the buffer boundaries.
@Suite struct MultipartCollectorTests {
    private func feed(
        _ collector: MultipartCollector, _ name: String, _ filename: String?, _ text: String, offset: UInt64
    ) {
        let bytes = Array(text.utf8CString.dropLast())
        _ = bytes.withUnsafeBufferPointer {
            collector.receive(
                name: name, filename: filename, contentType: nil, data: $0.baseAddress, offset: offset,
                size: bytes.count)
        }
    }

    @Test func anEmptyAnnouncementThenTheFirstBytesAtOffsetZeroAreOnePart() throws {
        let collector = MultipartCollector(forTestingWithMaxParts: 10)
        feed(collector, "a", "a.jpg", "", offset: 0)
        feed(collector, "a", "a.jpg", "hello", offset: 0)
        feed(collector, "a", "a.jpg", " world", offset: 5)
        feed(collector, "b", "b.jpg", "x", offset: 0)
        feed(collector, "b", "b.jpg", "y", offset: 0)
        #expect(collector.parts.map(\.name) == ["a", "b", "b"])
        #expect(String(decoding: collector.parts[0].bytes, as: UTF8.self) == "hello world")
    }

    /// A field announced with an empty piece after a file part is one part: the bytes the file
    /// before it got are not this part's (they once made its first bytes start a second one, and
    /// a valid publish with the payload last was refused as having two payloads).
    @Test func aFieldAnnouncedAfterAFilePartIsOnePart() throws {
        let collector = MultipartCollector(forTestingWithMaxParts: 10, storage: MemoryUploads())
        feed(collector, "photo", "photo.jpg", "", offset: 0)
        feed(collector, "photo", "photo.jpg", "jpeg bytes", offset: 0)
        feed(collector, "payload", nil, "", offset: 0)
        feed(collector, "payload", nil, #"{"photos":1}"#, offset: 0)
        let parts = try collector.finish()
        #expect(parts.map(\.name) == ["photo", "payload"])
        #expect(parts.first?.file?.byteCount == 10)
        #expect(String(decoding: parts.last?.bytes ?? [], as: UTF8.self) == #"{"photos":1}"#)
    }

    @Test func partsBeyondTheLimitAreRefused() {
        let collector = MultipartCollector(forTestingWithMaxParts: 2)
        feed(collector, "a", "a", "1", offset: 0)
        feed(collector, "b", "b", "1", offset: 0)
        feed(collector, "c", "c", "1", offset: 0)
        #expect(collector.parts.count == 2)
        #expect(throws: TransportRefusal.tooManyParts(2)) { try collector.finish() }
    }

    /// Each byte kept in memory costs three times: the byte, its parsed form, the feed written.
    @Test func partsInMemoryCountAgainstTheSharedBudgetAsTheyArrive() {
        let cost = TransportSettings.memoryCostPerBodyByte
        #expect(cost == 3)
        let budget = InflightBudget(limit: 8 * cost)
        do {
            let collector = MultipartCollector(forTestingWithMaxParts: 10, memoryBudget: budget)
            feed(collector, "payload", nil, "12345", offset: 0)
            #expect(budget.inUse == 5 * cost)
            feed(collector, "payload", nil, "67890", offset: 5)
            #expect(budget.inUse == 5 * cost, "the piece that did not fit is not counted")
            #expect(throws: TransportRefusal.memoryLimit(8 * cost)) { try collector.finish() }
        }
        #expect(budget.inUse == 0, "a collector gives back what it still holds when it goes")
    }

    @Test func aTakenReservationStaysWithItsTaker() {
        let budget = InflightBudget(limit: 100)
        var taken = 0
        do {
            let collector = MultipartCollector(forTestingWithMaxParts: 10, memoryBudget: budget)
            feed(collector, "payload", nil, "hello", offset: 0)
            taken = collector.takeMemoryReservation()
        }
        #expect(taken == 5 * TransportSettings.memoryCostPerBodyByte)
        #expect(budget.inUse == taken, "held until the taker gives it back")
        budget.release(taken)
        #expect(budget.inUse == 0)
    }
}
