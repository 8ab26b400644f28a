import FeedStore
import Foundation
import HTTPTransport
import Testing

@testable import FeedServerKit

/// Exported archives are written once per generation and profile, and shared by the exports
/// that follow; another generation or profile is another archive.
@Suite struct ExportFilesTests {
    private static func key(_ number: Int) -> ExportSizes.Key {
        ExportSizes.Key(group: "g", generationId: "gen-\(number)", entityTag: "\"t\(number)\"")
    }

    /// A kept archive is handed out as descriptors of its own; past `capacity` the least recently
    /// used goes.
    @Test func keptArchivesAreSharedAndBounded() throws {
        let scratch = ScratchDirectory()
        let files = ExportFiles()
        for number in 0...ExportFiles.capacity {
            let name = "a\(number).tar"
            try Data(repeating: UInt8(number), count: 100 + number).write(
                to: URL(fileURLWithPath: scratch.path + "/" + name))
            files.keep(try PosixFileSystem().openBeneath(scratch.path, [name]), for: Self.key(number))
            if number == 1 { #expect(files.responseFile(Self.key(0))?.size == 100, "used again: now the newest") }
        }
        #expect(files.responseFile(Self.key(1)) == nil, "the least recently used went")
        #expect(files.responseFile(Self.key(0))?.size == 100)
        #expect(files.responseFile(Self.key(ExportFiles.capacity))?.size == 100 + ExportFiles.capacity)
        let first = try #require(files.responseFile(Self.key(2)))
        let second = try #require(files.responseFile(Self.key(2)))
        #expect(first.size == 102 && second.size == 102, "one file, a descriptor for each answer")
    }

    /// Exports of one generation send the same bytes; a new generation, or a new profile, is a new
    /// archive (never the one kept for the old).
    @Test func anotherGenerationOrProfileIsAnotherArchive() throws {
        try withTestServer { _, client in
            #expect(try client.put("/feeds/g", json: #"{"quotes":[{"text":"one"}]}"#).status == 201)
            let first = try client.get("/feeds/g/archive")
            let again = try client.get("/feeds/g/archive")
            #expect(first.status == 200 && again.status == 200)
            #expect(first.body == again.body)
            #expect(try client.put("/feeds/g", json: #"{"quotes":[{"text":"two"}]}"#).status == 201)
            let newer = try client.get("/feeds/g/archive")
            #expect(newer.header("ETag") != first.header("ETag"))
            #expect(String(decoding: newer.body, as: UTF8.self).contains(#""two""#))
            #expect(try client.put("/feeds/g/profile", json: #"{"items":"/quotes","title":"/text"}"#).status == 201)
            let profiled = try client.get("/feeds/g/archive")
            #expect(profiled.header("ETag") != newer.header("ETag"))
            #expect(String(decoding: profiled.body, as: UTF8.self).contains("profile.json"))
        }
    }

    /// A generation edited in place (same size, by hand) is exported as it now is, as the feed
    /// read serves it: the kept archive is used only while the files it was written from hold.
    @Test func aGenerationEditedInPlaceIsExportedAsItIsNow() throws {
        let scratch = ScratchDirectory()
        try withTestServer(root: scratch.path) { server, client in
            let published = try client.put("/feeds/g", json: #"{"quotes":[{"text":"one"}]}"#)
            let id = try #require(published.json["generationId"] as? String)
            let first = try client.get("/feeds/g/archive")
            #expect(String(decoding: first.body, as: UTF8.self).contains(#""one""#))
            let feed = server.store.root + "/g/generations/\(id)/feed.json"
            let edited = try String(contentsOfFile: feed, encoding: .utf8).replacingOccurrences(of: "one", with: "two")
            try Data(edited.utf8).write(to: URL(fileURLWithPath: feed))
            try waitUntil { String(decoding: try client.get("/feeds/g").body, as: UTF8.self).contains(#""two""#) }
            let second = try client.get("/feeds/g/archive")
            #expect(String(decoding: second.body, as: UTF8.self).contains(#""two""#), "not the archive kept before")
        }
    }
}
