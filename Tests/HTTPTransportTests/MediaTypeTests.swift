import CMicroHTTPD
import Testing

@testable import HTTPTransport

/// A `Content-Type`'s essence, as routes compare it.
@Suite struct MediaTypeTests {
    @Test(arguments: [
        ("application/json", "application/json"),
        ("Application/JSON; charset=utf-8", "application/json"),
        (" \tmultipart/form-data ; boundary=x", "multipart/form-data"),
        ("text/plain;", "text/plain"),
        (";charset=utf-8", ""),
        ("", ""),
        ("   ", ""),
        ("Application/\u{212A}ML", "application/kml"),
        ("App-1\u{01E8}iDon/JSON; charset=utf-8", "app-1\u{01E9}idon/json"),
    ])
    func essence(value: String, expected: String) {
        #expect(MediaType.essence(value) == expected)
        #expect(expected == expected.lowercased(), "the essence is lowercase whatever was sent")
        let request = HTTPRequest(
            method: "PUT", rawPath: "/", query: RequestFields(given: [], kind: .GET_ARGUMENT_KIND),
            headers: RequestFields(given: [("content-type", value)], kind: .HEADER_KIND))
        #expect(request.mediaType == expected)
    }
}
