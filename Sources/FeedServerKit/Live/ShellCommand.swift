import ConcurrencyPrimitives
import FeedStore
import HTTPTransport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One `/bin/sh -c` child with posix_spawn, in a process group of its own: stdin from
/// /dev/null, stdout and stderr into one pipe, no blocked or ignored signals (the server blocks
/// its stop signals and ignores SIGPIPE, and a child would inherit both).
///
/// Its output is passed on line by line as it comes, at most `maxOutputBytes` of it: a hook that
/// prints without end costs the server a 4 KiB buffer, not its memory. The run ends when the
/// shell exits (a background child still holding the output is not waited for: it gets SIGPIPE
/// when it next writes), or after the timeout, when its whole process group is killed.
///
/// Exists instead of Foundation's `Process` so that the server links only FoundationEssentials
/// (see `DetachedThread`). Every other descriptor of the server is opened close-on-exec.
enum ShellCommand {
    /// Output passed on per run; the rest is read and dropped.
    static let maxOutputBytes = 64 << 10
    /// The longest line passed on; a longer one is cut there.
    static let maxLineBytes = 4096

    /// Runs `command` with this process's environment (less its tokens and the hook's own
    /// variables) plus `variables`, passing each output line to `line`; returns how the run ended
    /// when that was not exit status 0.
    static func run(
        _ command: String, adding variables: [String: String], timeoutSeconds: Int, line: @escaping (String) -> Void
    ) throws -> String? {
        var ends: [Int32] = [-1, -1]
        _ = try Syscall.run("pipe", "on-publish hook") { pipe(&ends) }
        // Close-on-exec (pipe2 is a GNU extension Swift's Glibc module does not show): the
        // child gets the write end through dup2 only, so it sees the end of output when it exits.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        defer { try? Syscall.close(ends[0], "on-publish hook output") }
        let pid: pid_t
        do {
            defer { try? Syscall.close(ends[1], "on-publish hook output") }
            pid = try spawn(command, environment: environment(adding: variables), output: ends[1])
        }
        var output = OutputLines(line: line)
        let deadline = MonotonicClock.nanos() &+ Int64(timeoutSeconds) &* 1_000_000_000
        while true {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                output.read(ends[0])
                output.finish()
                return describe(status: status)
            }
            if MonotonicClock.nanos() >= deadline {
                kill(-pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                output.finish()
                return "killed after \(timeoutSeconds) s (--on-publish-timeout)"
            }
            var ready = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
            // Output wakes the loop; the exit of a shell that prints nothing is seen within 50 ms.
            if poll(&ready, 1, 50) > 0 { output.read(ends[0]) }
        }
    }

    /// `NAME=value` strings: the server's environment without its tokens and the hook's own
    /// variables, with `variables` set over it.
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
        // A group of its own (the child's pid), so a timeout kills what the hook started too.
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

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

    /// nil for exit status 0, otherwise "failed with exit status N" or "killed by signal N"
    /// (wait(2)'s encoding; the WIFEXITED family are C macros Swift cannot call).
    static func describe(status: Int32) -> String? {
        let signal = status & 0x7f
        if signal != 0 { return "killed by signal \(signal)" }
        let code = (status >> 8) & 0xff
        return code == 0 ? nil : "failed with exit status \(code)"
    }
}

/// A hook's output cut into lines as it arrives, within `ShellCommand`'s bounds.
struct OutputLines {
    let line: (String) -> Void
    private var pending: [UInt8] = []
    private var passedOn = 0
    private var dropped = false

    init(line: @escaping (String) -> Void) { self.line = line }

    /// Reads what the (non-blocking) descriptor has now.
    mutating func read(_ descriptor: Int32) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { readSome(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            take(chunk[0..<count])
        }
    }

    /// Takes bytes of output, passing on each complete line.
    mutating func take(_ bytes: ArraySlice<UInt8>) {
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                emit()
            } else if pending.count < ShellCommand.maxLineBytes {
                pending.append(byte)
            }
        }
    }

    /// Passes on the last, unterminated line and says how much was dropped.
    mutating func finish() {
        if !pending.isEmpty { emit() }
        if dropped { line("(output past \(ShellCommand.maxOutputBytes) bytes not logged)") }
    }

    private mutating func emit() {
        defer { pending.removeAll(keepingCapacity: true) }
        guard passedOn < ShellCommand.maxOutputBytes else {
            dropped = true
            return
        }
        passedOn += pending.count + 1
        line(String(decoding: pending, as: UTF8.self))
    }
}

/// read(2) under its C name, which `OutputLines.read` hides.
private func readSome(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
