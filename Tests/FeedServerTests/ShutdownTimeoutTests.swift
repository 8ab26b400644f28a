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
            try waitUntil { server.daemon.requestsInFlight == 1 }
            let started = Date()
            server.shutdown(timeoutSeconds: 5)
            let elapsed = Date().timeIntervalSince(started)
            #expect(elapsed < 5, "shut down in \(elapsed) s")
            #expect(elapsed > 3, "the request in flight was waited for (\(elapsed) s)")
            withExtendedLifetime(stalled) {}
        }
    }
}
