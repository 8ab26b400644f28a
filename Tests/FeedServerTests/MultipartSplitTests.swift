import FeedImagingTesting
import Foundation
import Testing

@testable import FeedServerKit

/// A multipart publish is the same publish however the network splits its bytes: libmicrohttpd's
/// post processor hands a part over in pieces that depend on where each read ends.
@Suite struct MultipartSplitTests {
    /// An image, then the payload last (as `curl -F p=@a.jpg -F payload=@feed.json` sends it).
    private static func body() throws -> MultipartBody {
        var body = MultipartBody()
        body.file("p0", filename: "p0.jpg", try TestImages.jpeg(width: 64, height: 48), contentType: "image/jpeg")
        body.field("payload", #"{"photos":1}"#, contentType: "application/json")
        return body
    }

    /// Where the payload's value begins: after the blank line that ends its part's headers.
    private static func valueStart(_ bytes: [UInt8]) throws -> Int {
        let name = Array(#"name="payload""#.utf8)
        let header = try #require(bytes.firstRange(of: name))
        let blank = try #require(bytes[header.upperBound...].firstRange(of: Array("\r\n\r\n".utf8)))
        return blank.upperBound
    }

    /// Reads that end just before, at, or a few bytes into the payload's value: libmicrohttpd then
    /// announces the part with an empty piece and sends its first bytes at offset 0 again, right
    /// after a file part. Each is one payload, published.
    @Test(arguments: -2...6)
    func aPayloadAfterAnImageIsOnePartWhereverAReadEnds(_ shift: Int) throws {
        let body = try Self.body()
        let bytes = body.finished
        let cut = try Self.valueStart(bytes) + shift
        try withTestServer { server, _ in
            let connection = try HTTPTestConnection(port: server.port)
            let head =
                "PUT /feeds/split HTTP/1.1\r\nHost: x\r\nContent-Type: \(body.contentType)\r\n"
                + "Content-Length: \(bytes.count)\r\n\r\n"
            try connection.sendRaw(Array(head.utf8) + bytes[..<cut])
            // Time for the server to read the first piece on its own.
            usleep(50_000)
            try connection.sendRaw(Array(bytes[cut...]))
            let answer = try connection.readResponse()
            #expect(answer.status == 201, "\(answer.text)")
            #expect(answer.json["assets"].map { ($0 as? [Any])?.count } == 1, "\(answer.text)")
        }
    }
}
