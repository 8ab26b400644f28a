import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// `/rotation` and `/feeds/{group}/timeline` against the shared rotation vectors.
@Suite struct RotationRoutesTests {
    nonisolated(unsafe) static let vectors: [String: Any] = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FeedStoreTests/Fixtures/rotation-vectors.json").path
        return try! JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as! [String: Any]
    }()

    @Test func rotationMatchesTheVectors() throws {
        try withTestServer { _, client in
            for vector in Self.vectors["hourSlot"] as! [[String: Any]] {
                let epochMs = (vector["epochMs"] as! NSNumber).int64Value
                let zone = vector["zoneOffsetSeconds"] as! Int
                let response = try client.get("/rotation?epochMs=\(epochMs)&zoneOffsetSeconds=\(zone)&count=1")
                #expect(
                    (response.json["slot"] as? NSNumber)?.int64Value == (vector["slot"] as! NSNumber).int64Value,
                    "\(vector)")
            }
            for vector in Self.vectors["index"] as! [[String: Any]] {
                // A slot s starts at epochMs s × 3,600,000 in UTC.
                let slot = (vector["slot"] as! NSNumber).int64Value
                let count = vector["count"] as! Int
                let response = try client.get("/rotation?epochMs=\(slot * 3_600_000)&count=\(count)")
                #expect(response.json["index"] as? Int == vector["index"] as? Int, "\(vector)")
            }
            #expect(try client.get("/rotation?count=0").status == 400)
            #expect(try client.get("/rotation").status == 400)
            #expect(try client.get("/rotation?count=3&epochMs=x").status == 400)
        }
    }

    /// The timeline's first entry has the slot of every hourSlot vector (offsets of one second
    /// included: an offset is kept to the second, as WidgetRotation counts it).
    @Test func timelineMatchesTheVectors() throws {
        try withTestServer { _, client in
            _ = try client.put("/feeds/q", json: #"{"quotes":[{"t":"a"},{"t":"b"},{"t":"c"}]}"#)
            for vector in Self.vectors["hourSlot"] as! [[String: Any]] {
                let epochMs = (vector["epochMs"] as! NSNumber).int64Value
                let zone = vector["zoneOffsetSeconds"] as! Int
                let response = try client.get(
                    "/feeds/q/timeline?items=/quotes&start=\(epochMs)&zoneOffsetSeconds=\(zone)&hours=1")
                let entry = (response.json["entries"] as? [[String: Any]])?.first
                #expect(
                    (entry?["slot"] as? NSNumber)?.int64Value == (vector["slot"] as! NSNumber).int64Value,
                    "\(vector): \(response.text)")
                #expect(entry?["zoneOffsetSeconds"] as? Int == zone, "\(vector)")
            }
        }
    }

    @Test func timelineHoldsOneEntryPerHourWithTheWidgetsMath() throws {
        try withTestServer { _, client in
            _ = try client.put("/feeds/q", json: #"{"quotes":[{"t":"a"},{"t":"b"},{"t":"c"}],"a/b":{"x~y":[1,2]}}"#)
            let start: Int64 = 1_789_250_400_000 + 1_234_567
            let response = try client.get(
                "/feeds/q/timeline?items=/quotes&hours=24&zoneOffsetSeconds=7200&start=\(start)")
            #expect(response.status == 200)
            let entries = try #require(response.json["entries"] as? [[String: Any]])
            #expect(entries.count == 24)
            for (hour, entry) in entries.enumerated() {
                let slot = WidgetRotation.hourSlot(epochMs: start, zoneOffsetSeconds: 7200) + Int64(hour)
                #expect((entry["slot"] as? NSNumber)?.int64Value == slot)
                let begins = try #require((entry["startEpochMs"] as? NSNumber)?.int64Value)
                #expect(WidgetRotation.hourSlot(epochMs: begins, zoneOffsetSeconds: 7200) == slot)
                #expect(
                    WidgetRotation.hourSlot(epochMs: begins - 1, zoneOffsetSeconds: 7200) == slot - 1,
                    "starts on the hour")
                let index = WidgetRotation.index(slot: slot, count: 3)
                #expect(entry["index"] as? Int == index)
                #expect((entry["item"] as? [String: Any])?["t"] as? String == ["a", "b", "c"][index])
            }
            let escaped = try client.get("/feeds/q/timeline?items=/a~1b/x~0y&hours=2&start=0")
            #expect((escaped.json["entries"] as? [[String: Any]])?.map { $0["item"] as? Int } == [1, 2])
            #expect(try client.get("/feeds/q/timeline?items=/nope").status == 422)
            #expect(try client.get("/feeds/q/timeline?items=quotes").status == 422, "not a pointer: a 422 naming items")
            #expect(try client.get("/feeds/q/timeline?items=/quotes&hours=0").status == 400)
            #expect(try client.get("/feeds/none/timeline?items=/quotes").status == 404)
        }
    }

    @Test func aLongArraysTimelineShowsTheRightItemsEveryTimeAndAfterAPublish() throws {
        // Element positions are kept per generation and pointer: the second read and a read
        // under another pointer of the same array, and a new generation, must all pick right.
        let count = 50_000
        func payload(_ tag: String) -> String {
            #"{"items":["# + (0..<count).map { #"{"n":\#($0),"tag":"\#(tag)"}"# }.joined(separator: ",") + "]}"
        }
        try withTestServer { _, client in
            let start: Int64 = 1_789_250_400_000
            for tag in ["one", "two"] {
                #expect(try client.put("/feeds/long", json: payload(tag)).status == 201)
                for path in ["/items", "/items", "/items/"] {
                    let response = try client.get("/feeds/long/timeline?items=\(path)&hours=3&start=\(start)")
                    if path == "/items/" {
                        #expect(response.status == 422, "the pointer names a member '' of the array: nothing")
                        continue
                    }
                    let entries = try #require(response.json["entries"] as? [[String: Any]])
                    for (hour, entry) in entries.enumerated() {
                        let slot = WidgetRotation.hourSlot(epochMs: start, zoneOffsetSeconds: 0) + Int64(hour)
                        let item = entry["item"] as? [String: Any]
                        #expect(item?["n"] as? Int == WidgetRotation.index(slot: slot, count: count))
                        #expect(item?["tag"] as? String == tag)
                    }
                }
            }
        }
    }

    @Test func aTimelineThatWouldRepeatMoreThanAFeedMayHoldIsRefused() throws {
        try withTestServer(configure: { $0.maxPayloadBytes = 64 << 10 }) { _, client in
            let item = String(repeating: "x", count: 10_000)
            #expect(try client.put("/feeds/wide", json: #"{"items":["\#(item)"]}"#).status == 201)
            let refused = try client.get("/feeds/wide/timeline?items=/items&hours=24")
            #expect(refused.status == 422)
            #expect(refused.json["type"] as? String == "https://feed-server.invalid/problems/timeline-too-large")
            #expect(((refused.json["detail"] as? String) ?? "").contains("fewer hours"))
            let small = try client.get("/feeds/wide/timeline?items=/items&hours=2")
            #expect(small.status == 200)
            #expect((small.json["entries"] as? [[String: Any]])?.map { $0["item"] as? String } == [item, item])
        }
    }
}
