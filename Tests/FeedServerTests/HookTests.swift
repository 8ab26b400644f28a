import FeedImagingTesting
import FeedStore
import FeedStoreTesting
import Foundation
import Testing

@testable import FeedServerKit

/// `--on-publish` against the real server: which changes run it, with which variables, and how
/// quick changes are coalesced.
@Suite struct HookTests {
    /// A hook that appends one line per run: the event, then each variable or "unset", then
    /// whether FEED_DIR is a folder when the hook runs.
    private static let describing =
        #"{ printf '%s %s %s %s %s %s' "$FEED_EVENT" "$FEED_GROUP" "${FEED_GENERATION_ID-unset}" "#
        + #""${FEED_FINGERPRINT-unset}" "${FEED_FAULT-unset}" "$FEED_GROUP_DIR";"#
        + #" if [ -d "${FEED_DIR-/nonexistent}" ]; then echo " dir"; else echo " ${FEED_DIR-unset}"; fi; } >> "#

    /// The log's complete lines: a hook writes its line in two steps (printf, then echo), and a
    /// read between them must not count the half it sees.
    private func lines(_ log: String) -> [String] {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    private func root(_ server: Server) -> String {
        URL(fileURLWithPath: server.options.root).standardizedFileURL.path
    }

    @Test func aDeleteThatRemovedAFeedRunsTheHookAndOneThatRemovedNothingDoesNot() throws {
        let scratch = ScratchDirectory()
        let log = scratch.path + "/hook.log"
        try withTestServer(configure: { $0.onPublish = Self.describing + log }) { server, client in
            let published = try client.put("/feeds/g", json: "[1]")
            let id = try #require(published.json["generationId"] as? String)
            let fingerprint = try #require(published.json["fingerprint"] as? String)
            try waitUntil { lines(log).count == 1 }
            #expect(try client.request("DELETE", "/feeds/g").status == 204)
            try waitUntil { lines(log).count == 2 }
            #expect(try client.request("DELETE", "/feeds/g").status == 204)
            #expect(try client.request("DELETE", "/feeds/never").status == 204)
            usleep(300_000)  // a hook for either would have appended by now
            #expect(
                lines(log) == [
                    "publish g \(id) \(fingerprint) unset \(root(server))/g dir",
                    "delete g unset unset unset \(root(server))/g unset",
                ])
        }
    }

    @Test func quickChangesToOneGroupRunTheFirstAndTheLatestOnly() throws {
        let scratch = ScratchDirectory()
        let log = scratch.path + "/hook.log"
        let started = scratch.path + "/started"
        // The first run holds until the test has published the rest.
        let command =
            #"touch "\#(started)"; while [ ! -e "\#(scratch.path)/go" ]; do sleep 0.05; done; "#
            + #"echo "$FEED_GENERATION_ID" >> "\#(log)""#
        try withTestServer(configure: { $0.onPublish = command }) { _, client in
            var ids: [String] = []
            for round in 1...5 {
                ids.append(try #require(try client.put("/feeds/g", json: "[\(round)]").json["generationId"] as? String))
                if round == 1 { try waitUntil { FileManager.default.fileExists(atPath: started) } }
            }
            #expect(FileManager.default.createFile(atPath: scratch.path + "/go", contents: Data()))
            try waitUntil { lines(log).count == 2 }
            usleep(300_000)  // a third run would have appended by now
            #expect(lines(log) == [ids[0], ids[4]])
        }
    }

    @Test(arguments: FaultKind.allCases.filter { $0 != .slowPublish })
    func everyFaultRunsTheHookWithTheVariablesItHas(kind: FaultKind) throws {
        let scratch = ScratchDirectory()
        let log = scratch.path + "/hook.log"
        try withTestServer(configure: {
            $0.faultLab = true
            $0.onPublish = Self.describing + log
        }) { server, client in
            // Two generations with a photo each, so every kind has what it breaks.
            for title in ["first", "second"] {
                var body = MultipartBody()
                body.field("payload", #"{"title":"\#(title)","image":"q1.png"}"#, contentType: "application/json")
                body.file("image", filename: "q1.png", try TestImages.png(width: 30, height: 20))
                #expect(try client.putMultipart("/feeds/g", body).status == 201)
            }
            try waitUntil { lines(log).count == 2 }
            let response = try client.request(
                "POST", "/feeds/g/faults", headers: [("Content-Type", "application/json")],
                body: Array(#"{"kind":"\#(kind.rawValue)"}"#.utf8))
            #expect(response.status == 201, "\(response.text)")
            try waitUntil { lines(log).count == 3 }
            let fields = lines(log)[2].split(separator: " ").map(String.init)
            try #require(fields.count == 7, "\(fields)")
            let id = response.json["generationId"] as? String
            #expect(Array(fields.prefix(3)) == ["fault", "g", id ?? "unset"])
            #expect(fields[4] == kind.rawValue && fields[5] == root(server) + "/g")
            // A fingerprint only where the written feed.json declares one; a folder only where it exists.
            let declaresFingerprint: Set<FaultKind> = [.wrongSchema, .missingAsset, .truncatedAsset]
            #expect((fields[3] != "unset") == declaresFingerprint.contains(kind), "\(fields)")
            let hasFolder: Set<FaultKind> = [
                .corruptFeed, .wrongSchema, .missingAsset, .truncatedAsset, .tornGeneration, .staleTmp,
            ]
            #expect((fields[6] == "dir") == hasFolder.contains(kind), "\(fields)")
            #expect(fields[6] == "dir" || fields[6] == "unset", "FEED_DIR never names a missing folder: \(fields)")
        }
    }
}
