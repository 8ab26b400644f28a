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
        ("application/\u{212A}ml", "application/\u{212A}ml"),
    ])
    func essence(value: String, expected: String) {
        #expect(MediaType.essence(value) == expected)
        let request = HTTPRequest(
            method: "PUT", rawPath: "/", query: RequestFields(given: [], kind: .GET_ARGUMENT_KIND),
            headers: RequestFields(given: [("content-type", value)], kind: .HEADER_KIND))
        #expect(request.mediaType == expected)
    }
}
