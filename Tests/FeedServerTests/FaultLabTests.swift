import FeedImaging
import FeedImagingTesting
import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// The fault lab against the real server: every kind written on disk as the real failure
/// leaves it, `readerServes` checked by an independent read of the folder (`ReferenceReader`),
/// and healed by the next publish.
@Suite struct FaultLabTests {
    static let photo = try! TestImages.png(width: 300, height: 200)

    /// Two publishes with an image: `previous` then `current`.
    private struct Group {
        var previous: String
        var current: String
        var directory: String
    }

    private func seed(_ server: Server, _ client: HTTPTestClient, group: String = "g") throws -> Group {
        func publish(_ text: String) throws -> String {
            var body = MultipartBody()
            body.field(
                "payload", #"{"items":[{"title":"\#(text)","image":"q1.png"}]}"#, contentType: "application/json")
            body.file("image", filename: "q1.png", Self.photo)
            let response = try client.putMultipart("/feeds/\(group)", body)
            #expect(response.status == 201)
            return try #require(response.json["generationId"] as? String)
        }
        let previous = try publish("first")
        let current = try publish("second")
        return Group(previous: previous, current: current, directory: server.options.root + "/" + group)
    }

    private func inject(_ client: HTTPTestClient, _ body: String, group: String = "g") throws -> WireResponse {
        try client.request(
            "POST", "/feeds/\(group)/faults", headers: [("Content-Type", "application/json")], body: Array(body.utf8))
    }

    private func withLab<T>(_ body: (Server, HTTPTestClient) throws -> T) throws -> T {
        try withTestServer(configure: { $0.faultLab = true }, body)
    }

    private func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }
    private func size(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int
    }
    private func contents(_ path: String) -> Data { FileManager.default.contents(atPath: path) ?? Data() }
    private func parses(_ path: String) -> Bool { (try? JSONSerialization.jsonObject(with: contents(path))) != nil }

    /// What a WidgetBridge reader gets, and what our own read gets, for each kind when the group
    /// held `previous` and `current` before: `fault` is the id the injection answered with.
    private func expectations(
        _ kind: FaultKind, _ group: Group, fault: String?
    ) -> (reader: String?, server: String?, skipped: [String]) {
        switch kind {
        case .corruptFeed, .wrongSchema, .danglingPointer, .tornGeneration:
            return (group.current, group.current, [fault ?? "?"])
        case .corruptPointer, .staleTmp: return (group.current, group.current, [])
        case .missingAsset, .truncatedAsset: return (fault, group.current, [])
        case .slowPublish: return (group.current, group.current, [])
        }
    }

    @Test(arguments: FaultKind.allCases.filter { $0 != .slowPublish })
    func everyKindIsWrittenAsTheRealFailureLeavesIt(kind: FaultKind) throws {
        try withLab { server, client in
            let group = try seed(server, client)
            let response = try inject(client, #"{"kind":"\#(kind.rawValue)"}"#)
            #expect(response.status == 201, "\(response.text)")
            #expect(response.json["kind"] as? String == kind.rawValue)
            let fault = response.json["generationId"] as? String
            #expect((fault == nil) == (kind == .corruptPointer))

            // The reader's choice, by an independent read of the folder, and as expected.
            let independent = ReferenceReader.read(group: group.directory, schemaVersion: 1)
            let expected = expectations(kind, group, fault: fault)
            #expect(response.json["readerServes"] as? String == independent.served)
            #expect(independent.served == expected.reader, "\(independent)")
            #expect(independent.skipped == expected.skipped)
            let skipped = try #require(response.json["skipped"] as? [[String: Any]])
            #expect(skipped.compactMap { $0["id"] as? String }.filter { $0 != "current.json" } == independent.skipped)
            #expect(skipped.contains { $0["reason"] as? String == "unusable-pointer" } == independent.pointerUnusable)
            #expect(independent.pointerUnusable == (kind == .corruptPointer))
            #expect(response.json["serverServes"] as? String == expected.server)
            #expect(try client.get("/feeds/g?schemaVersion=1").header("X-Feed-Generation") == expected.server)

            try checkOnDisk(kind, group, fault: fault)
            try checkListing(kind, client, fault: fault)

            // The next ordinary publish heals: both kinds of reader get it, no fallback left.
            var body = MultipartBody()
            body.field("payload", #"{"items":[{"title":"third","image":"q1.png"}]}"#, contentType: "application/json")
            body.file("image", filename: "q1.png", Self.photo)
            let healed = try client.putMultipart("/feeds/g", body)
            #expect(healed.status == 201)
            let healedID = try #require(healed.json["generationId"] as? String)
            #expect(ReferenceReader.read(group: group.directory, schemaVersion: 1).served == healedID)
            let read = try client.get("/feeds/g")
            #expect(read.header("X-Feed-Generation") == healedID)
            #expect(read.header("X-Feed-Fallback") == nil)
            let listing = try client.get("/feeds/g/generations").json
            #expect(
                (listing["faults"] as? [[String: Any]])?.contains { $0["generationId"] == nil } == false,
                "a pointer fault outlived the publish")
            if kind == .staleTmp, let fault {
                #expect(!exists(group.directory + "/generations/\(fault).tmp"), "the next publish sweeps it")
            }
        }
    }

    private func checkOnDisk(_ kind: FaultKind, _ group: Group, fault: String?) throws {
        let pointer =
            try? JSONSerialization.jsonObject(with: contents(group.directory + "/current.json")) as? [String: Any]
        let generations = group.directory + "/generations/"
        let originalAsset = try #require(size(generations + group.current + "/assets/q1.png"))
        switch kind {
        case .corruptPointer:
            #expect(!parses(group.directory + "/current.json"), "current.json must not be JSON")
            #expect(!contents(group.directory + "/current.json").isEmpty)
        case .staleTmp:
            let fault = try #require(fault)
            #expect(pointer?["current"] as? String == group.current)
            #expect(exists(generations + fault + ".tmp/assets/q1.png"))
            #expect(!parses(generations + fault + ".tmp/feed.json"))
        case .danglingPointer:
            let fault = try #require(fault)
            #expect(pointer?["current"] as? String == fault)
            #expect((pointer?["previous"] as? [String])?.first == group.current)
            #expect(!exists(generations + fault))
        default:
            let fault = try #require(fault)
            #expect(pointer?["current"] as? String == fault)
            #expect((pointer?["previous"] as? [String])?.first == group.current)
            let feed = generations + fault + "/feed.json"
            switch kind {
            case .corruptFeed:
                #expect(!parses(feed) && !contents(feed).isEmpty)
                #expect(contents(feed).starts(with: Array(#"{"schemaVersion":1,"#.utf8)))
            case .wrongSchema:
                let envelope = try #require(try JSONSerialization.jsonObject(with: contents(feed)) as? [String: Any])
                #expect(envelope["schemaVersion"] as? Int == 2)
                #expect(exists(generations + fault + "/assets/q1.png"))
            case .missingAsset:
                #expect(parses(feed) && String(decoding: contents(feed), as: UTF8.self).contains("\"q1.png\""))
                #expect(!exists(generations + fault + "/assets/q1.png"))
            case .truncatedAsset:
                #expect(size(generations + fault + "/assets/q1.png") == originalAsset / 2)
            case .tornGeneration:
                #expect(size(feed) == 0 && size(generations + fault + "/assets/q1.png") == 0)
            default:
                Issue.record("no check for \(kind)")
            }
        }
    }

    private func checkListing(_ kind: FaultKind, _ client: HTTPTestClient, fault: String?) throws {
        let listing = try client.get("/feeds/g/generations").json
        let faults = try #require(listing["faults"] as? [[String: Any]])
        #expect(faults.map { $0["kind"] as? String } == [kind.rawValue])
        let entry = try #require(faults.first)
        #expect(!(entry["widgetBridge"] as? String ?? "").isEmpty && !(entry["server"] as? String ?? "").isEmpty)
        guard let fault else { return }
        let rowID = kind == .staleTmp ? fault + ".tmp" : fault
        let rows = try #require(listing["generations"] as? [[String: Any]])
        let row = try #require(rows.first { $0["id"] as? String == rowID }, "no row \(rowID) in \(rows)")
        let annotation = try #require(row["fault"] as? [String: Any])
        #expect(annotation["kind"] as? String == kind.rawValue)
        if kind == .missingAsset || kind == .truncatedAsset {
            // Where this server and WidgetBridge part ways, the listing says so.
            #expect((annotation["widgetBridge"] as? String)?.hasPrefix("reads it") == true)
            #expect((annotation["server"] as? String)?.contains("incomplete-asset") == true)
        }
    }

    @Test func sameContentAfterAFallbackIsWrittenAgainSoThePointerHeals() throws {
        try withLab { server, client in
            let group = try seed(server, client)
            #expect(try inject(client, #"{"kind":"corrupt-feed"}"#).status == 201)
            var body = MultipartBody()
            body.field("payload", #"{"items":[{"title":"second","image":"q1.png"}]}"#, contentType: "application/json")
            body.file("image", filename: "q1.png", Self.photo)
            let again = try client.putMultipart("/feeds/g", body)
            #expect(again.status == 201, "the served content, but the pointer's current is broken: write it again")
            #expect(again.json["fingerprint"] as? String == (try client.get("/feeds/g").json["fingerprint"] as? String))
            #expect(ReferenceReader.read(group: group.directory, schemaVersion: 1).skipped.isEmpty)
            #expect(try client.putMultipart("/feeds/g", body).status == 200, "healthy again, so unchanged")
        }
    }

    @Test func assetFaultsBreakTheAssetThePayloadNamesOrTheOneAsked() throws {
        try withLab { server, client in
            var body = MultipartBody()
            body.field("payload", #"{"items":[{"image":"b.png"}]}"#, contentType: "application/json")
            body.file("one", filename: "a.png", Self.photo)
            body.file("two", filename: "b.png", Self.photo)
            let base = try #require(try client.putMultipart("/feeds/g", body).json["generationId"] as? String)
            let generations = server.options.root + "/g/generations/"
            let named = try inject(client, #"{"kind":"missing-asset"}"#)
            let first = try #require(named.json["generationId"] as? String)
            #expect(!exists(generations + first + "/assets/b.png") && exists(generations + first + "/assets/a.png"))
            let asked = try inject(client, #"{"kind":"truncated-asset","asset":"a.png"}"#)
            let second = try #require(asked.json["generationId"] as? String)
            let whole = try #require(size(generations + base + "/assets/a.png"))
            #expect(size(generations + second + "/assets/a.png") == whole / 2)
            #expect(size(generations + second + "/assets/b.png") == size(generations + base + "/assets/b.png"))
            let unknown = try inject(client, #"{"kind":"missing-asset","asset":"zz.png"}"#)
            #expect(unknown.status == 409)
            #expect((unknown.json["detail"] as? String)?.contains("a.png, b.png") == true)
        }
    }

    @Test func wrongSchemaFaultsKeepTheGroupsSchemaVersion() throws {
        try withLab { server, client in
            let group = try seed(server, client)
            let first = try inject(client, #"{"kind":"wrong-schema"}"#)
            let second = try inject(client, #"{"kind":"wrong-schema"}"#)
            #expect(first.json["schemaVersion"] as? Int == 1 && second.json["schemaVersion"] as? Int == 1)
            let secondID = try #require(second.json["generationId"] as? String)
            let envelope =
                try JSONSerialization.jsonObject(with: contents(group.directory + "/generations/\(secondID)/feed.json"))
                as? [String: Any]
            #expect(
                envelope?["schemaVersion"] as? Int == 2, "one above the group's version, not above the last fault's")
            #expect(ReferenceReader.read(group: group.directory, schemaVersion: 1).served == group.current)
        }
    }

    @Test func slowPublishHoldsItsTemporaryFolderWhileReadersKeepTheServedGeneration() throws {
        try withLab { server, client in
            let group = try seed(server, client)
            let started = Date()
            // 4.0 is an integer to JSON Schema, so it is one here too. Four seconds leave the checks
            // below room under a sanitizer, and stay inside the 5 s the publish after them waits.
            let response = try inject(
                client,
                #"{"kind":"slow-publish","seconds":4.0,"payload":{"items":[{"title":"slow","image":"q1.png"}]}}"#)
            #expect(Date().timeIntervalSince(started) < 3, "answered while the hold lasts")
            #expect(response.status == 201)
            let slow = try #require(response.json["generationId"] as? String)
            #expect(response.json["seconds"] as? Int == 4)
            #expect(response.json["readerServes"] as? String == group.current)
            #expect(ReferenceReader.read(group: group.directory, schemaVersion: 1).served == group.current)
            #expect(parses(group.directory + "/generations/\(slow).tmp/feed.json"), "complete, only not renamed yet")
            #expect(exists(group.directory + "/generations/\(slow).tmp/assets/q1.png"))
            let rows = try #require(try client.get("/feeds/g/generations").json["generations"] as? [[String: Any]])
            let held = try #require(rows.first { $0["id"] as? String == slow + ".tmp" })
            #expect(held["state"] as? String == "in-progress")
            #expect((held["fault"] as? [String: Any])?["kind"] as? String == "slow-publish")

            // A publish meanwhile waits for the group lock, then lands on top of the slow one.
            let put = try client.put("/feeds/g", json: #"{"items":[]}"#)
            let waited = Date().timeIntervalSince(started)
            #expect(put.status == 201)
            #expect(waited >= 3.8, "the publish went ahead after \(waited) s, inside the hold")
            let pointer =
                try JSONSerialization.jsonObject(with: contents(group.directory + "/current.json")) as? [String: Any]
            #expect((pointer?["previous"] as? [String])?.first == slow)
            let payload = try #require(
                String(data: contents(group.directory + "/generations/\(slow)/feed.json"), encoding: .utf8))
            #expect(payload.contains(#""title":"slow""#))
        }
    }

    @Test func shutdownCutsAHoldShort() throws {
        let started = Date()
        try withLab { server, client in
            let group = try seed(server, client)
            let response = try inject(client, #"{"kind":"slow-publish","seconds":60}"#)
            let slow = try #require(response.json["generationId"] as? String)
            server.shutdown(timeoutSeconds: 10)
            #expect(Date().timeIntervalSince(started) < 10)
            #expect(
                ReferenceReader.read(group: group.directory, schemaVersion: 1).served == slow,
                "the held publish completed")
        }
    }

    @Test func refusalsWriteNothing() throws {
        try withLab { server, client in
            let empty = try inject(client, #"{"kind":"corrupt-feed"}"#, group: "empty")
            #expect(empty.status == 409)
            #expect(empty.header("Content-Type") == "application/problem+json")
            #expect(!exists(server.options.root + "/empty"), "refused before the group was created")

            #expect(try client.put("/feeds/j", json: #"{"v":1}"#).status == 201)
            let noAssets = try inject(client, #"{"kind":"truncated-asset"}"#, group: "j")
            #expect(noAssets.status == 409)
            #expect((noAssets.json["detail"] as? String)?.contains("no asset") == true)

            for (body, fragment) in [
                (#"{"kind":"meteor"}"#, "kind must be one of"),
                (#"{"kind":"corrupt-feed","seconds":3}"#, "does not apply"),
                (#"{"kind":"slow-publish","seconds":61}"#, "0 to 60"),
                (#"{"kind":"slow-publish","seconds":1.5}"#, "0 to 60"), (#"{"kind":"slow-publish"}"#, "needs seconds"),
                (#"["corrupt-feed"]"#, "JSON object"), (#"{"kind":"missing-asset","asset":"../x"}"#, "asset must be"),
                (#"{"kind":"#, "not valid JSON"),
            ] {
                let response = try inject(client, body, group: "j")
                #expect(response.status == 400, "\(body)")
                #expect((response.json["detail"] as? String)?.contains(fragment) == true, "\(body): \(response.text)")
            }
            let wrongType = try client.request(
                "POST", "/feeds/j/faults", headers: [("Content-Type", "text/plain")],
                body: Array(#"{"kind":"corrupt-feed"}"#.utf8))
            #expect(wrongType.status == 415)
            #expect(try inject(client, #"{"kind":"corrupt-feed"}"#, group: "..").status == 400)
            #expect(try client.get("/feeds/j/faults").status == 405)
            #expect(ReferenceReader.read(group: server.options.root + "/j", schemaVersion: 1).skipped.isEmpty)
        }
    }

    @Test func withoutTheLabEveryFaultRouteIs404EvenBeforeATokenIsAskedFor() throws {
        try withTestServer(configure: { $0.token = "secret" }) { _, client in
            for method in ["POST", "GET", "PUT", "DELETE", "OPTIONS"] {
                let response = try client.request(
                    method, "/feeds/g/faults", headers: [("Content-Type", "application/json")],
                    body: Array(#"{"kind":"corrupt-feed"}"#.utf8))
                #expect(response.status == 404, "\(method)")
                if method != "OPTIONS" {
                    #expect((response.json["detail"] as? String)?.contains("--fault-lab") == true)
                }
            }
            #expect(
                try client.get("/metrics").text.contains(#"feedserver_faults_injected_total{kind="corrupt-feed"} 0"#))
        }
    }

    @Test func faultLabIsASwitchOnTheCommandLineAndInTheEnvironment() throws {
        func parsed(_ arguments: [String], _ environment: [String: String] = [:]) throws -> ServerOptions? {
            guard case .run(let options) = try ServerOptions.parse(arguments, environment: environment) else {
                return nil
            }
            return options
        }
        #expect(try parsed([])?.faultLab == false)
        #expect(try parsed(["--fault-lab"])?.faultLab == true)
        #expect(try parsed(["--fault-lab", "--port", "0"])?.transport.port == 0, "a switch takes no value")
        #expect(try parsed(["--fault-lab=off"], ["FEED_SERVER_FAULT_LAB": "on"])?.faultLab == false)
        #expect(try parsed([], ["FEED_SERVER_FAULT_LAB": "on"])?.faultLab == true)
        #expect(throws: (any Error).self) { try parsed(["--fault-lab=maybe"]) }

        let scratch = ScratchDirectory()
        let child = try ChildServer(arguments: ["--port", "0", "--root", scratch.path, "--fault-lab"])
        _ = try child.waitForPort()
        #expect(child.output.contains("fault lab on"))
        child.signal(SIGTERM)
        #expect(child.waitForExit() == 0)
        let help = try ChildServer(arguments: ["--help"])
        #expect(help.waitForExit() == 0)
        #expect(help.output.contains("--fault-lab") && help.output.contains("FEED_SERVER_FAULT_LAB"))
        #expect(help.output.contains("--android-screen WxH") && help.output.contains("FEED_SERVER_ANDROID_SCREEN"))
    }

    @Test func injectionsAreCountedAndRunTheRedrawHook() throws {
        let scratch = ScratchDirectory()
        let log = scratch.path + "/hook.log"
        try withTestServer(configure: {
            $0.faultLab = true
            $0.onPublish = "echo \"$FEED_FAULT $FEED_GENERATION_ID\" >> \(log)"
        }) { server, client in
            _ = try seed(server, client)
            let fault = try #require(try inject(client, #"{"kind":"torn-generation"}"#).json["generationId"] as? String)
            let deadline = Date().addingTimeInterval(5)
            while Date() < deadline, !(String(data: contents(log), encoding: .utf8) ?? "").contains("torn-generation") {
                usleep(20_000)
            }
            #expect(String(data: contents(log), encoding: .utf8)?.contains("torn-generation \(fault)") == true)
            #expect(
                try client.get("/metrics").text.contains(#"feedserver_faults_injected_total{kind="torn-generation"} 1"#)
            )
        }
    }
}
