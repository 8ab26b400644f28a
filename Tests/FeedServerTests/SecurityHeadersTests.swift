import Foundation
import HTTPTransport
import Testing

@testable import FeedServerKit

/// `X-Content-Type-Options: nosniff` on every JSON and problem answer (a browser sent to one
/// must not sniff a payload's strings into HTML), and the preview pages' Content-Security-Policy:
/// nothing inline, no framing.
@Suite struct SecurityHeadersTests {
    @Test func everyJSONAndProblemAnswerSaysNosniff() throws {
        try withTestServer(configure: { $0.faultLab = true }) { _, client in
            let published = try client.put("/feeds/g", json: #"{"a":"<script>alert(1)</script>"}"#)
            let tag = published.header("ETag") ?? ""
            let answers: [(String, WireResponse)] = [
                ("publish 201", published),
                ("publish 200", try client.put("/feeds/g", json: #"{"a":"<script>alert(1)</script>"}"#)),
                ("read, routed", try client.get("/feeds/g")), ("read, prepared", try client.get("/feeds/g")),
                ("read 304", try client.get("/feeds/g", headers: [("If-None-Match", tag)])),
                ("read 304, prepared", try client.get("/feeds/g", headers: [("If-None-Match", tag)])),
                ("read by schema", try client.get("/feeds/g?schemaVersion=1")), ("list", try client.get("/feeds")),
                ("generations", try client.get("/feeds/g/generations")),
                ("warnings", try client.get("/feeds/g/warnings")),
                ("timeline", try client.get("/feeds/g/timeline?items=/a")),
                ("rotation", try client.get("/rotation?count=3")),
                ("health", try client.get("/healthz")),
                (
                    "fault",
                    try client.request(
                        "POST", "/feeds/g/faults", headers: [("Content-Type", "application/json")],
                        body: Array(#"{"kind":"stale-tmp"}"#.utf8))
                ),
                ("404 problem", try client.get("/feeds/none")),
                ("400 problem", try client.get("/feeds/g?schemaVersion=x")),
                ("405 problem", try client.request("POST", "/feeds")),
                ("invalid JSON problem", try client.put("/feeds/g", json: "{")),
            ]
            for (name, answer) in answers {
                #expect(answer.header("X-Content-Type-Options") == "nosniff", "\(name): \(answer.status)")
                if answer.status != 304 {
                    #expect(answer.header("Content-Type")?.contains("json") == true, "\(name)")
                }
            }
        }
    }

    @Test func aProblemAndAJSONAnswerCarryNosniffWhereTheyAreBuilt() {
        #expect(Problem.notFound("x").response.header("X-Content-Type-Options") == "nosniff")
        #expect(HTTPResponse.json(200, []).header("X-Content-Type-Options") == "nosniff")
    }

    @Test func thePagesRunNothingInlineAndCannotBeFramed() throws {
        try withTestServer(configure: { $0.readToken = "rd-csp-2Hx7" }) { _, client in
            for path in ["/", "/preview/g"] {
                let page = try client.get(path)
                #expect(page.status == 200, "\(path): open with a read token")
                let policy = try #require(page.header("Content-Security-Policy"))
                let directives = Dictionary(
                    uniqueKeysWithValues: policy.split(separator: ";").map { directive in
                        let words = directive.split(separator: " ").map(String.init)
                        return (words[0], Array(words.dropFirst()))
                    })
                #expect(!policy.contains("unsafe-"), "\(policy)")
                #expect(directives["frame-ancestors"] == ["'none'"])
                #expect(directives["script-src"] == ["'self'"] && directives["style-src"] == ["'self'"])
                #expect(page.header("X-Content-Type-Options") == "nosniff")

                // Nothing the policy would refuse: no inline script or style, no style or event
                // handler attribute, and every script and stylesheet named is served, typed.
                let html = page.text
                #expect(html.range(of: #"<script(?![^>]*\ssrc=)"#, options: .regularExpression) == nil, "\(path)")
                #expect(!html.contains("<style") && !html.contains(" style="), "\(path)")
                #expect(html.range(of: #"\son[a-z]+\s*="#, options: [.regularExpression, .caseInsensitive]) == nil)
                let named = html.matches(of: /(?:src|href)="(\/[a-z]+\.(js|css))"/).map { (String($0.1), String($0.2)) }
                #expect(named.count == 2, "\(path): \(named)")
                for (file, kind) in named {
                    let served = try client.get(file)
                    #expect(served.status == 200 && !served.body.isEmpty, "\(file)")
                    #expect(
                        served.header("Content-Type")?.hasPrefix(kind == "js" ? "text/javascript" : "text/css") == true)
                    #expect(served.header("X-Content-Type-Options") == "nosniff", "\(file)")
                    let tag = try #require(served.header("ETag"))
                    let unchanged = try client.get(file, headers: [("If-None-Match", tag)])
                    #expect(unchanged.status == 304 && unchanged.header("Content-Length") == "0")
                }
            }
        }
    }

    /// Scripts set no `style` attribute (`setAttribute("style", ...)`, `cssText`, or markup with
    /// one): the policy refuses those. The CSSOM (`element.style.width = ...`) stays allowed.
    @Test func theScriptsSetNoStyleAttribute() {
        for script in [PackageResources.index_js, PackageResources.preview_js] {
            let text = String(decoding: script, as: UTF8.self)
            #expect(!text.contains("style=") && !text.contains("cssText") && !text.contains("\"style\""))
            #expect(text.range(of: #"\son[a-z]+\s*="#, options: .regularExpression) == nil, "no handler in markup")
        }
    }
}
