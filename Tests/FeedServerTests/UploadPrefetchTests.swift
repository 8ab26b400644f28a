import FeedImagingTesting
import Foundation
import Testing

@testable import FeedImaging
@testable import FeedServerKit

/// A multipart publish's images are decoded while the rest of its body arrives, each once, and
/// nothing of it outlives a client that leaves.
@Suite struct UploadPrefetchTests {
    static let photos = (0..<3).map { try! TestImages.jpeg(width: 2000 + 100 * $0, height: 1500) }

    /// The body's bytes, and where the part of image `index` starts.
    private func body(images: Int) -> (MultipartBody, starts: [Int]) {
        var body = MultipartBody()
        body.field("payload", #"{"quotes":[]}"#, contentType: "application/json")
        var starts: [Int] = []
        for index in 0..<images {
            starts.append(body.bytes.count)
            body.file("p\(index)", filename: "p\(index).jpg", Self.photos[index], contentType: "image/jpeg")
        }
        return (body, starts)
    }

    private func head(_ path: String, _ body: MultipartBody) -> [UInt8] {
        Array(
            ("PUT \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: \(body.contentType)\r\n"
                + "Content-Length: \(body.finished.count)\r\n\r\n").utf8)
    }

    /// libmicrohttpd ends a part when it has the next part's headers: send them and a few bytes.
    private let pastTheBoundary = 400

    /// A two-image publish sent up to the start of the second image; the rest to send.
    private func sendUpToTheSecondImage(_ server: Server, _ path: String) throws -> (HTTPTestConnection, [UInt8]) {
        let (body, starts) = body(images: 2)
        let connection = try HTTPTestConnection(port: server.port)
        let cut = starts[1] + pastTheBoundary
        try connection.sendRaw(head(path, body) + body.finished[..<cut])
        return (connection, Array(body.finished[cut...]))
    }

    @Test func theFirstImageIsEncodedBeforeTheBodyEndsAndNotAgainByThePack() throws {
        try withTestServer { server, _ in
            let (connection, rest) = try sendUpToTheSecondImage(server, "/feeds/g")
            try waitUntil(seconds: 20) { server.encoder.encodes == 1 }
            #expect(server.encoder.encodes == 1, "p0 encoded while p1 has not arrived")
            try connection.sendRaw(rest)
            let answer = try connection.readResponse()
            #expect(answer.status == 201, "\(String(decoding: answer.body, as: UTF8.self))")
            #expect((answer.json["assets"] as? [[String: Any]])?.count == 2)
            #expect(server.encoder.encodes == 2, "p0 came from the cache")
        }
    }

    @Test func rawImagesAreNotDecodedAhead() throws {
        try withTestServer { server, _ in
            let (connection, rest) = try sendUpToTheSecondImage(server, "/feeds/g?images=raw")
            usleep(300_000)
            #expect(server.encoder.encodes == 0)
            try connection.sendRaw(rest)
            #expect(try connection.readResponse().status == 201)
            #expect(server.encoder.encodes == 0, "stored as they are")
        }
    }

    @Test func aClientThatLeavesMidBodyLeavesNoFilesAndGivesTheThreadBack() throws {
        // libmicrohttpd can miss a close that follows a burst until the connection times out
        // (twice --header-timeout): a short one keeps that within the wait below.
        try withTestServer(configure: { $0.transport.headerTimeoutSeconds = 2 }) { server, client in
            let free = server.prefetcher.freeThreadCount
            let (body, starts) = body(images: 3)
            do {
                let connection = try HTTPTestConnection(port: server.port)
                try connection.sendRaw(head("/feeds/g", body) + body.finished[..<(starts[2] + pastTheBoundary)])
                try waitUntil(seconds: 20) { server.encoder.encodes >= 1 }
            }  // closed mid-body
            try waitUntil(seconds: 20) { server.prefetcher.freeThreadCount == free }
            #expect(server.prefetcher.freeThreadCount == free)
            #expect(try requestFoldersLeft(server.options.root).isEmpty)
            #expect(try client.get("/feeds/g").status == 404, "nothing was published")
            #expect(try client.putMultipart("/feeds/g", body).status == 201, "and the next publish works")
        }
    }

    /// Request folders still in the upload area, once the server has had time to remove them.
    private func requestFoldersLeft(_ root: String) throws -> [String] {
        let area = root + "/.feed-server-uploads"
        var left: [String] = []
        try? waitUntil(seconds: 10) {
            left = try FileManager.default.contentsOfDirectory(atPath: area).filter { $0 != "prepare.lock" }
                .flatMap { try FileManager.default.contentsOfDirectory(atPath: area + "/" + $0) }
                .filter { $0 != "owner.lock" }
            return left.isEmpty
        }
        return left
    }

    @Test func aPublishItsHeadRefusesDecodesNothing() throws {
        try withTestServer { server, _ in
            let (connection, rest) = try sendUpToTheSecondImage(server, "/feeds/g?lint=bogus")
            usleep(300_000)
            #expect(server.encoder.encodes == 0, "refused from its query: nothing decoded ahead")
            try connection.sendRaw(rest)
            #expect(try connection.readResponse().status == 400)
            #expect(server.encoder.encodes == 0)
        }
    }

    @Test func withOneThreadNothingIsDecodedAhead() throws {
        try withTestServer(configure: { $0.transport.threads = 1 }) { server, _ in
            #expect(server.prefetcher.freeThreadCount == 0)
            let (connection, rest) = try sendUpToTheSecondImage(server, "/feeds/g")
            usleep(300_000)
            #expect(server.encoder.encodes == 0)
            try connection.sendRaw(rest)
            #expect(try connection.readResponse().status == 201)
        }
    }
}

/// Which parts are decoded ahead, without a server.
@Suite struct PrefetchGateTests {
    @Test func imagesAfterThePayloadAreDecodedAndThoseBeforeWait() {
        var gate = PrefetchGate()
        #expect(gate.admit(field: "a", name: "a.jpg") == .wait, "before the payload: left to the pack")
        #expect(gate.admit(field: "payload", name: "payload") == .wait)
        #expect(gate.admit(field: "b", name: "b.jpg") == .decode)
        #expect(gate.admit(field: "c", name: "c.png") == .decode)
    }

    @Test(arguments: [("payload", "payload"), ("c", "a.jpg"), ("c", "../x.jpg"), ("c", "a b.jpg")])
    func aPartThePublishWouldRefuseStopsTheDecoding(_ field: String, _ name: String) {
        var gate = PrefetchGate()
        #expect(gate.admit(field: "payload", name: "payload") == .wait)
        #expect(gate.admit(field: "a", name: "a.jpg") == .decode)
        #expect(gate.admit(field: field, name: name) == .refuse)
        #expect(gate.admit(field: "d", name: "d.jpg") == .wait, "nothing more once refused")
    }
}
