#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One line per request on a file descriptor (stderr by default): method, path, status, bytes, ms.
package struct AccessLog: Sendable {
    /// Where lines go; -1 disables the log.
    let fileDescriptor: Int32

    /// Whether lines are written at all.
    package var isEnabled: Bool { fileDescriptor >= 0 }

    /// Logs to stderr when `enabled`.
    package init(enabled: Bool) { fileDescriptor = enabled ? STDERR_FILENO : -1 }

    /// Writes one line with a single `write(2)` so lines from worker threads never interleave:
    /// `<method> <path> <status> <bytes> <ms>ms id=<request id>`: the client's sane
    /// `X-Request-Id`, or one generated here (only when the log is on).
    func record(
        method: UnsafePointer<CChar>, path: UnsafePointer<CChar>, status: Int, bytes: Int, elapsedNanos: Int64,
        clientRequestID: String?
    ) {
        guard fileDescriptor >= 0 else { return }
        let requestID = clientRequestID ?? RequestID.generate()
        let micros = elapsedNanos / 1000
        let millis = "\(micros / 1000).\(String(micros % 1000 + 1000).dropFirst())"
        var line = Self.escaped(method)
        line.append(0x20)
        line.append(contentsOf: Self.escaped(path))
        line.append(contentsOf: " \(status) \(bytes) \(millis)ms id=\(requestID)\n".utf8)
        _ = line.withUnsafeBytes { write(fileDescriptor, $0.baseAddress, $0.count) }
    }

    /// Writes a free-form message line.
    package static func message(_ text: String) {
        let line = Array((text + "\n").utf8)
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    /// A client-supplied field (method, path) as printable ASCII: control bytes, space, DEL and
    /// every byte from 0x80 up become `%XX`, so a hostile request can neither forge a log line
    /// or field nor send escape sequences (C0 or C1) to the terminal reading the log. (`%` stays
    /// as it is, so percent-encoded paths read as they were sent.)
    static func escaped(_ field: UnsafePointer<CChar>) -> [UInt8] {
        let hex = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        var cursor = field
        while cursor.pointee != 0 {
            let byte = UInt8(bitPattern: cursor.pointee)
            if byte <= 0x20 || byte >= 0x7F {
                output.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            } else {
                output.append(byte)
            }
            cursor += 1
        }
        return output
    }
}
