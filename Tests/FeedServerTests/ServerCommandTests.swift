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
        #expect(second.output.contains("cannot listen on 127.0.0.1:\(port): the port is already in use"))
        // One line says it: libmicrohttpd's own bind message is left out.
        #expect(!second.output.contains("Failed to bind"), "\(second.output)")
        #expect(!second.output.contains("libmicrohttpd"), "\(second.output)")
        first.signal(SIGINT)
        #expect(first.waitForExit() == 0)
    }

    @Test func anUnusableRootExitsWithStatus2() throws {
        let scratch = ScratchDirectory()
        let file = scratch.path + "/a-file"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let child = try ChildServer(arguments: ["--port", "0", "--root", file + "/data"])
        #expect(child.waitForExit() == 2)
        #expect(child.output.contains("cannot be created or written: '\(file)' is a file, not a folder"))
        let itself = try ChildServer(arguments: ["--port", "0", "--root", file])
        #expect(itself.waitForExit() == 2)
        #expect(
            itself.output.contains("root folder '\(file)' cannot be created or written: it is a file, not a folder"))
        #expect(!itself.output.contains("notADirectory"), "\(itself.output)")
    }

    /// A message names what the user wrote: the variable, not the flag it stands for; a flag
    /// left without its value, not the next flag taken for it.
    @Test func messagesNameWhatWasWritten() throws {
        let scratch = ScratchDirectory()
        let fromEnvironment = try ChildServer(arguments: [], environment: ["FEED_SERVER_PORT": "http"])
        #expect(fromEnvironment.waitForExit() == 2)
        #expect(fromEnvironment.output.contains("FEED_SERVER_PORT must be an integer from 0 to 65535 (got 'http')"))
        #expect(!fromEnvironment.output.contains("--port"), "\(fromEnvironment.output)")
        for arguments in [["--port", "--root", scratch.path], ["--root", scratch.path, "--port"]] {
            let child = try ChildServer(arguments: arguments)
            #expect(child.waitForExit() == 2, "\(arguments)")
            #expect(child.output.contains("--port needs a value"), "\(arguments): \(child.output)")
            #expect(!child.output.contains("(got '--root')"), "\(arguments): \(child.output)")
        }
        // A secret's text is free, and `--flag=text` always takes the text as it is.
        let child = try ChildServer(arguments: ["--port=0", "--root", scratch.path, "--token", "--secret--"])
        let client = HTTPTestClient(port: try child.waitForPort())
        #expect(try client.put("/feeds/g", json: "[1]").status == 401)
        #expect(
            try client.put("/feeds/g", json: "[1]", headers: [("Authorization", "Bearer --secret--")]).status == 201)
        child.signal(SIGTERM)
        #expect(child.waitForExit() == 0)
    }

    /// libmicrohttpd's own messages other than the bind failure stay on stderr, each one line
    /// that starts like every other line of the log.
    @Test func libmicrohttpdMessagesStayOnStderrAsOwnLines() throws {
        let scratch = ScratchDirectory()
        let child = try ChildServer(arguments: ["--port", "0", "--root", scratch.path, "--access-log", "off"])
        let port = try child.waitForPort()
        let big = try HTTPTestClient(port: port).get(
            "/healthz", headers: [("X-Big", String(repeating: "a", count: 20_000))])
        #expect(big.status == 431)
        child.signal(SIGTERM)
        #expect(child.waitForExit() == 0)
        #expect(child.output.contains("feed-server: libmicrohttpd: Error processing request"), "\(child.output)")
        for line in child.output.split(separator: "\n") { #expect(line.hasPrefix("feed-server"), "\(line)") }
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
