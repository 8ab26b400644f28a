import CMicroHTTPD
import Testing

/// The line the daemon's logger makes of a libmicrohttpd message (`CMicroHTTPD_log_line`).
@Suite struct MicroHTTPDLogTests {
    private func line(_ message: [UInt8], capacity: Int = 256) -> String {
        var buffer = [CChar](repeating: 0, count: capacity)
        let length = (message + [0]).withUnsafeBufferPointer { text in
            text.withMemoryRebound(to: CChar.self) { CMicroHTTPD_log_line($0.baseAddress, &buffer, capacity) }
        }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test func aMessageBecomesOnePrefixedLine() {
        #expect(
            line(Array("Error processing request.\n".utf8)) == "feed-server: libmicrohttpd: Error processing request.\n"
        )
    }

    /// What a message quotes from a client can neither end the line nor reach the terminal as
    /// an escape sequence.
    @Test func controlAndNonASCIIBytesAreEscaped() {
        let message: [UInt8] = Array("a\r\nforged\u{1B}[31m ".utf8) + [0x7F, 0xC3, 0xA9] + Array(" 100%\n".utf8)
        #expect(line(message) == "feed-server: libmicrohttpd: a%0D%0Aforged%1B[31m %7F%C3%A9 100%\n")
    }

    @Test func aLongMessageIsCutToFitAndStillEndsTheLine() {
        let cut = line(Array(repeating: UInt8(ascii: "x"), count: 500), capacity: 64)
        #expect(cut.utf8.count <= 64)
        #expect(cut.hasPrefix("feed-server: libmicrohttpd: x"))
        #expect(cut.hasSuffix("x\n"))
        #expect(line(Array("x".utf8), capacity: 8).isEmpty, "no room for the prefix: nothing")
    }
}
