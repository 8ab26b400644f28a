import Foundation
import Testing

@testable import FeedServerKit

/// A shutdown keeps to its timeout even when a request never finishes: the wait for requests in
/// flight ends early enough for closing the connections and stopping the daemon to fit in it.
@Suite struct ShutdownTimeoutTests {
    @Test func aShutdownWithARequestThatNeverEndsKeepsToItsTimeout() throws {
        try withTestServer { server, client in
            #expect(try client.put("/feeds/g", json: "[1]").status == 201)
            // Until the publish has completed, the one request in flight could be it.
            try server.waitUntilNothingInFlight()
            // A body that never arrives whole: the request stays in flight until it is cut.
            let stalled = try HTTPTestConnection(port: server.port)
            try stalled.sendRaw(
                Array(
                    "PUT /feeds/h HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n["
                        .utf8))
            // The stalled publish itself, admitted (its declared 1,000 bytes reserved), and
            // nothing else: a request counted in flight is not taken for it.
            try waitUntil { server.daemon.requestsInFlight == 1 && server.daemon.inflightBytes == 1000 }
            let before =
                "before: \(server.daemon.requestsInFlight) in flight, \(server.daemon.inflightBytes) bytes, \(stalled.fate())"
            let started = Date()
            server.shutdown(timeoutSeconds: 5)
            let elapsed = Date().timeIntervalSince(started)
            #expect(elapsed < 5, "shut down in \(elapsed) s")
            let fate =
                "\(before); after: \(stalled.fate()); \(server.daemon.connectionsCut) connection(s) cut by the watchdog"
            #expect(elapsed > 3, "the request in flight was waited for (\(elapsed) s): \(fate)")
            withExtendedLifetime(stalled) {}
        }
    }
}
