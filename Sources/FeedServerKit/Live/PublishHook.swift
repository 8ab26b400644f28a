import ConcurrencyPrimitives
import Dispatch
import FeedStore
import HTTPTransport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--on-publish <command>`: runs through `/bin/sh -c` after each change to a feed (a publish
/// that wrote a generation, a DELETE that removed a feed, a fault-lab injection), with the
/// change's `FEED_*` variables (`variables(for:)`) set over the server's environment, less its
/// tokens. Runs are coalesced per group and bounded across groups (`HookSchedule`) on their own
/// queue, so the response never waits; their output and failures go to the log.
final class PublishHook: Sendable {
    let command: String
    private let schedule: Lock<HookSchedule<PublishEvent>>
    private let queue = DispatchQueue(label: "feed-server.on-publish", attributes: .concurrent)

    /// Two groups' hooks at once: a sync to one device need not wait for another group's, and a
    /// burst of groups does not start a process each.
    init(command: String, maxRunning: Int = 2) {
        self.command = command
        schedule = Lock(HookSchedule(maxRunning: maxRunning))
    }

    /// Schedules the hook for one change.
    func run(for event: PublishEvent) {
        if let next = schedule.withLock({ $0.submitted(event, group: event.group) }) { start(next.event) }
    }

    private func start(_ event: PublishEvent) {
        queue.async { [self] in
            execute(event)
            if let next = schedule.withLock({ $0.finished(group: event.group) }) { start(next.event) }
        }
    }

    private func execute(_ event: PublishEvent) {
        let prefix = "on-publish " + Self.logName(event) + ": "
        do {
            let (output, ending) = try ShellCommand.run(command, adding: Self.variables(for: event))
            for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
                AccessLog.message(prefix + line)
            }
            if let ending { AccessLog.message(prefix + ending) }
        } catch {
            AccessLog.message(prefix + "could not start /bin/sh: \(error)")
        }
    }

    /// How the log names a change: `group/generation` for a publish, with the kind after others.
    static func logName(_ event: PublishEvent) -> String {
        let name = event.group + (event.generationId.map { "/" + $0 } ?? "")
        switch event.kind {
        case .publish: return name
        case .delete: return name + " (delete)"
        case .fault: return name + " (fault \(event.fault ?? "?"))"
        }
    }

    /// Every variable the hook may get; those a change does not have are left unset (and not
    /// inherited from the server's environment either), never set empty.
    static let variableNames: Set<String> = [
        "FEED_EVENT", "FEED_GROUP", "FEED_GROUP_DIR", "FEED_GENERATION_ID", "FEED_FINGERPRINT", "FEED_DIR",
        "FEED_FAULT",
    ]

    /// The change's variables: `FEED_EVENT` (publish, delete, fault), `FEED_GROUP`, `FEED_GROUP_DIR`
    /// always; `FEED_GENERATION_ID` for the generation written or named, `FEED_FINGERPRINT` when its
    /// `feed.json` declares one, `FEED_DIR` when its folder exists; `FEED_FAULT` for a fault.
    static func variables(for event: PublishEvent) -> [String: String] {
        var variables = [
            "FEED_EVENT": event.kind.rawValue,
            "FEED_GROUP": event.group,
            "FEED_GROUP_DIR": absolute(event.groupDirectory),
        ]
        variables["FEED_GENERATION_ID"] = event.generationId
        variables["FEED_FINGERPRINT"] = event.fingerprint
        variables["FEED_DIR"] = event.directory.map(absolute)
        variables["FEED_FAULT"] = event.fault
        return variables
    }

    private static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }
}

/// One `/bin/sh -c` child with posix_spawn: stdin from /dev/null, stdout and stderr into one pipe,
/// no blocked or ignored signals (the server blocks its stop signals and ignores SIGPIPE, and a
/// child would inherit both).
///
/// Exists instead of Foundation's `Process` so that the server links only FoundationEssentials
/// (see `DetachedThread`). Every other descriptor of the server is opened close-on-exec.
enum ShellCommand {
    /// Runs `command` with this process's environment (less its tokens) plus `variables`;
    /// returns what it printed and, when it did not exit with status 0, how it ended.
    static func run(_ command: String, adding variables: [String: String]) throws -> (output: [UInt8], ending: String?)
    {
        var ends: [Int32] = [-1, -1]
        _ = try Syscall.run("pipe", "on-publish hook") { pipe(&ends) }
        // Close-on-exec (pipe2 is a GNU extension Swift's Glibc module does not show): the
        // child gets the write end through dup2 only, so it sees the end of output when it exits.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let pid: pid_t
        do {
            defer { close(ends[1]) }
            pid = try spawn(command, environment: environment(adding: variables), output: ends[1])
        } catch {
            close(ends[0])
            throw error
        }
        let output = try readAll(ends[0])
        var status: Int32 = 0
        _ = try Syscall.run("waitpid", "on-publish hook") { waitpid(pid, &status, 0) }
        return (output, describe(status: status))
    }

    /// `NAME=value` strings: the server's environment without its tokens, with `variables` set
    /// over it.
    private static func environment(adding variables: [String: String]) -> [String] {
        var entries: [String] = []
        var cursor = ProcessEnvironment.block()
        while let entry = cursor.pointee {
            let text = String(cString: entry)
            let name =
                text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
                ?? text
            if variables[name] == nil, !PublishHook.variableNames.contains(name), passesOn(name) {
                entries.append(text)
            }
            cursor += 1
        }
        return entries + variables.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
    }

    /// Whether a variable of the server's environment reaches the hook: all but the server's
    /// secrets (`FEED_SERVER_TOKEN`, `FEED_SERVER_READ_TOKEN`, any later `FEED_SERVER_*TOKEN`).
    /// A hook is often a script from elsewhere (a deploy step, a chat notifier) that has no use
    /// for them, and whatever it logs or passes on would carry them; PATH, HOME and the user's
    /// own variables stay, since that is what a hook runs on.
    static func passesOn(_ name: String) -> Bool {
        !(name.hasPrefix("FEED_SERVER_") && name.hasSuffix("TOKEN"))
    }

    private static func spawn(_ command: String, environment: [String], output: Int32) throws -> pid_t {
        // Opaque pointers on Darwin, structs on Linux.
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t?
        var attributes: posix_spawnattr_t?
        #else
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_adddup2(&actions, output, 2)

        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let words: [String] = ["/bin/sh", "-c", command]
        let arguments: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) }
        let variables: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) }
        defer { for pointer in arguments + variables { free(pointer) } }
        var pid = pid_t()
        // posix_spawn returns its error number instead of setting errno, so Syscall.run cannot wrap it.
        let status = posix_spawn(&pid, "/bin/sh", &actions, &attributes, arguments + [nil], variables + [nil])
        guard status == 0 else { throw FileSystemError(operation: "posix_spawn", path: "/bin/sh", errno: status) }
        return pid
    }

    private static func readAll(_ descriptor: Int32) throws -> [UInt8] {
        defer { close(descriptor) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = try chunk.withUnsafeMutableBytes { buffer in
                try Syscall.run("read", "on-publish hook output") { read(descriptor, buffer.baseAddress, buffer.count) }
            }
            if count == 0 { return output }
            output += chunk[0..<count]
        }
    }

    /// nil for exit status 0, otherwise "failed with exit status N" or "killed by signal N"
    /// (wait(2)'s encoding; the WIFEXITED family are C macros Swift cannot call).
    static func describe(status: Int32) -> String? {
        let signal = status & 0x7f
        if signal != 0 { return "killed by signal \(signal)" }
        let code = (status >> 8) & 0xff
        return code == 0 ? nil : "failed with exit status \(code)"
    }
}
