import HTTPTransport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `feed-server` as a command: parse options, start, wait for SIGINT/SIGTERM, shut down.
public enum ServerCommand {
    /// Runs the command and returns the process exit status.
    public static func run(arguments: [String], environment: [String: String]) -> Int32 {
        // `feed-server publish …` and the other store commands; the server takes no operands,
        // so a first argument naming a command is never one of its own.
        if let status = StoreCommand.run(arguments: arguments, environment: environment) { return status }
        let command: ServerOptions.Command
        do {
            command = try ServerOptions.parse(arguments, environment: environment)
        } catch {
            AccessLog.message("feed-server: \(error)")
            return 2
        }
        switch command {
        case .help:
            print(ServerOptions.helpText)
            return 0
        case .version:
            print("feed-server \(ServerOptions.version)")
            return 0
        case .run(let options):
            return serve(options)
        }
    }

    private static func serve(_ options: ServerOptions) -> Int32 {
        // Block the stop signals before any thread starts so every worker inherits the mask and
        // only `sigwait` below receives them; a dead client must never kill us with SIGPIPE.
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGINT)
        sigaddset(&stopSignals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
        signal(SIGPIPE, SIG_IGN)

        let server: Server
        do {
            server = try Server(options: options)
        } catch {
            AccessLog.message("feed-server: \(error)")
            return 2
        }
        AccessLog.message(
            "feed-server \(ServerOptions.version) listening on \(server.baseURL) (root \(absolutePath(options.root)))")
        if options.token == nil, !isLoopback(options.transport.host) {
            AccessLog.message(
                "feed-server: WARNING: listening on \(options.transport.host) without --token: anyone who can reach "
                    + "this port can publish and delete feeds"
            )
        }
        if options.faultLab {
            AccessLog.message(
                "feed-server: fault lab on: POST /feeds/{group}/faults breaks feeds on purpose; keep it to test setups")
        }
        var received: Int32 = 0
        sigwait(&stopSignals, &received)
        AccessLog.message(
            "feed-server: received \(received == SIGINT ? "SIGINT" : "SIGTERM"), finishing requests in flight")
        server.shutdown(timeoutSeconds: options.shutdownTimeoutSeconds)
        AccessLog.message("feed-server: stopped")
        return 0
    }

    /// Whether a bind address only accepts connections from this machine.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    private static func absolutePath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
