import Foundation
import Testing

@testable import FeedServerKit

/// The hook's runner: output passed on line by line within bounds, the run ended by the shell's
/// exit or by the timeout, which takes the whole process group.
@Suite struct ShellCommandTests {
    /// Lines collected from a run.
    private final class Collected: @unchecked Sendable {
        var lines: [String] = []
    }

    private func run(_ command: String, timeout: Int = 10) throws -> (ending: String?, lines: [String], seconds: Double)
    {
        let collected = Collected()
        let started = Date()
        let ending = try ShellCommand.run(command, adding: [:], timeoutSeconds: timeout) { collected.lines.append($0) }
        return (ending, collected.lines, Date().timeIntervalSince(started))
    }

    @Test func linesArePassedOnAndTheEndingIsTold() throws {
        let result = try run("echo one; echo two >&2; printf three; exit 3")
        #expect(result.lines == ["one", "two", "three"])
        #expect(result.ending == "failed with exit status 3")
        #expect(try run("true").ending == nil)
    }

    @Test func aHookThatNeverEndsIsKilledWithWhatItStarted() throws {
        let scratch = ScratchDirectory()
        let pidFile = scratch.path + "/child"
        let result = try run("sleep 100 & echo $! > \(pidFile); echo started; wait", timeout: 1)
        #expect(result.ending == "killed after 1 s (--on-publish-timeout)")
        #expect(result.lines == ["started"])
        #expect(result.seconds < 5)
        let child = try #require(
            Int32(try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        // Gone, or a zombie waiting for whoever adopted it to reap it: either way not running. A
        // killed task may not have been scheduled to die yet; a `sleep 100` spared stays asleep.
        func state() -> Substring? {
            (try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8))?
                .split(separator: ")").last?.split(separator: " ").first
        }
        func ended(_ state: Substring?) -> Bool { state == nil || state == "Z" }
        try? waitUntil(seconds: 5) { ended(state()) }
        let last = state()
        #expect(ended(last), "the background child went with the group (state \(last ?? "-"))")
    }

    @Test func theRunEndsWhenTheShellExitsEvenIfABackgroundChildHoldsTheOutput() throws {
        let result = try run("sleep 5 & echo done")
        #expect(result.lines == ["done"] && result.ending == nil)
        #expect(result.seconds < 3, "\(result.seconds) s")
    }

    @Test func outputIsBoundedWhateverTheHookPrints() throws {
        let result = try run("head -c 20000000 /dev/zero | tr '\\\\0' a; echo; yes line | head -n 100000")
        let bytes = result.lines.reduce(0) { $0 + $1.utf8.count + 1 }
        #expect(bytes <= ShellCommand.maxOutputBytes + ShellCommand.maxLineBytes + 100)
        #expect(result.lines.first?.utf8.count == ShellCommand.maxLineBytes, "a long line is cut")
        #expect(result.lines.last == "(output past \(ShellCommand.maxOutputBytes) bytes not logged)")
        #expect(result.ending == nil)
    }
}
