import FeedStore
import Foundation
import Testing

/// WidgetRotation against the shared vectors (a copy kept in this target's resources).
@Suite struct RotationTests {
    private let vectors: [String: Any] = {
        let data = FileManager.default.contents(atPath: Fixtures.rotationVectors)!
        return try! JSONSerialization.jsonObject(with: data) as! [String: Any]
    }()

    @Test func hourSlotMatchesTheVectors() {
        let cases = vectors["hourSlot"] as! [[String: Any]]
        #expect(cases.count == 10)
        for vector in cases {
            let slot = WidgetRotation.hourSlot(
                epochMs: (vector["epochMs"] as! NSNumber).int64Value,
                zoneOffsetSeconds: vector["zoneOffsetSeconds"] as! Int)
            #expect(slot == (vector["slot"] as! NSNumber).int64Value, "\(vector)")
        }
    }

    @Test func indexMatchesTheVectors() {
        for vector in vectors["index"] as! [[String: Any]] {
            let index = WidgetRotation.index(
                slot: (vector["slot"] as! NSNumber).int64Value, count: vector["count"] as! Int)
            #expect(index == vector["index"] as! Int, "\(vector)")
        }
    }

    @Test func stableHashMatchesTheVectors() {
        for vector in vectors["stableHash"] as! [[String: Any]] {
            #expect(
                WidgetRotation.stableHash(vector["value"] as! String) == (vector["hash"] as! NSNumber).uint32Value,
                "\(vector)")
        }
    }
}
