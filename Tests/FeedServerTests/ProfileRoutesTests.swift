import FeedArchive
import FeedImagingTesting
import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// `/feeds/{group}/profile` and what a profile changes: the publish answer's warnings, the
/// timeline, seeds and archives; against the real server, real files and real images.
@Suite struct ProfileRoutesTests {
    static let photo = try! TestImages.png(width: 300, height: 200)
    static let profile = #"{"items":"/quotes","title":"/text","image":"{id}.png","empty":"/emptyText"}"#

    /// WidgetBridge's README example (quotes with `id` and `text`) with photos for q1…q10.
    static func publishReadmeExample(_ client: HTTPTestClient, group: String = "quotes") throws -> WireResponse {
        var body = MultipartBody()
        let quotes = (1...20).map { #"{"id":"q\#($0)","text":"Quote \#($0)"}"# }.joined(separator: ",")
        body.field("payload", #"{"quotes":[\#(quotes)],"emptyText":"No quotes yet"}"#, contentType: "application/json")
        for number in 1...10 { body.file("file", filename: "q\(number).png", photo, contentType: "image/png") }
        return try client.putMultipart("/feeds/\(group)", body)
    }

    @Test func aProfileIsStoredBeforeTheFirstPublishAnsweredAsStoredAndRemoved() throws {
        try withTestServer { (server, client) throws -> Void in
            let created = try client.put("/feeds/quotes/profile", json: Self.profile)
            #expect(created.status == 201)
            #expect(created.header("Location") == "/feeds/quotes/profile")
            let read = try client.get("/feeds/quotes/profile")
            #expect(read.status == 200)
            #expect(read.text == Self.profile + "\n")
            let tag = try #require(read.header("ETag"))
            #expect(try client.get("/feeds/quotes/profile", headers: [("If-None-Match", tag)]).status == 304)
            // On disk beside the pointer, where WidgetBridge's readers never look.
            let onDisk = try String(contentsOfFile: server.store.root + "/quotes/profile.json", encoding: .utf8)
            #expect(onDisk == Self.profile + "\n")
            #expect((try client.get("/feeds").json["groups"] as? [Any])?.isEmpty == true, "a profile alone is no feed")
            // WidgetBridge's reader reads a group folder with a profile unchanged.
            let published = try Self.publishReadmeExample(client)
            let id = try #require(published.json["generationId"] as? String)
            #expect(ReferenceReader.read(group: server.store.root + "/quotes", schemaVersion: 1).served == id)
            #expect(try client.request("DELETE", "/feeds/quotes").status == 204)
            #expect(try client.put("/feeds/quotes/profile", json: #"{"items":"/quotes"}"#).status == 200)
            #expect(try client.request("DELETE", "/feeds/quotes/profile").status == 204)
            #expect(try client.get("/feeds/quotes/profile").status == 404)
            #expect(try client.request("DELETE", "/feeds/quotes/profile").status == 404)
            #expect(try client.request("DELETE", "/feeds/none/profile").status == 404)
        }
    }

    @Test func aBadProfileIsA422NamingItsMemberAndLosesNothing() throws {
        try withTestServer { (_, client) throws -> Void in
            #expect(try client.put("/feeds/quotes/profile", json: Self.profile).status == 201)
            for (json, member) in [
                (#"{"items":"quotes"}"#, "items"), (#"{"items":"/q","image":"{id.png"}"#, "image"),
                (#"{"items":"/q","zone":"Mars/Olympus"}"#, "zone"), (#"{"items":"/q","titel":"/t"}"#, "titel"),
            ] {
                let refused = try client.put("/feeds/quotes/profile", json: json)
                #expect(refused.status == 422)
                #expect(refused.header("Content-Type") == "application/problem+json")
                #expect(refused.json["member"] as? String == member)
                #expect((refused.json["detail"] as? String)?.contains("/tmp") == false)
            }
            let wrongType = try client.request(
                "PUT", "/feeds/quotes/profile", headers: [("Content-Type", "text/plain")], body: Array("x".utf8))
            #expect(wrongType.status == 415)
            #expect(try client.put("/feeds/..x/profile", json: Self.profile).status == 400)
            #expect(try client.get("/feeds/quotes/profile").text == Self.profile + "\n", "the profile stays")
        }
    }

    /// Once the group has a feed, a member that finds nothing in the served payload is a 422
    /// naming it (it would only show up later as one warning per item).
    @Test func aProfileThatFindsNothingInTheServedFeedIsA422NamingItsMember() throws {
        try withTestServer { (_, client) throws -> Void in
            #expect(try Self.publishReadmeExample(client).status == 201)
            for (json, member, named) in [
                (#"{"items":"/nope"}"#, "items", "/nope"), (#"{"items":"/quotes","title":"/nope"}"#, "title", "/nope"),
                (#"{"items":"/quotes","subtitle":"/t"}"#, "subtitle", "20 items"),
                (#"{"items":"/quotes","image":"{nope}.png"}"#, "image", "'nope'"),
                (#"{"items":"/quotes","image":"/photo"}"#, "image", "/photo"),
                (#"{"items":"/quotes","image":"/text"}"#, "image", "no asset name can be"),
                (#"{"items":"/quotes","empty":"/nope"}"#, "empty", "/nope"),
            ] {
                let refused = try client.put("/feeds/quotes/profile", json: json)
                #expect(refused.status == 422, "\(json)")
                #expect(refused.json["member"] as? String == member, "\(json)")
                #expect((refused.json["detail"] as? String)?.contains(named) == true, "\(json): \(refused.text)")
            }
            #expect(try client.get("/feeds/quotes/profile").status == 404, "nothing stored")
            #expect(try client.put("/feeds/quotes/profile", json: Self.profile).status == 201, "a fitting one is")
            // An empty array shows no item's members: only items and empty are judged.
            _ = try client.put("/feeds/none", json: #"{"quotes":[],"emptyText":"None"}"#)
            let fits = #"{"items":"/quotes","title":"/nope","image":"{nope}.png","empty":"/emptyText"}"#
            #expect(try client.put("/feeds/none/profile", json: fits).status == 201)
        }
    }

    @Test func warningsFollowTheProfileAndThePublishAtOnce() throws {
        try withTestServer { (_, client) throws -> Void in
            #expect(try client.put("/feeds/g", json: #"{"quotes":[{"id":"q1","text":"a"}]}"#).status == 201)
            let codes = { () throws -> [String] in
                let answer = try client.get("/feeds/g/warnings")
                return (answer.json["warnings"] as? [[String: Any]])?.compactMap { $0["code"] as? String } ?? []
            }
            #expect(try codes().isEmpty)
            // Within the second an answer is reused for: a new profile and a new publish still show.
            #expect(try client.put("/feeds/g/profile", json: #"{"items":"/quotes","image":"{id}.jpg"}"#).status == 201)
            #expect(try codes() == ["item-image-missing"])
            #expect(try client.put("/feeds/g", json: #"{"quotes":[{"id":"q1","text":"a"},{"id":"q2"}]}"#).status == 201)
            #expect(try codes() == ["item-image-missing", "item-image-missing"])
        }
    }

    @Test func deletingTheFeedKeepsTheProfile() throws {
        try withTestServer { (_, client) throws -> Void in
            #expect(try client.put("/feeds/quotes/profile", json: Self.profile).status == 201)
            #expect(try Self.publishReadmeExample(client).status == 201)
            #expect(try client.request("DELETE", "/feeds/quotes").status == 204)
            #expect(try client.get("/feeds/quotes/profile").status == 200)
            #expect((try client.get("/feeds").json["groups"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func writesNeedTheWriteTokenAndReadsTheReadToken() throws {
        try withTestServer(configure: {
            $0.token = "writer"
            $0.readToken = "reader"
        }) { (_, client) throws -> Void in
            let reader = [("Authorization", "Bearer reader")]
            let writer = [("Authorization", "Bearer writer")]
            #expect(try client.put("/feeds/g/profile", json: Self.profile).status == 401)
            #expect(try client.put("/feeds/g/profile", json: Self.profile, headers: reader).status == 401)
            #expect(try client.put("/feeds/g/profile", json: Self.profile, headers: writer).status == 201)
            #expect(try client.get("/feeds/g/profile").status == 401)
            #expect(try client.get("/feeds/g/profile", headers: reader).status == 200)
            #expect(try client.request("DELETE", "/feeds/g/profile", headers: reader).status == 401)
        }
    }

    @Test func theReadmeExampleWarnsOnceForEachQuoteWithoutAPhoto() throws {
        try withTestServer { (_, client) throws -> Void in
            // Without a profile the items and the name template are inferred.
            let inferred = try Self.publishReadmeExample(client)
            #expect(inferred.status == 201)
            let warnings = try #require(inferred.json["warnings"] as? [[String: Any]])
            #expect(warnings.map { $0["code"] as? String } == Array(repeating: "item-image-missing", count: 10))
            #expect(warnings.map { $0["asset"] as? String } == (11...20).map { "q\($0).png" })
            #expect(warnings.first?["pointer"] as? String == "/quotes/10")
            let profile = try #require(inferred.json["profile"] as? [String: Any])
            #expect(profile["source"] as? String == "inferred")
            #expect(profile["image"] as? String == "{id}.png")
            #expect(profile["inferred"] as? [String] == ["items", "image"])
            // The same from /warnings, and with a stated profile, which adds nothing here.
            #expect(try client.put("/feeds/quotes/profile", json: Self.profile).status == 201)
            let served = try client.get("/feeds/quotes/warnings")
            #expect((served.json["warnings"] as? [Any])?.count == 10)
            #expect((served.json["profile"] as? [String: Any])?["source"] as? String == "stored")
            var strict = MultipartBody()
            strict.field("payload", #"{"quotes":[{"id":"q1","text":"a"},{"id":"q9","text":"b"}]}"#)
            strict.file("file", filename: "q1.png", Self.photo, contentType: "image/png")
            let refused = try client.putMultipart("/feeds/quotes?lint=strict", strict)
            #expect(refused.status == 422)
            #expect(refused.text.contains("item-image-missing"))
            #expect(refused.text.contains("empty-state-missing"))
        }
    }

    @Test func theTimelineResolvesEachHoursItemAndPhoto() throws {
        try withTestServer { (_, client) throws -> Void in
            #expect(try Self.publishReadmeExample(client).status == 201)
            #expect(try client.put("/feeds/quotes/profile", json: Self.profile).status == 201)
            // Slot 498_180 (UTC) shows index 0 (q1); 24 hours cover every quote's first 4 twice.
            let start: Int64 = 498_180 * 3_600_000
            let response = try client.get("/feeds/quotes/timeline?start=\(start)")
            #expect(response.status == 200)
            let entries = try #require(response.json["entries"] as? [[String: Any]])
            #expect(entries.count == 24)
            for (hour, entry) in entries.enumerated() {
                let index = hour % 20
                #expect(entry["index"] as? Int == index)
                #expect(entry["pointer"] as? String == "/quotes/\(index)")
                #expect(entry["title"] as? String == "Quote \(index + 1)")
                let image = entry["image"] as? [String: Any]
                let warning = entry["warning"] as? [String: Any]
                if index < 10 {
                    #expect(image?["name"] as? String == "q\(index + 1).png")
                    #expect(image?["width"] as? Int == 300)
                    let url = try #require(image?["url"] as? String)
                    #expect(try client.get(url).status == 200)
                    #expect(warning == nil)
                } else {
                    #expect(image == nil)
                    #expect(warning?["code"] as? String == "item-image-missing")
                    #expect(warning?["asset"] as? String == "q\(index + 1).png")
                }
            }
            // A query parameter overrides the profile, and says so.
            let overridden = try client.get("/feeds/quotes/timeline?start=\(start)&hours=1&title=/id")
            #expect((overridden.json["entries"] as? [[String: Any]])?.first?["title"] as? String == "q1")
            #expect((overridden.json["profile"] as? [String: Any])?["source"] as? String == "query")
            #expect(try client.get("/feeds/quotes/timeline?image={id.png").status == 422)
        }
    }

    @Test func anEmptyArrayShowsTheEmptyStateEveryHour() throws {
        try withTestServer { (_, client) throws -> Void in
            #expect(try client.put("/feeds/quotes/profile", json: Self.profile).status == 201)
            #expect(try client.put("/feeds/quotes", json: #"{"quotes":[],"emptyText":"No quotes yet"}"#).status == 201)
            let response = try client.get("/feeds/quotes/timeline?hours=3")
            #expect(response.status == 200)
            #expect(response.json["count"] as? Int == 0)
            let entries = try #require(response.json["entries"] as? [[String: Any]])
            #expect(entries.count == 3)
            #expect(entries.allSatisfy { $0["empty"] as? String == "No quotes yet" && $0["index"] is NSNull })
        }
    }

    @Test func aZoneWithDaylightSavingGivesTheDevicesHours() throws {
        try withTestServer { (_, client) throws -> Void in
            #expect(try Self.publishReadmeExample(client).status == 201)
            // 2026-10-25, local midnight in Berlin: a 25-hour day.
            let response = try client.get("/feeds/quotes/timeline?zone=Europe/Berlin&hours=25&start=1792879200000")
            let entries = try #require(response.json["entries"] as? [[String: Any]])
            #expect(response.json["zone"] as? String == "Europe/Berlin")
            #expect(entries.prefix(4).map { $0["zoneOffsetSeconds"] as? Int } == [7200, 7200, 7200, 3600])
            #expect(entries[2]["index"] as? Int == entries[3]["index"] as? Int, "the repeated hour shows one item")
            #expect(try client.get("/feeds/quotes/timeline?zone=Nowhere/Else").status == 422)
        }
    }

    @Test func aSeedFolderAndAnArchiveCarryTheProfile() throws {
        let seed = SeedTests.Seed()
        try seed.write("quotes", "payload.json", #"{"quotes":[{"id":"q1","text":"a"},{"id":"q2","text":"b"}]}"#)
        try seed.write("quotes", "profile.json", Self.profile)
        try seed.write("quotes", "assets/q1.png", Self.photo)
        try withTestServer(configure: { $0.seed = seed.path }) { (_, client) throws -> Void in
            #expect(try client.get("/feeds/quotes/profile").text == Self.profile + "\n")
            let warnings = try client.get("/feeds/quotes/warnings").json["warnings"] as? [[String: Any]]
            #expect(warnings?.map { $0["code"] as? String } == ["item-image-missing", "empty-state-missing"])
            let archive = try client.get("/feeds/quotes/archive")
            let reader = try TarReader(bytes: archive.body)
            var names: [String] = []
            while let entry = try reader.next() { names.append(entry.path ?? "") }
            #expect(names.contains("profile.json"))
            let restored = try client.request(
                "PUT", "/feeds/copy/archive", headers: [("Content-Type", "application/x-tar")], body: archive.body)
            #expect(restored.status == 201)
            #expect(try client.get("/feeds/copy/profile").text == Self.profile + "\n")
            // Another profile, other archive bytes: another ETag.
            #expect(try client.put("/feeds/quotes/profile", json: #"{"items":"/quotes"}"#).status == 200)
            #expect(try client.get("/feeds/quotes/archive").header("ETag") != archive.header("ETag"))
        }
        try seed.write("bad", "payload.json", "[]")
        try seed.write("bad", "profile.json", #"{"items":"x"}"#)
        #expect(throws: (any Error).self) {
            try withTestServer(configure: {
                $0.seed = seed.path
                $0.seedStrict = true
            }) { _, _ in }
        }
    }
}
