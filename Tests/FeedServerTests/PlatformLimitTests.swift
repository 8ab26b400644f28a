import FeedImaging
import FeedImagingTesting
import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// Platform-limit warnings on every publish (docs/widget-limits.md), against the real server.
@Suite struct PlatformLimitTests {
    static let square1024 = try! TestImages.png(width: 1024, height: 1024)
    static let square848 = try! TestImages.png(width: 848, height: 848)
    static let square847 = try! TestImages.png(width: 847, height: 847)

    /// The figures the limits are written with, restated here from their sources.
    static let widgetKitArea = 718_080
    static let iosMemory = 30 * 1024 * 1024
    static let android1080x2400 = 1080 * 2400 * 4 * 3 / 2

    /// Raw parts (sizes from the header), with byte budgets large enough that none is skipped.
    static let raw = "images=raw&maxBytes=16777216&budgetBytes=268435456"

    private func upload(_ payload: String, _ files: [(String, [UInt8])]) -> MultipartBody {
        var body = MultipartBody()
        body.field("payload", payload, contentType: "application/json")
        for (index, (name, bytes)) in files.enumerated() { body.file("asset\(index)", filename: name, bytes) }
        return body
    }

    private func warnings(_ response: WireResponse) throws -> [[String: Any]] {
        try #require(response.json["warnings"] as? [[String: Any]], "no warnings member in \(response.text)")
    }

    private func codes(_ response: WireResponse) throws -> [String] {
        try warnings(response).compactMap { $0["code"] as? String }
    }

    @Test func theLimitTableAndItsDocumentAgree() throws {
        let document = try String(
            contentsOf: URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("docs/widget-limits.md"), encoding: .utf8)
        #expect(PlatformLimits.table.map(\.code) == [.iosImageArea, .iosExtensionMemory, .androidBitmapMemory])
        for code in LintCode.allCases { #expect(document.contains("`\(code.rawValue)`"), "\(code)") }
        for row in PlatformLimits.table {
            let links = row.source.split(separator: " ").filter { $0.hasPrefix("(https://") }.map {
                $0.dropFirst().prefix { $0 != ")" }
            }
            #expect(!links.isEmpty || row.code == .iosExtensionMemory, "\(row.code) names no source")
            for link in links {
                #expect(document.contains(String(link)), "\(row.code): \(link) is not in docs/widget-limits.md")
            }
        }
        #expect(document.contains("718,080") && document.contains("31,457,280") && document.contains("15,552,000"))
        #expect(
            PlatformLimits.iosImageAreaPixels == Self.widgetKitArea
                && PlatformLimits.iosExtensionMemoryBytes == Self.iosMemory)
        #expect(
            PlatformLimits.androidBitmapMemoryBytes(screen: PlatformLimits.defaultAndroidScreen)
                == Self.android1080x2400)
    }

    @Test func everyPublishAnswerCarriesWarningsEvenWhenEmpty() throws {
        try withTestServer { _, client in
            let created = try client.put("/feeds/g", json: #"{"quotes":[{"id":"q1","text":"Carpe diem"}]}"#)
            #expect(created.status == 201)
            #expect(try warnings(created).isEmpty)
            let unchanged = try client.put("/feeds/g", json: #"{"quotes":[{"id":"q1","text":"Carpe diem"}]}"#)
            #expect(unchanged.status == 200)
            #expect(try warnings(unchanged).isEmpty)
        }
    }

    @Test func imagesAboveWidgetKitsAreaAreReportedWithTheLimitAndTheFigure() throws {
        try withTestServer { _, client in
            // Encoded by libvips at up to 1024 px; the byte budget raised so nothing shrinks.
            let encoded = try client.putMultipart(
                "/feeds/g?maxDimension=1024&maxBytes=16777216&budgetBytes=67108864",
                upload(
                    #"{"items":[{"image":"sun.png"},{"image":"edge.png"}]}"#,
                    [("sun.png", Self.square1024), ("edge.png", Self.square847)]))
            #expect(encoded.status == 201)
            let list = try warnings(encoded)
            #expect(list.count == 1, "\(list)")
            #expect(list.first?["code"] as? String == "ios-image-area")
            #expect(list.first?["asset"] as? String == "sun.png")
            #expect(list.first?["limit"] as? Int == Self.widgetKitArea)
            #expect(list.first?["actual"] as? Int == 1024 * 1024)
            #expect((list.first?["detail"] as? String)?.contains("maxDimension=847") == true)

            // Either side of the limit exactly: 848² = 719,104 is over, 847² = 717,409 is not.
            let raw = try client.putMultipart(
                "/feeds/g?\(Self.raw)",
                upload(
                    #"{"items":[{"image":"a.png"},{"image":"b.png"}]}"#,
                    [("a.png", Self.square848), ("b.png", Self.square847)]))
            #expect(try warnings(raw).map { "\($0["code"] ?? "")/\($0["asset"] ?? "")" } == ["ios-image-area/a.png"])

            // An unchanged publish reports them again (recomputed from its content).
            let again = try client.putMultipart(
                "/feeds/g?\(Self.raw)",
                upload(
                    #"{"items":[{"image":"a.png"},{"image":"b.png"}]}"#,
                    [("a.png", Self.square848), ("b.png", Self.square847)]))
            #expect(again.status == 200)
            #expect(try codes(again) == ["ios-image-area"])
        }
    }

    /// Raw parts keep their size (read from the header), so totals are exact.
    private func rawImages(_ count: Int) -> (payload: String, files: [(String, [UInt8])]) {
        let names = (0..<count).map { "p\($0).png" }
        let items = names.map { #"{"image":"\#($0)"}"# }.joined(separator: ",")
        return (#"{"items":[\#(items)]}"#, names.map { ($0, Self.square847) })
    }

    @Test func decodedMemoryIsCheckedAgainstTheIOSCeilingAndTheAndroidBudget() throws {
        try withTestServer { _, client in
            let perImage = 847 * 847 * 4
            // 6 images: 17.2 MB decoded, over Android's 15.6 MB for 1080 × 2400, under iOS's 30 MiB.
            let six = rawImages(6)
            let androidOnly = try client.putMultipart("/feeds/six?\(Self.raw)", upload(six.payload, six.files))
            #expect(try codes(androidOnly) == ["android-bitmap-memory"])
            let android = try #require(try warnings(androidOnly).first)
            #expect(android["limit"] as? Int == Self.android1080x2400)
            #expect(android["actual"] as? Int == 6 * perImage)
            #expect(android["asset"] == nil)

            // 10 images (28.7 MB) stay under iOS's ceiling; 11 (31.6 MB) go over it.
            let ten = rawImages(10)
            #expect(
                try codes(client.putMultipart("/feeds/ten?\(Self.raw)", upload(ten.payload, ten.files))) == [
                    "android-bitmap-memory"
                ])
            let eleven = rawImages(11)
            let both = try client.putMultipart("/feeds/eleven?\(Self.raw)", upload(eleven.payload, eleven.files))
            #expect(try codes(both) == ["ios-extension-memory", "android-bitmap-memory"])
            let ios = try #require(try warnings(both).first)
            #expect(ios["limit"] as? Int == Self.iosMemory)
            #expect(ios["actual"] as? Int == 11 * perImage)
        }
    }

    @Test func androidScreenOptionSetsTheBitmapBudget() throws {
        try withTestServer(configure: { $0.androidScreen = ScreenSize(width: 2000, height: 2000) }) { _, client in
            let six = rawImages(6)
            #expect(try codes(client.putMultipart("/feeds/g?\(Self.raw)", upload(six.payload, six.files))).isEmpty)
            let eleven = rawImages(11)
            let over = try client.putMultipart("/feeds/h?\(Self.raw)", upload(eleven.payload, eleven.files))
            let android = try #require(try warnings(over).first { $0["code"] as? String == "android-bitmap-memory" })
            #expect(android["limit"] as? Int == 2000 * 2000 * 6)
        }
    }

    @Test func androidScreenIsParsedStrictly() throws {
        func screen(_ text: String) throws -> ScreenSize? {
            guard case .run(let options) = try ServerOptions.parse(["--android-screen", text], environment: [:]) else {
                return nil
            }
            return options.androidScreen
        }
        #expect(try screen("720x1600") == ScreenSize(width: 720, height: 1600))
        #expect(try screen("1440X3200") == ScreenSize(width: 1440, height: 3200))
        for bad in ["0x100", "100x", "x100", "100x100x1", "-1x5", "100000000x2", "wide"] {
            #expect(throws: (any Error).self, "\(bad)") { try screen(bad) }
        }
        guard
            case .run(let defaults) = try ServerOptions.parse(
                [], environment: ["FEED_SERVER_ANDROID_SCREEN": "1280x2800"])
        else { return }
        #expect(defaults.androidScreen == ScreenSize(width: 1280, height: 2800))
    }

    @Test func payloadStringsThatNameMissingImagesAreReported() throws {
        try withTestServer { _, client in
            let json = try client.put(
                "/feeds/g",
                json: #"""
                    {"items":[{"image":"q9.jpg"},{"image":"q9.jpg"},{"thumb":"assets/x.png"},
                     {"remote":"https://cdn.example/y.png?v=2"},{"note":"a photo"},{"space":"My photo.HEIC"}]}
                    """#)
            #expect(json.status == 201)
            let list = try warnings(json)
            #expect(list.map { $0["code"] as? String } == ["asset-not-found", "asset-not-found", "asset-not-found"])
            #expect(list.map { $0["asset"] as? String } == ["q9.jpg", "x.png", "My photo.HEIC"])
            #expect(list.map { $0["pointer"] as? String } == ["/items/0/image", "/items/2/thumb", "/items/5/space"])
            let details = list.compactMap { $0["detail"] as? String }
            #expect(
                details[0].contains("named in 2 places") && details[0].contains("no assets at all"), "\(details[0])")
            #expect(details[1].contains("last path component"))
            #expect(details[2].contains("can never be one"))
        }
    }

    @Test func assetsNoPayloadStringNamesAreReportedAndNearMissesExplained() throws {
        try withTestServer { _, client in
            let payload =
                #"{"items":[{"id":"q1"},{"image":"q2.png"},{"image":"q4.png"},{"image":"bad.png"},{"map":{"q5.png":"caption"}}]}"#
            let files = [
                ("q1.png", Self.square847), ("q2.png", Self.square847), ("q3.png", Self.square847),
                ("Q4.PNG", Self.square847), ("bad.png", Array("not an image".utf8)), ("q5.png", Self.square847),
            ]
            let response = try client.putMultipart("/feeds/g", upload(payload, files))
            #expect(response.status == 201)
            let list = try warnings(response)
            let summary = list.map { "\($0["code"] ?? "")/\($0["asset"] ?? "")" }
            // q1.png is named by its stem (WidgetBridge's README builds names from ids), q5.png by a member name.
            #expect(
                summary == [
                    "asset-not-found/q4.png", "asset-not-found/bad.png", "asset-unreferenced/q3.png",
                    "asset-unreferenced/Q4.PNG",
                ])
            #expect((list[0]["detail"] as? String)?.contains("Did you mean 'Q4.PNG'") == true)
            #expect((list[1]["detail"] as? String)?.contains("uploaded but not stored") == true)
        }
    }

    @Test func strictLintRefusesAnyWarningAndWritesNothing() throws {
        try withTestServer { server, client in
            let clean = #"{"items":[{"image":"a.png"}]}"#
            let first = try client.putMultipart("/feeds/g?lint=strict", upload(clean, [("a.png", Self.square847)]))
            #expect(first.status == 201)
            let folder = server.options.root + "/g/generations"
            let before = try FileManager.default.contentsOfDirectory(atPath: folder)

            let refused = try client.putMultipart(
                "/feeds/g?lint=strict&\(Self.raw)",
                upload(#"{"items":[{"image":"a.png"}]}"#, [("a.png", Self.square848)]))
            #expect(refused.status == 422)
            #expect(refused.header("Content-Type") == "application/problem+json")
            #expect(refused.json["type"] as? String == "https://feed-server.invalid/problems/platform-limits")
            #expect((refused.json["warnings"] as? [[String: Any]])?.map { $0["code"] as? String } == ["ios-image-area"])
            #expect((refused.json["detail"] as? String)?.contains("Nothing was published") == true)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == before)
            #expect(try client.get("/feeds/g").json["generationId"] as? String == first.json["generationId"] as? String)

            // Content that was published with warnings is refused under strict even though it is unchanged.
            let warned = try client.put("/feeds/g", json: #"{"image":"gone.png"}"#)
            #expect(warned.status == 201)
            #expect(try codes(warned) == ["asset-not-found"])
            #expect(try client.put("/feeds/g?lint=strict", json: #"{"image":"gone.png"}"#).status == 422)
            #expect(try client.put("/feeds/g?lint=warn", json: #"{"image":"gone.png"}"#).status == 200)
            let bad = try client.put("/feeds/g?lint=pedantic", json: "[]")
            #expect(bad.status == 400)
            #expect((bad.json["detail"] as? String)?.contains("'warn' or 'strict'") == true)
        }
    }

    /// A payload naming 2,000 missing files: every answer spells out the first 100 warnings and
    /// counts the rest, so its size does not grow with what the payload names (unbounded, a 12 MB
    /// publish gets a 300 MB answer and the server holds 2.3 GB).
    @Test func warningsAreSpelledOutUpToAHundredAndTheRestCounted() throws {
        let names = (0..<2000).map { #""\#($0).png""# }.joined(separator: ",")
        let payload = "[\(names)]"
        try withTestServer { _, client in
            let created = try client.put("/feeds/g", json: payload)
            #expect(created.status == 201)
            #expect(try warnings(created).count == PublishLint.maxListed)
            #expect(created.json["warningsOmitted"] as? Int == 2000 - PublishLint.maxListed)
            #expect(try warnings(created).first?["asset"] as? String == "0.png", "in payload order")
            #expect(created.body.count < 64 * 1024, "\(created.body.count) bytes")

            let route = try client.get("/feeds/g/warnings")
            #expect(try warnings(route).count == PublishLint.maxListed)
            #expect(route.json["warningsOmitted"] as? Int == 2000 - PublishLint.maxListed)

            let strict = try client.put("/feeds/h?lint=strict", json: payload)
            #expect(strict.status == 422)
            #expect((strict.json["warnings"] as? [[String: Any]])?.count == PublishLint.maxListed)
            #expect(strict.json["warningsOmitted"] as? Int == 2000 - PublishLint.maxListed)
            #expect((strict.json["detail"] as? String)?.contains("And 1997 more (see warnings).") == true)
            #expect(strict.body.count < 64 * 1024)

            let metrics = try client.get("/metrics").text
            #expect(
                metrics.contains(#"feedserver_publish_warnings_total{code="asset-not-found"} 4000"#),
                "every warning counted")
        }
    }

    @Test func metricsCountWarningsByCode() throws {
        try withTestServer { _, client in
            _ = try client.put("/feeds/g", json: #"{"a":"x.png","b":"y.png"}"#)
            _ = try client.put("/feeds/g", json: #"{"a":"x.png","b":"y.png"}"#)
            _ = try client.put("/feeds/g?lint=strict", json: #"{"a":"z.png"}"#)
            let six = rawImages(6)
            _ = try client.putMultipart("/feeds/h?\(Self.raw)", upload(six.payload, six.files))
            let metrics = try client.get("/metrics").text
            #expect(metrics.contains(#"feedserver_publish_warnings_total{code="asset-not-found"} 5"#), "\(metrics)")
            #expect(metrics.contains(#"feedserver_publish_warnings_total{code="android-bitmap-memory"} 1"#))
            #expect(metrics.contains(#"feedserver_publish_warnings_total{code="ios-image-area"} 0"#))
            #expect(metrics.contains(#"feedserver_publish_warnings_total{code="asset-unreferenced"} 0"#))
        }
    }

    @Test func warningsRouteChecksTheServedGenerationWhoeverWroteIt() throws {
        try withTestServer { server, client in
            #expect(try client.get("/feeds/none/warnings").status == 404)
            _ = try client.put("/feeds/g", json: #"{"image":"gone.png"}"#)
            let ours = try client.get("/feeds/g/warnings")
            #expect(ours.status == 200)
            #expect(try codes(ours) == ["asset-not-found"])

            // A generation as WidgetBridge writes it: pretty-printed, no asset list, so no pixel sizes.
            let generation = server.options.root + "/wb/generations/1764450000000-0badc0de"
            try FileManager.default.createDirectory(atPath: generation + "/assets", withIntermediateDirectories: true)
            try Data(Self.square1024).write(to: URL(fileURLWithPath: generation + "/assets/big.png"))
            try Data(
                """
                {
                  "schemaVersion": 1, "generatedAtEpochMs": 1764450000000,
                  "fingerprint": "0badc0de00000000000000000000000000000000000000000000000000000000",
                  "payload": {"image": "big.png"}
                }
                """.utf8
            ).write(to: URL(fileURLWithPath: generation + "/feed.json"))
            let theirs = try client.get("/feeds/wb/warnings")
            #expect(theirs.json["generationId"] as? String == "1764450000000-0badc0de")
            let list = try warnings(theirs)
            #expect(list.map { $0["code"] as? String } == ["ios-image-area"])
            #expect(list.first?["actual"] as? Int == 1024 * 1024)
        }
    }
}
