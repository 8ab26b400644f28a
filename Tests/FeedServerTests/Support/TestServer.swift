import FeedStore
import Foundation

@testable import FeedServerKit

/// A fresh folder removed when the scope ends.
final class ScratchDirectory: @unchecked Sendable {
    let path: String

    init(_ label: String = "feedserver") {
        path = FileManager.default.temporaryDirectory.path + "/\(label)-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Starts the real server (libmicrohttpd, real files) on an ephemeral port, runs `body`, and
/// always stops it, whatever the body does.
func withTestServer<T>(
    root: String? = nil, configure: (inout ServerOptions) -> Void = { _ in },
    _ body: (Server, HTTPTestClient) throws -> T
) throws -> T {
    let scratch = ScratchDirectory()
    var options = ServerOptions()
    options.transport.port = 0
    options.root = root ?? scratch.path + "/data"
    options.transport.accessLog = false
    options.transport.threads = 2
    configure(&options)
    let server = try Server(options: options)
    defer {
        server.shutdown(timeoutSeconds: 5)
        withExtendedLifetime(scratch) {}
    }
    return try body(server, HTTPTestClient(port: server.port))
}

extension Server {
    /// Waits until no request is in flight. libmicrohttpd completes a request only after its answer
    /// is sent, so one a client has its answer to may still count for a moment; a test that then
    /// waits for a number of requests in flight would count it.
    func waitUntilNothingInFlight() throws {
        try waitUntil { daemon.requestsInFlight == 0 }
    }
}

/// The `feed-server` executable built next to the test bundle.
enum Executable {
    static var path: String {
        let testBinary =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: testBinary).deletingLastPathComponent().appendingPathComponent("feed-server").path
    }
}

/// The `feed-server` binary running as a child process, its stderr and stdout collected by a
/// reader thread (plain blocking reads: no dispatch source watches the pipe).
final class ChildServer: @unchecked Sendable {
    let process = Process()
    private let outputPipe = Pipe()
    private let lock = NSLock()
    private var collected = Data()
    private var reader: Thread?

    init(executable: String = Executable.path, arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FEED_SERVER_") }
        merged.merge(environment) { $1 }
        process.environment = merged
        process.standardError = outputPipe
        process.standardOutput = outputPipe
        try process.run()
        // Our copy of the write end must go, or the reader never sees end-of-file.
        try? outputPipe.fileHandleForWriting.close()
        // The reader owns a duplicate of the descriptor and closes it itself, so it never reads
        // a descriptor the pipe object has already closed (or one reused since).
        let fd = fcntl(outputPipe.fileHandleForReading.fileDescriptor, F_DUPFD_CLOEXEC, 0)
        let thread = Thread { [weak self] in
            defer { close(fd) }
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                guard let self else { break }
                self.lock.lock()
                self.collected.append(contentsOf: buffer.prefix(count))
                self.lock.unlock()
            }
        }
        reader = thread
        thread.start()
    }

    /// Everything written to stderr and stdout so far.
    var output: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: collected, as: UTF8.self)
    }

    /// Waits for the startup line and returns the port it names.
    func waitForPort(timeout: TimeInterval = 20) throws -> UInt16 {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let range = output.range(of: #"listening on http://[^:]+:(\d+)"#, options: .regularExpression) {
                let match = output[range]
                if let port = UInt16(match.split(separator: ":").last!) { return port }
            }
            if !process.isRunning { break }
            usleep(5_000)
        }
        throw HTTPTestError(description: "no startup line; output: \(output)")
    }

    /// Waits for the process to end and returns its exit status; also waits for its output.
    func waitForExit(timeout: TimeInterval = 30) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(5_000) }
        guard !process.isRunning else { return nil }
        // Returns at once now; Foundation keeps a Process alive until someone waits on it.
        process.waitUntilExit()
        while reader?.isFinished == false, Date() < deadline { usleep(1_000) }
        return process.terminationStatus
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
