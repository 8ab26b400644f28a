import FeedImaging
import FeedImagingTesting
import Foundation
import Testing

@testable import FeedServerKit

/// The flush order of one publish, read from the system calls of the real binary (strace).
@Suite struct SyscallTraceTests {
    @Test(.enabled(if: TracedServer.isAvailable, "needs strace"))
    func everyFileAndFolderIsFlushedBeforeTheRenameThatMakesItVisible() throws {
        let scratch = ScratchDirectory("flush-order")
        let trace = scratch.path + "/trace.txt"
        let root = scratch.path + "/data"
        // Create the group first, so the traced publish is an ordinary one into an existing group.
        let warmup = try ChildServer(arguments: ["--port", "0", "--root", root, "--access-log", "off"])
        _ = try HTTPTestClient(port: try warmup.waitForPort()).put("/feeds/g", json: "[0]")
        warmup.signal(SIGTERM)
        _ = warmup.waitForExit()

        let (traced, server) = try TracedServer.start(
            root: root, trace: trace, syscalls: "openat,mkdir,fsync,rename,close")
        defer { kill(server, SIGKILL) }
        let client = HTTPTestClient(port: try traced.waitForPort())
        let published = try client.put("/feeds/g", json: #"{"v":1}"#)
        #expect(published.status == 201)
        kill(server, SIGTERM)
        #expect(traced.waitForExit() != nil)

        let id = try #require(published.json["generationId"] as? String)
        let group = root + "/g"
        let tmp = "\(group)/generations/\(id).tmp"
        let events = try SyscallLog(contentsOf: trace)
        let order = [
            "fsync \(tmp)/feed.json",
            "fsync \(tmp)",
            "rename \(tmp) -> \(group)/generations/\(id)",
            "fsync \(group)/generations",
            "fsync \(group)/current.json.tmp",
            "rename \(group)/current.json.tmp -> \(group)/current.json",
            "fsync \(group)",
        ]
        try events.expectInOrder(order)
    }
}

/// The trace reader itself: a call split by another thread's counts once, whole.
@Suite struct SyscallLogTests {
    @Test func aCallInterruptedByAnotherThreadIsJoinedAgain() {
        let log = """
            7 openat(AT_FDCWD, "/d/a.tmp", O_RDONLY) = 12
            7 fsync(12 <unfinished ...>
            8 openat(AT_FDCWD, "/d/profile.json", O_RDONLY) = -1 ENOENT (No such file or directory)
            7 <... fsync resumed>) = 0
            7 rename("/d/a.tmp", "/d/a") = 0
            """
        #expect(
            SyscallLog.wholeCalls(log) == [
                #"7 openat(AT_FDCWD, "/d/a.tmp", O_RDONLY) = 12"#,
                #"8 openat(AT_FDCWD, "/d/profile.json", O_RDONLY) = -1 ENOENT (No such file or directory)"#,
                "7 fsync(12) = 0", #"7 rename("/d/a.tmp", "/d/a") = 0"#,
            ])
    }
}

/// A widget profile is written as the pointer is: flushed, renamed, its folder flushed.
@Suite struct ProfileFlushTraceTests {
    @Test(.enabled(if: TracedServer.isAvailable, "needs strace"))
    func aProfileIsFlushedBeforeTheRenameThatMakesItVisible() throws {
        let scratch = ScratchDirectory("profile-flush")
        let trace = scratch.path + "/trace.txt"
        let root = scratch.path + "/data"
        let (traced, server) = try TracedServer.start(
            root: root, trace: trace, syscalls: "openat,mkdir,fsync,rename,close")
        defer { kill(server, SIGKILL) }
        let client = HTTPTestClient(port: try traced.waitForPort())
        #expect(try client.put("/feeds/g/profile", json: #"{"items":"/quotes"}"#).status == 201)
        kill(server, SIGTERM)
        #expect(traced.waitForExit() != nil)
        let events = try SyscallLog(contentsOf: trace)
        try events.expectInOrder([
            "fsync \(root)/g/profile.json.tmp", "rename \(root)/g/profile.json.tmp -> \(root)/g/profile.json",
            "fsync \(root)/g",
        ])
    }
}

/// An asset's header leaves with the file's first bytes: libmicrohttpd 0.9.75 pushes a file
/// response's header on its own, so the server corks the socket before the answer is queued and
/// uncorks it once the last byte is handed to the kernel, on every asset `GET` (routed or answered
/// before routing); a `HEAD` and a feed read (header and body in one `sendmsg`) are not corked.
@Suite struct CorkTraceTests {
    @Test(.enabled(if: TracedServer.isAvailable, "needs strace"))
    func anAssetGetIsCorkedFromItsHeaderToItsLastByte() throws {
        let scratch = ScratchDirectory("cork")
        let trace = scratch.path + "/trace.txt"
        let root = scratch.path + "/data"
        let (traced, server) = try TracedServer.start(
            root: root, trace: trace, syscalls: "setsockopt,sendto,sendmsg,sendfile")
        defer { kill(server, SIGKILL) }
        let port = try traced.waitForPort()
        // A small asset (one sendfile) and one over libmicrohttpd's 128 KiB sendfile chunk.
        let small = try publishAsset(port: port, group: "small", try TestImages.png(width: 40, height: 30))
        let large = try publishAsset(port: port, group: "large", try TestImages.png(width: 300, height: 200))
        let connection = try HTTPTestConnection(port: port)
        let first = try connection.request("GET", small.url)  // routed: builds and caches the answer
        let second = try connection.request("GET", small.url)  // answered before routing
        #expect(
            first.status == 200 && second.status == 200 && first.body == second.body && first.body.count == small.size)
        #expect(try connection.request("HEAD", small.url).status == 200)
        #expect(try connection.request("GET", "/feeds/small").status == 200)
        for _ in 0..<2 { #expect(try connection.request("GET", large.url).body.count == large.size) }
        #expect(try connection.request("GET", "/feeds/large").status == 200)
        kill(server, SIGTERM)
        #expect(traced.waitForExit() != nil)

        let events = try sendEvents(in: trace)
        // The reads of the small asset: exactly this (the publishes' answers come before).
        let smallReads = [
            "cork", "header", "sendfile", "uncork", "cork", "header", "sendfile", "uncork", "header", "header",
        ]
        let start = try #require(
            events.indices.first { Array(events[$0...].prefix(smallReads.count)) == smallReads }, "\(events)")
        // The large one: libmicrohttpd corks and pushes on its own between its sendfile calls; what
        // matters is that nothing stays corked after an answer: each answer's last sendfile is
        // followed by an uncork before anything else is sent.
        let later = Array(events[(start + smallReads.count)...])
        #expect(later.filter { $0 == "sendfile" }.count == 2, "\(later)")
        for index in later.indices where later[index] == "sendfile" {
            let next = later[(index + 1)...].first { $0 != "cork" }
            #expect(next == "uncork", "\(later)")
        }
    }

    private func publishAsset(port: UInt16, group: String, _ png: [UInt8]) throws -> (url: String, size: Int) {
        var body = MultipartBody()
        body.field("payload", #"{"quotes":[{"id":"q1","image":"q1.png"}]}"#, contentType: "application/json")
        body.file("asset0", filename: "q1.png", png)
        let published = try HTTPTestClient(port: port).putMultipart("/feeds/\(group)?images=raw", body)
        let asset = try #require((published.json["assets"] as? [[String: Any]])?.first)
        return (try #require(asset["url"] as? String), try #require(asset["bytes"] as? Int))
    }

    /// The trace's socket writes in order: `cork`/`uncork` (`TCP_CORK`), `header` (a write that
    /// starts a response), `sendfile` (consecutive calls as one).
    private func sendEvents(in path: String) throws -> [String] {
        var events: [String] = []
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
            let event: String
            if line.contains("TCP_CORK, [1]") {
                event = "cork"
            } else if line.contains("TCP_CORK, [0]") {
                event = "uncork"
            } else if line.contains("sendfile(") {
                event = "sendfile"
            } else if (line.contains("sendto(") || line.contains("sendmsg(")) && line.contains("HTTP/1.1 ") {
                event = "header"
            } else {
                continue
            }
            if event == "sendfile", events.last == "sendfile" { continue }
            events.append(event)
        }
        return events
    }
}

/// The real binary under strace, writing the calls in `syscalls` to `trace`.
enum TracedServer {
    /// Whether strace is installed.
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") }

    /// strace running the server, and the server's pid: SIGTERM to strace would only detach it,
    /// so a test stops the server itself (and strace ends with it).
    static func start(root: String, trace: String, syscalls: String) throws -> (strace: ChildServer, server: Int32) {
        // LeakSanitizer cannot run under ptrace: in an ASan build (scripts/sanitizers.sh) the
        // traced server would fail at exit, so only its leak check is turned off.
        let sanitizerOptions =
            (ProcessInfo.processInfo.environment["ASAN_OPTIONS"].map { $0 + ":" } ?? "") + "detect_leaks=0"
        let traced = try ChildServer(
            executable: "/usr/bin/strace",
            arguments: [
                "-f", "-qq", "-o", trace, "-e", "trace=" + syscalls,
                Executable.path, "--port", "0", "--root", root, "--access-log", "off",
            ], environment: ["ASAN_OPTIONS": sanitizerOptions])
        _ = try traced.waitForPort()
        let server = try #require(processID(commandLineContaining: root, excluding: traced.process.processIdentifier))
        return (traced, server)
    }
}

/// The pid of the process whose command line contains `text` (other than `excluding`).
func processID(commandLineContaining text: String, excluding: Int32) -> Int32? {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    for entry in entries {
        guard let pid = Int32(entry), pid != excluding,
            let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
        else { continue }
        let commandLine = String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
        if commandLine.contains(text), !commandLine.hasPrefix("/usr/bin/strace") { return pid }
    }
    return nil
}

/// strace output reduced to `fsync <path>` and `rename <from> -> <to>` lines, descriptors
/// resolved to the paths they were opened with.
struct SyscallLog {
    let lines: [String]

    init(contentsOf path: String) throws {
        var open: [String: String] = [:]  // "pid:fd" → path
        var lines: [String] = []
        for text in Self.wholeCalls(try String(contentsOfFile: path, encoding: .utf8)) {
            let pid = String(text.prefix { $0 != " " })
            if let match = text.firstMatch(of: /openat\(AT_FDCWD, "([^"]+)", [^)]*\)\s*= (\d+)/) {
                open["\(pid):\(match.2)"] = String(match.1)
            } else if let match = text.firstMatch(of: /fsync\((\d+)\)\s*= 0/), let file = open["\(pid):\(match.1)"] {
                lines.append("fsync \(file)")
            } else if let match = text.firstMatch(of: /rename\("([^"]+)", "([^"]+)"\)\s*= 0/) {
                lines.append("rename \(match.1) -> \(match.2)")
            }
        }
        self.lines = lines
    }

    /// strace's lines with every call whole: a call another thread's interrupted is printed in two
    /// parts (`fsync(12 <unfinished ...>`, later `<... fsync resumed>) = 0`), joined again here.
    static func wholeCalls(_ log: String) -> [String] {
        var unfinished: [String: String] = [:]  // pid → the call's first part
        var calls: [String] = []
        for raw in log.split(separator: "\n") {
            let text = String(raw)
            let pid = String(text.prefix { $0 != " " })
            if text.hasSuffix(" <unfinished ...>") {
                unfinished[pid] = String(text.dropLast(" <unfinished ...>".count))
            } else if let resumed = text.firstMatch(of: /<\.\.\. \w+ resumed>/), let start = unfinished[pid] {
                calls.append(start + text[resumed.range.upperBound...])
                unfinished[pid] = nil
            } else {
                calls.append(text)
            }
        }
        return calls
    }

    func firstIndex(of line: String, after position: Int) -> Int? {
        lines.indices.first { $0 > position && lines[$0] == line }
    }

    /// Requires every one of `steps` in the log, each after the one before.
    func expectInOrder(_ steps: [String]) throws {
        var position = -1
        for step in steps {
            position = try #require(
                firstIndex(of: step, after: position),
                "\(step) missing or out of order in:\n\(lines.joined(separator: "\n"))")
        }
    }
}
