import FeedArchive
import FeedImaging
import FeedImagingTesting
import FeedStore
import Foundation
import Testing

@testable import FeedServerKit

/// A tar built by hand (ustar headers), so hostile entries can be written exactly.
struct HandTar {
    private(set) var bytes: [UInt8] = []

    /// Adds an entry; `declaredSize` overrides the size field (the data written is `data`), and
    /// `patch` sets fields there is no parameter for, before the checksum is taken.
    mutating func entry(
        _ name: String, type: Character = "0", data: [UInt8] = [], link: String = "", declaredSize: Int? = nil,
        patch: (inout [UInt8]) -> Void = { _ in }
    ) {
        var header = [UInt8](repeating: 0, count: 512)
        func put(_ text: String, at offset: Int, width: Int) {
            for (index, byte) in text.utf8.prefix(width).enumerated() { header[offset + index] = byte }
        }
        func octal(_ value: Int, width: Int) -> String {
            let digits = String(value, radix: 8)
            return String(repeating: "0", count: max(0, width - 1 - digits.count)) + digits
        }
        put(name, at: 0, width: 100)
        put(octal(0o644, width: 8), at: 100, width: 8)
        put(octal(0, width: 8), at: 108, width: 8)
        put(octal(0, width: 8), at: 116, width: 8)
        put(octal(declaredSize ?? data.count, width: 12), at: 124, width: 12)
        put(octal(1_700_000_000, width: 12), at: 136, width: 12)
        put(String(type), at: 156, width: 1)
        put(link, at: 157, width: 100)
        put("ustar", at: 257, width: 6)
        put("00", at: 263, width: 2)
        patch(&header)
        for index in 148..<156 { header[index] = 0x20 }
        let sum = header.reduce(0) { $0 + Int($1) }
        put(octal(sum, width: 7), at: 148, width: 7)
        bytes += header + data + [UInt8](repeating: 0, count: (512 - data.count % 512) % 512)
    }

    /// Adds a pax extended header (type `x`) for the entry that follows, its records written
    /// as `<length> <key>=<value>\n`, the length counting its own digits.
    mutating func pax(_ records: [(String, String)]) {
        let data = records.flatMap { key, value in
            let record = " \(key)=\(value)\n"
            var length = record.utf8.count + 1
            while String(length).count + record.utf8.count != length { length += 1 }
            return Array("\(length)\(record)".utf8)
        }
        entry("PaxHeaders/entry", type: "x", data: data)
    }

    /// The archive with its two zero blocks.
    var finished: [UInt8] { bytes + [UInt8](repeating: 0, count: 1024) }
}

/// `GET`/`PUT /feeds/{group}/archive` against the real server.
@Suite struct ArchiveTests {
    static let photo = try! TestImages.jpeg(width: 1200, height: 900)
    static let badge = try! TestImages.png(width: 300, height: 200, kind: .rgbWithTransparentRightHalf)

    /// Whether the root's upload folder is (or within 10 s becomes) empty: a request's folder is
    /// removed when the work-pool thread that answered it lets go of the request, which may be
    /// just after the client has read the answer.
    private func uploadsEmptied(_ root: String) throws -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while true {
            // One folder per server process, holding its lock file and the requests' folders
            // (beside them, `prepare.lock`, which starts take turns on).
            let processes = try FileManager.default.contentsOfDirectory(atPath: root + "/.feed-server-uploads").filter {
                $0 != "prepare.lock"
            }
            let left = try processes.flatMap {
                try FileManager.default.contentsOfDirectory(atPath: root + "/.feed-server-uploads/" + $0)
            }
            if left.allSatisfy({ $0 == "owner.lock" }) { return true }
            if Date() > deadline { return false }
            usleep(10_000)
        }
    }

    private func putTar(_ client: HTTPTestClient, _ path: String, _ tar: [UInt8]) throws -> WireResponse {
        try client.request("PUT", path, headers: [("Content-Type", "application/x-tar")], body: tar)
    }

    @Test func anExportRestoredIntoAnotherGroupHasTheSameFingerprint() throws {
        let scratch = ScratchDirectory()
        try withTestServer(root: scratch.path) { _, client in
            var body = MultipartBody()
            body.field(
                "payload", #"{"items":[{"image":"sun.jpg"},{"image":"badge.png"}],"emptyText":"none"}"#,
                contentType: "application/json")
            body.file("a", filename: "sun.jpg", Self.photo)
            body.file("b", filename: "badge.png", Self.badge)
            #expect(try client.putMultipart("/feeds/origin?schemaVersion=3", body).status == 201)
            let original = try client.get("/feeds/origin")

            let archive = try client.get("/feeds/origin/archive")
            #expect(archive.status == 200)
            #expect(archive.header("Content-Type") == "application/x-tar")
            #expect(archive.header("ETag") == original.header("ETag"))
            // The archive is in the seed layout, read back with libarchive.
            let reader = try TarReader(bytes: archive.body)
            var names: [String] = []
            var meta: [UInt8] = []
            while let entry = try reader.next() {
                names.append(entry.path ?? "?")
                var data: [UInt8] = []
                try reader.readData(limit: .max) { data += $0 }
                if entry.path == "meta.json" { meta = data }
            }
            #expect(
                names == ["meta.json", "payload.json", "assets", "assets/badge.png", "assets/sun.jpg"]
                    || names == ["meta.json", "payload.json", "assets/", "assets/badge.png", "assets/sun.jpg"])
            let metaJSON = try #require(try JSONSerialization.jsonObject(with: Data(meta)) as? [String: Any])
            #expect(metaJSON["schemaVersion"] as? Int == 3)
            #expect(metaJSON["fingerprint"] as? String == original.json["fingerprint"] as? String)
            #expect(metaJSON["generationId"] as? String == original.json["generationId"] as? String)

            let restored = try putTar(client, "/feeds/copy/archive", archive.body)
            #expect(restored.status == 201)
            #expect(restored.json["fingerprint"] as? String == original.json["fingerprint"] as? String)
            let copy = try client.get("/feeds/copy")
            #expect(copy.header("ETag") == original.header("ETag"))
            #expect(copy.json["schemaVersion"] as? Int == 3)
            #expect(
                NSDictionary(dictionary: copy.json["payload"] as? [String: Any] ?? [:])
                    == NSDictionary(dictionary: original.json["payload"] as? [String: Any] ?? [:]))
            // The same asset bytes are served.
            for (originalAsset, copiedAsset) in zip(
                original.json["assets"] as? [[String: Any]] ?? [], copy.json["assets"] as? [[String: Any]] ?? [])
            {
                let a = try client.get(try #require(originalAsset["url"] as? String))
                let b = try client.get(try #require(copiedAsset["url"] as? String))
                #expect(a.status == 200 && a.body == b.body)
            }
            // Restoring again changes nothing; exporting the copy gives the same payload and assets.
            #expect(try putTar(client, "/feeds/copy/archive", archive.body).status == 200)
            #expect(try client.get("/feeds/copy/archive").header("ETag") == archive.header("ETag"))
            #expect(
                try client.get("/feeds/origin/archive", headers: [("If-None-Match", archive.header("ETag") ?? "")])
                    .status == 304)
        }
        // Exports are written to the upload folder and sent from there; nothing stays behind.
        #expect(try uploadsEmptied(scratch.path))
    }

    /// An archive's `304` states 0, as a feed's does; with `--not-modified-length representation`
    /// the length of the `200` it stands for: measured when no export came first, remembered from
    /// one after. A name past ustar's 100 bytes gets a pax header, which the measure must count too.
    @Test(arguments: [true, false])
    func anArchives304StatesTheLengthOfIts200(statesLength: Bool) throws {
        try withTestServer(configure: { $0.transport.notModifiedStatesLength = statesLength }) { _, client in
            let name = String(repeating: "s", count: 110) + ".jpg"
            var body = MultipartBody()
            body.field("payload", #"{"image":"\#(name)"}"#, contentType: "application/json")
            body.file("a", filename: name, Self.photo)
            #expect(try client.putMultipart("/feeds/g", body).status == 201)
            let tag = try #require(try client.get("/feeds/g").header("ETag"))
            let measured = try client.get("/feeds/g/archive", headers: [("If-None-Match", tag)])
            let full = try client.get("/feeds/g/archive")
            let remembered = try client.get("/feeds/g/archive", headers: [("If-None-Match", tag)])
            #expect(full.status == 200 && full.body.count > 1024)
            for answer in [measured, remembered] {
                #expect(answer.status == 304)
                #expect(
                    answer.headers.filter { $0.0.lowercased() == "content-length" }.map(\.1)
                        == [statesLength ? String(full.body.count) : "0"])
                #expect(answer.header("ETag") == tag)
            }
        }
    }

    /// The measured attack (`SparseTar.pax01`, 4,096 bytes, an asset of 255 MiB, 65 bytes stored)
    /// against a server process of its own, so what it writes and its peak RSS are counted alone.
    /// Expanded as libarchive reads it, under the largest budget a client may ask for, it writes
    /// 510 MiB (the request's folder, then the store), peaks at 800 MiB RSS and keeps 255 MiB: it
    /// must be a 400 naming the entry that writes nothing but the body's spool, the feed before
    /// it still served.
    @Test(.enabled(if: !underAddressSanitizer, "peak RSS means nothing under ASan"))
    func aSparseArchiveIsRefusedBeforeItWritesAByte() throws {
        let scratch = ScratchDirectory()
        let root = scratch.path + "/data"
        let child = try ChildServer(arguments: ["--port", "0", "--root", root, "--access-log", "off"])
        let client = HTTPTestClient(port: try child.waitForPort())
        let published = try client.put("/feeds/g", json: #"{"v":1}"#)
        #expect(published.status == 201)
        func field(_ file: String, _ name: String) throws -> Int {
            let text = try String(contentsOfFile: "/proc/\(child.process.processIdentifier)/\(file)", encoding: .utf8)
            let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(name + ":") })
            return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        }
        func rootBytes() throws -> Int {
            let files = FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? []
            return try files.reduce(0) {
                $0 + (try FileManager.default.attributesOfItem(atPath: root + "/" + $1)[.size] as? Int ?? 0)
            }
        }
        // wchar counts every write(2), sockets included: here the body's spool and the answers.
        let (written, peak, stored) = (try field("io", "wchar"), try field("status", "VmHWM"), try rootBytes())
        let refused = try putTar(
            client, "/feeds/g/archive?maxBytes=1073741824&budgetBytes=4294967296", SparseTar.pax01.bytes)
        #expect(refused.status == 400, "\(refused.text)")
        #expect(refused.json["type"] as? String == "https://feed-server.invalid/problems/invalid-archive-entry")
        #expect(refused.text.contains("'assets/big.png' is sparse"), "\(refused.text)")
        let wrote = try field("io", "wchar") - written
        #expect(wrote < 64 << 10, "wrote \(wrote) bytes")
        let grew = try field("status", "VmHWM") - peak
        #expect(grew < 32 << 10, "peak RSS grew by \(grew) KiB")
        #expect(try uploadsEmptied(root))
        let kept = try rootBytes() - stored
        #expect(kept < 64 << 10, "the root grew by \(kept) bytes")
        #expect(try client.get("/feeds/g").header("ETag") == published.header("ETag"))
    }

    @Test func repackingOnRestoreUsesTheBudget() throws {
        try withTestServer { _, client in
            var tar = HandTar()
            tar.entry("payload.json", data: Array(#"{"image":"big.jpg"}"#.utf8))
            tar.entry("assets/big.jpg", data: Self.photo)
            // As is: the 1200 px photo is kept byte for byte.
            let kept = try putTar(client, "/feeds/raw/archive", tar.finished)
            #expect(kept.status == 201)
            #expect((kept.json["assets"] as? [[String: Any]])?.first?["bytes"] as? Int == Self.photo.count)
            let packed = try putTar(client, "/feeds/packed/archive?images=pack", tar.finished)
            #expect(packed.status == 201)
            #expect((packed.json["assets"] as? [[String: Any]])?.first?["width"] as? Int == 512)
        }
    }

    /// Entries no archive may hold.
    enum Hostile: String, CaseIterable, Sendable {
        case absolutePath, dotDot, symbolicLink, hardLink, characterDevice, fifo, unknownEntry, nestedAssetFolder,
            notATar

        func add(to tar: inout HandTar) {
            switch self {
            case .absolutePath: tar.entry("/payload.json", data: Array("{}".utf8))
            case .dotDot: tar.entry("assets/../../x.jpg", data: [1, 2, 3])
            case .symbolicLink: tar.entry("assets/x.jpg", type: "2", link: "/etc/passwd")
            case .hardLink: tar.entry("assets/x.jpg", type: "1", link: "payload.json")
            case .characterDevice: tar.entry("assets/x.jpg", type: "3")
            case .fifo: tar.entry("assets/x.jpg", type: "6")
            case .unknownEntry: tar.entry("notes.txt", data: Array("hi".utf8))
            case .nestedAssetFolder: tar.entry("assets/sub/x.jpg", data: [1])
            case .notATar: break
            }
        }
    }

    @Test(arguments: Hostile.allCases)
    func hostileArchivesAreRefusedWith400AndNothingIsPublished(_ hostile: Hostile) throws {
        let scratch = ScratchDirectory()
        try withTestServer(root: scratch.path) { _, client in
            var tar = HandTar()
            tar.entry("payload.json", data: Array(#"{"ok":true}"#.utf8))
            hostile.add(to: &tar)
            let body =
                hostile == .notATar
                ? Array("this is not a tar archive at all".utf8) + [UInt8](repeating: 7, count: 600) : tar.finished
            let response = try putTar(client, "/feeds/target/archive", body)
            #expect(response.status == 400, "\(hostile): \(response.text)")
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(!response.text.contains(scratch.path))
            let read = try client.get("/feeds/target")
            #expect(read.status == 404)
        }
        // The spooled body and anything unpacked go with the request.
        #expect(try uploadsEmptied(scratch.path))
    }

    /// `curl --data-binary @missing.tar` sends no bytes: the answer says so, not "no tar format".
    @Test func anEmptyBodyIsCalledEmpty() throws {
        try withTestServer { _, client in
            let response = try putTar(client, "/feeds/target/archive", [])
            #expect(response.status == 400)
            #expect(response.json["type"] as? String == "https://feed-server.invalid/problems/invalid-archive")
            #expect(
                (response.json["detail"] as? String)?.hasPrefix(
                    "The archive has no bytes at all (over HTTP, an empty body") == true, "\(response.text)")
        }
    }

    /// A PNG of `width` × `height` pixels by its header alone: IHDR says so, nothing else is
    /// there to decode (a decompression bomb's shape).
    static func pngHeader(width: UInt32, height: UInt32) -> [UInt8] {
        func bigEndian(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
        func crc32(_ bytes: [UInt8]) -> UInt32 {
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            }
            return ~crc
        }
        func chunk(_ kind: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(kind.utf8) + data
            return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
        }
        let header = chunk("IHDR", bigEndian(width) + bigEndian(height) + [8, 2, 0, 0, 0])
        // An empty zlib stream as the only image data: nothing is there to decode.
        let data = chunk("IDAT", [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + header + data + chunk("IEND", [])
    }

    /// An as-is restore stores bytes unchanged, but only images every other publish would take:
    /// a JPEG or PNG name, a header the encoder reads, pixels within --max-image-pixels (from
    /// the header). Anything else is a 422 (an as-is restore is all or nothing), nothing written.
    @Test func anAsIsRestoreTakesOnlyImagesAnyPublishWouldTake() throws {
        try withTestServer { _, client in
            let cases: [(String, [UInt8], String)] = [
                ("bomb.png", Self.pngHeader(width: 60000, height: 60000), "exceeds the limit"),
                ("page.png", Array("<html><script>alert(1)</script></html>".utf8), "cannot be decoded"),
                ("page.html", Array("<html></html>".utf8), "must end in .jpg, .jpeg or .png"),
            ]
            for (name, bytes, reason) in cases {
                var tar = HandTar()
                tar.entry("payload.json", data: Array(#"{"image":"\#(name)"}"#.utf8))
                tar.entry("assets/\(name)", data: bytes)
                let response = try putTar(client, "/feeds/restored/archive", tar.finished)
                #expect(response.status == 422, "\(name): \(response.text)")
                let skipped = response.json["skipped"] as? [[String: Any]]
                #expect((skipped?.first?["reason"] as? String)?.contains(reason) == true, "\(name): \(response.text)")
                #expect(try client.get("/feeds/restored").status == 404, "\(name): nothing published")
            }
        }
    }

    @Test func tooManyEntriesIs413() throws {
        try withTestServer(configure: { $0.transport.maxParts = 3 }) { _, client in
            var tar = HandTar()
            tar.entry("payload.json", data: Array("{}".utf8))
            for index in 0..<4 { tar.entry("assets/\(index).jpg", data: Self.photo) }
            let response = try putTar(client, "/feeds/many/archive", tar.finished)
            #expect(response.status == 413)
            #expect(response.json["type"] as? String == "https://feed-server.invalid/problems/too-many-entries")
            #expect(try client.get("/feeds/many").status == 404)
        }
    }

    @Test func moreUnpackedBytesThanTheBodyLimitIs413() throws {
        try withTestServer(configure: { $0.transport.maxBodyBytes = 64 << 10 }) { _, client in
            var tar = HandTar()
            tar.entry("payload.json", data: Array("{}".utf8))
            // The header claims 1 MiB; the body itself is small enough to be admitted.
            tar.entry("assets/big.jpg", data: [UInt8](repeating: 1, count: 1024), declaredSize: 1 << 20)
            let response = try putTar(client, "/feeds/big/archive", tar.finished)
            #expect(response.status == 413)
            #expect(response.json["type"] as? String == "https://feed-server.invalid/problems/archive-too-large")
            #expect(try client.get("/feeds/big").status == 404)
        }
    }

    @Test func aRestoreIsJudgedFromItsHead() throws {
        try withTestServer(configure: {
            $0.token = "secret"
            $0.transport.maxBodyBytes = 4096
        }) { _, client in
            var tar = HandTar()
            tar.entry("payload.json", data: Array(#"{"ok":true}"#.utf8))
            let anonymous = try putTar(client, "/feeds/g/archive", tar.finished)
            #expect(anonymous.status == 401)
            // Declared longer than --max-body-bytes: refused before a byte of the body is kept.
            let connection = try HTTPTestConnection(port: client.port)
            try connection.sendRaw(
                Array(
                    ("PUT /feeds/g/archive HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer secret\r\n"
                        + "Content-Type: application/x-tar\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n")
                        .utf8))
            let tooLarge = try connection.readResponse()
            #expect(tooLarge.status == 413)
            let authorised = try client.request(
                "PUT", "/feeds/g/archive",
                headers: [("Content-Type", "application/x-tar"), ("Authorization", "Bearer secret")],
                body: tar.finished)
            #expect(authorised.status == 201)
            let read = try client.get("/feeds/g/archive")
            #expect(read.status == 200)
        }
    }

    @Test func aBodyThatIsNoTarIs415AndAMissingGroupIs404() throws {
        try withTestServer { _, client in
            let wrong = try client.request(
                "PUT", "/feeds/g/archive", headers: [("Content-Type", "application/json")], body: Array("{}".utf8))
            #expect(wrong.status == 415)
            #expect(try client.get("/feeds/none/archive").status == 404)
            var tar = HandTar()
            tar.entry("meta.json", data: Array(#"{"schemaVersion":1}"#.utf8))
            #expect(try putTar(client, "/feeds/g/archive", tar.finished).status == 400)
        }
    }
}
