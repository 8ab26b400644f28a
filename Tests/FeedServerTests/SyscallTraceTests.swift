import Foundation
import Testing

/// The flush order of one publish, read from the system calls of the real binary (strace).
@Suite struct SyscallTraceTests {
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace"))
    func everyFileAndFolderIsFlushedBeforeTheRenameThatMakesItVisible() throws {
        let scratch = ScratchDirectory("flush-order")
        let trace = scratch.path + "/trace.txt"
        let root = scratch.path + "/data"
        // Create the group first, so the traced publish is an ordinary one into an existing group.
        let warmup = try ChildServer(arguments: ["--port", "0", "--root", root, "--access-log", "off"])
        _ = try HTTPTestClient(port: try warmup.waitForPort()).put("/feeds/g", json: "[0]")
        warmup.signal(SIGTERM)
        _ = warmup.waitForExit()

        // LeakSanitizer cannot run under ptrace: in an ASan build (scripts/sanitizers.sh) the
        // traced server would fail at exit, so only its leak check is turned off.
        let sanitizerOptions = (ProcessInfo.processInfo.environment["ASAN_OPTIONS"].map { $0 + ":" } ?? "") + "detect_leaks=0"
        let traced = try ChildServer(executable: "/usr/bin/strace", arguments: [
            "-f", "-qq", "-o", trace, "-e", "trace=openat,mkdir,fsync,rename,close",
            Executable.path, "--port", "0", "--root", root, "--access-log", "off",
        ], environment: ["ASAN_OPTIONS": sanitizerOptions])
        let client = HTTPTestClient(port: try traced.waitForPort())
        // SIGTERM to strace would only detach it: stop the traced server, and strace ends with it.
        let server = try #require(processID(commandLineContaining: root, excluding: traced.process.processIdentifier))
        defer { kill(server, SIGKILL) }
        let published = try client.put("/feeds/g", json: #"{"v":1}"#)
        #expect(published.status == 201)
        kill(server, SIGTERM)
        #expect(traced.waitForExit() != nil)

        let id = try #require(published.json["generationId"] as? String)
        let group = root + "/g", tmp = "\(group)/generations/\(id).tmp"
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
        var position = -1
        for step in order {
            let found = try #require(events.firstIndex(of: step, after: position), "\(step) missing or out of order in:\n\(events.lines.joined(separator: "\n"))")
            position = found
        }
    }
}

/// The pid of the process whose command line contains `text` (other than `excluding`).
func processID(commandLineContaining text: String, excluding: Int32) -> Int32? {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    for entry in entries {
        guard let pid = Int32(entry), pid != excluding,
              let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
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
        for raw in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
            let text = String(raw)
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

    func firstIndex(of line: String, after position: Int) -> Int? {
        lines.indices.first { $0 > position && lines[$0] == line }
    }
}

