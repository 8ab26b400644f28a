import FeedStore
import Foundation
import Testing

/// Durability under SIGKILL: a server publishing in a loop is killed at random moments.
@Suite struct CrashTests {
    /// After every kill, a reader gets a complete generation whose fingerprint verifies from the
    /// files, never older than the last acknowledged publish; the next publish leaves no `.tmp`.
    @Test func killedMidPublishNeverLosesAnAcknowledgedFeed() throws {
        let scratch = ScratchDirectory("crash")
        let root = scratch.path + "/data"
        var lastAcknowledged = -1
        var sequence = 0
        var killsDuringPublish = 0
        for round in 0..<60 {
            let child = try ChildServer(arguments: [
                "--port", "0", "--root", root, "--access-log", "off", "--grace-seconds", "0", "--threads", "2",
            ])
            let client = HTTPTestClient(port: try child.waitForPort())
            let pid = child.process.processIdentifier
            let delayMicros = UInt32.random(in: 2_000...40_000)
            let killer = Thread {
                usleep(delayMicros)
                kill(pid, SIGKILL)
            }
            killer.start()
            var publishedThisRound = 0
            while true {
                sequence += 1
                let asset = String(repeating: "x", count: Int.random(in: 0...20_000))
                guard let response = try? client.put("/feeds/g", json: #"{"seq":\#(sequence),"pad":"\#(asset)"}"#)
                else {
                    killsDuringPublish += 1
                    break
                }
                #expect(response.status == 201, "round \(round)")
                lastAcknowledged = sequence
                publishedThisRound += 1
                if publishedThisRound == 1 { try expectNoTemporaryFolders(root) }
            }
            _ = child.waitForExit()
            try verify(root: root, notOlderThan: lastAcknowledged, round: round)
        }
        #expect(killsDuringPublish >= 50)
    }

    private func verify(root: String, notOlderThan acknowledged: Int, round: Int) throws {
        guard acknowledged >= 0 else { return }
        let store = FeedStore(root: root)
        let read = store.read(group: "g", schemaVersion: 1)
        let served = try #require(read.served, "round \(round): no readable generation")
        let payload = try JSONSerialization.jsonObject(with: Data(served.compactPayload)) as? [String: Any]
        let seq = try #require(payload?["seq"] as? Int)
        #expect(seq >= acknowledged, "round \(round): served seq \(seq) older than acknowledged \(acknowledged)")
        let recomputed = Fingerprint.compute(
            schemaVersion: served.schemaVersion, compactPayload: served.compactPayload, assets: [])
        #expect(recomputed == served.fingerprint, "round \(round)")
        #expect(served.id.hasSuffix("-" + served.fingerprint.prefix(8)))
        #expect(read.skipped.isEmpty, "round \(round): \(read.skipped)")
    }

    private func expectNoTemporaryFolders(_ root: String) throws {
        let entries = try FileManager.default.contentsOfDirectory(atPath: root + "/g/generations")
        #expect(!entries.contains { $0.hasSuffix(".tmp") }, "\(entries)")
    }
}
