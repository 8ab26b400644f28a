/// Text for the seed folder's and the watcher's log lines. Whoever can write into the seed
/// folder chooses its names, and a payload's text reaches a line through the reason a publish
/// was refused (a duplicate member's name), so neither may end a line (forging the next one) or
/// send escape sequences to the terminal reading the log.
package enum LogSafe {
    /// A name from the file system, printable ASCII only: control bytes, DEL, every byte from
    /// 0x80 up and `%` itself become `%XX`, as the access log escapes a request's path (which
    /// keeps `%` because paths arrive percent-encoded; a file name does not, so `%` is escaped
    /// too and an escaped name reads back unambiguously). A space stays: the name is quoted.
    package static func name(_ name: String) -> String {
        var escaped: [UInt8] = []
        escaped.reserveCapacity(name.utf8.count)
        for byte in name.utf8 {
            if byte < 0x20 || byte >= 0x7F || byte == UInt8(ascii: "%") {
                appendEscape(byte, to: &escaped)
            } else {
                escaped.append(byte)
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    /// A whole line, kept readable (`×`, `…` and names in other scripts stay), with every
    /// character that could break or disguise it as the UTF-8 bytes `%XX`: controls (C0, DEL,
    /// C1), format characters (bidirectional overrides, zero-width ones) and the line and
    /// paragraph separators. The last guard for texts that quote what others wrote.
    package static func line(_ text: String) -> String {
        var escaped: [UInt8] = []
        escaped.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator:
                UTF8.encode(scalar) { appendEscape($0, to: &escaped) }
            default:
                UTF8.encode(scalar) { escaped.append($0) }
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    private static let hex = Array("0123456789ABCDEF".utf8)

    private static func appendEscape(_ byte: UInt8, to output: inout [UInt8]) {
        output.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
    }
}
