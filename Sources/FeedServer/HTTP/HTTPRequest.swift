/// Request headers, matched case-insensitively (field names are ASCII).
struct HTTPHeaders: Sendable {
    private(set) var fields: [(name: String, value: String)] = []

    /// Adds a field as received.
    mutating func add(name: String, value: String) { fields.append((name, value)) }

    /// The first value of `name`, ignoring case.
    subscript(name: String) -> String? {
        fields.first { $0.name.utf8.count == name.utf8.count && $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// One HTTP request as the router sees it: method, still-encoded path, decoded query, headers, body.
struct HTTPRequest: Sendable {
    /// `GET`, `PUT`, ... as sent.
    var method: String
    /// The path as received, still percent-encoded (decoded once per segment by the router).
    var rawPath: String
    /// Query parameters, percent-decoded; the first value wins for repeated names.
    var query: [String: String]
    /// Header fields.
    var headers: HTTPHeaders
    /// The request body (empty for most reads).
    var body: [UInt8]

    /// `Content-Type` without parameters, lowercased (`application/json; charset=utf-8` → `application/json`).
    var mediaType: String? {
        guard let value = headers["Content-Type"] else { return nil }
        let type = value.split(separator: ";", maxSplits: 1).first ?? ""
        return type.trimmingSpaces().lowercased()
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[start...end])
    }
}
