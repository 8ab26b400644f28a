import Foundation
import Testing

/// The `feed-server` binary as users run it: options, exit statuses, signals.
@Suite struct ServerCommandTests {
    @Test func helpAndVersion() throws {
        let help = try ChildServer(arguments: ["--help"])
        #expect(help.waitForExit() == 0)
        for flag in [
            "--host", "--port", "--root", "--keep-previous", "--threads", "--max-body-bytes", "FEED_SERVER_PORT",
        ] {
            #expect(help.output.contains(flag), "\(flag)")
        }
        let version = try ChildServer(arguments: ["--version"])
        #expect(version.waitForExit() == 0)
        #expect(version.output.hasPrefix("feed-server "))
    }

    @Test func badOptionsExitWithStatus2() throws {
        for arguments in [["--bogus"], ["--port", "70000"], ["--port"], ["--threads", "zero"]] {
            let child = try ChildServer(arguments: arguments)
            #expect(child.waitForExit() == 2, "\(arguments)")
            #expect(child.output.contains("feed-server:"), "\(arguments)")
        }
    }

    @Test func environmentVariablesConfigureTheServer() throws {
        let scratch = ScratchDirectory()
        let child = try ChildServer(
            arguments: [], environment: ["FEED_SERVER_PORT": "0", "FEED_SERVER_ROOT": scratch.path + "/env-root"])
        let port = try child.waitForPort()
        #expect(child.output.contains("root \(scratch.path)/env-root"))
        #expect(try HTTPTestClient(port: port).get("/healthz").status == 200)
        child.signal(SIGTERM)
        #expect(child.waitForExit() == 0)
    }

    /// A token of blanks (or with a blank or control character in it) could never be sent (a
    /// header value loses its surrounding blanks), so it would lock every writer out: refused at
    /// start instead, from the command line and from the environment.
    @Test func aTokenNoClientCouldSendIsRefusedAtStart() throws {
        let scratch = ScratchDirectory()
        for token in [" ", "  secret", "secret ", "se cret", "se\tcret"] {
            let flag = try ChildServer(arguments: ["--port", "0", "--root", scratch.path, "--token", token])
            #expect(flag.waitForExit() == 2, "--token '\(token)'")
            #expect(flag.output.contains("--token must be visible ASCII"), "\(flag.output)")
            let environment = try ChildServer(
                arguments: ["--port", "0", "--root", scratch.path], environment: ["FEED_SERVER_READ_TOKEN": token])
            #expect(environment.waitForExit() == 2, "FEED_SERVER_READ_TOKEN '\(token)'")
        }
    }

    @Test func anEmptyEnvironmentVariableCountsAsUnset() throws {
        // compose.yaml and CI templates pass `FEED_SERVER_TOKEN=` for "no token".
        let scratch = ScratchDirectory()
        let child = try ChildServer(
            arguments: ["--port", "0", "--root", scratch.path],
            environment: ["FEED_SERVER_TOKEN": "", "FEED_SERVER_READ_TOKEN": "", "FEED_SERVER_CORS_ORIGIN": ""])
        let port = try child.waitForPort()
        #expect(try HTTPTestClient(port: port).put("/feeds/g", json: "[1]").status == 201, "no token configured")
        child.signal(SIGTERM)
        #expect(child.waitForExit() == 0)
    }

    @Test func aPortInUseExitsWithStatus2() throws {
        let scratch = ScratchDirectory()
        let first = try ChildServer(arguments: ["--port", "0", "--root", scratch.path])
        let port = try first.waitForPort()
        let second = try ChildServer(arguments: ["--port", String(port), "--root", scratch.path])
        #expect(second.waitForExit() == 2)
        #expect(second.output.contains("already in use"))
        first.signal(SIGINT)
        #expect(first.waitForExit() == 0)
    }

    @Test func anUnusableRootExitsWithStatus2() throws {
        let scratch = ScratchDirectory()
        let file = scratch.path + "/a-file"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let child = try ChildServer(arguments: ["--port", "0", "--root", file + "/data"])
        #expect(child.waitForExit() == 2)
        #expect(child.output.contains("cannot be created or written"))
    }

    @Test func sigtermFinishesAndExitsZero() throws {
        let scratch = ScratchDirectory()
        let child = try ChildServer(arguments: ["--port", "0", "--root", scratch.path])
        let port = try child.waitForPort()
        let client = HTTPTestClient(port: port)
        #expect(try client.put("/feeds/g", json: "[1]").status == 201)
        child.signal(SIGTERM)
        #expect(child.waitForExit() == 0)
        #expect(child.output.contains("PUT /feeds/g 201"))
        #expect(child.output.contains("stopped"))
    }
}
