#if canImport(Glibc)
import Glibc
#endif

/// Monotonic time for request durations.
enum MonotonicClock {
    /// Nanoseconds from an arbitrary fixed point (`CLOCK_MONOTONIC`).
    static func nanos() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}

/// One line per request on a file descriptor (stderr by default): method, path, status, bytes, ms.
struct AccessLog: Sendable {
    /// Where lines go; -1 disables the log.
    let fileDescriptor: Int32

    /// Logs to stderr when `enabled`.
    init(enabled: Bool) { fileDescriptor = enabled ? STDERR_FILENO : -1 }

    /// Writes one line with a single `write(2)` so lines from worker threads never interleave:
    /// `<method> <path> <status> <bytes> <ms>ms id=<request id>`.
    func record(method: UnsafePointer<CChar>, path: UnsafePointer<CChar>, status: Int, bytes: Int, elapsedNanos: Int64, requestID: String) {
        guard fileDescriptor >= 0 else { return }
        let micros = elapsedNanos / 1000
        let millis = "\(micros / 1000).\(String(micros % 1000 + 1000).dropFirst())"
        var line = Array(String(cString: method).utf8)
        line.append(0x20)
        line.append(contentsOf: sanitized(path))
        line.append(contentsOf: " \(status) \(bytes) \(millis)ms id=\(requestID)\n".utf8)
        _ = line.withUnsafeBytes { write(fileDescriptor, $0.baseAddress, $0.count) }
    }

    /// Writes a free-form message line.
    static func message(_ text: String) {
        let line = Array((text + "\n").utf8)
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    /// The path with control bytes escaped, so a hostile URL cannot forge log lines.
    private func sanitized(_ path: UnsafePointer<CChar>) -> [UInt8] {
        var output: [UInt8] = []
        var cursor = path
        while cursor.pointee != 0 {
            let byte = UInt8(bitPattern: cursor.pointee)
            if byte < 0x20 || byte == 0x7F {
                output.append(contentsOf: "%\(String(byte, radix: 16, uppercase: true))".utf8)
            } else {
                output.append(byte)
            }
            cursor += 1
        }
        return output
    }
}
