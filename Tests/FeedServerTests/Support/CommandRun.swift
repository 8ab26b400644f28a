import Foundation

/// One run of the `feed-server` binary to its end, stdout and stderr kept apart (a store
/// command's answer is on stdout, its messages on stderr). Both go to files, so neither pipe
/// can fill and hold the child up.
struct CommandRun {
    let status: Int32
    let stdout: Data
    let stderr: String

    /// Stdout as text.
    var output: String { String(decoding: stdout, as: UTF8.self) }

    /// Stdout as a JSON object (empty when it is none).
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: stdout)) as? [String: Any] ?? [:] }

    /// Runs `feed-server arguments…` with `environment` added to this process's (without its
    /// `FEED_SERVER_*` variables), within `timeout` seconds.
    @discardableResult
    static func run(
        _ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 60
    ) throws -> CommandRun {
        let scratch = ScratchDirectory("command")
        let outPath = scratch.path + "/stdout"
        let errPath = scratch.path + "/stderr"
        FileManager.default.createFile(atPath: outPath, contents: nil)
        FileManager.default.createFile(atPath: errPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Executable.path)
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FEED_SERVER_") }
        merged.merge(environment) { $1 }
        process.environment = merged
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(2_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw HTTPTestError(description: "feed-server \(arguments) did not end within \(timeout) s")
        }
        process.waitUntilExit()
        return CommandRun(
            status: process.terminationStatus, stdout: try Data(contentsOf: URL(fileURLWithPath: outPath)),
            stderr: try String(contentsOfFile: errPath, encoding: .utf8))
    }
}
