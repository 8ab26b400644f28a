/// Why some bytes are not acceptable JSON, and where.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Byte offset (from 0) where the problem was found.
    public let offset: Int
    /// What is wrong, in words, for example `expected ',' or '}' after an object member`.
    public let reason: String

    /// Creates a parse error.
    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    /// `reason at byte N`.
    public var description: String { "\(reason) at byte \(offset)" }
}

/// Bounds that keep a hostile document from costing unbounded stack or memory.
public struct JSONLimits: Sendable, Equatable {
    /// Deepest nesting of arrays and objects accepted.
    public var maxDepth: Int
    /// Largest document accepted, in bytes.
    public var maxBytes: Int

    /// Creates limits; the defaults suit widget payloads.
    public init(maxDepth: Int = 128, maxBytes: Int = 16 << 20) {
        self.maxDepth = maxDepth
        self.maxBytes = maxBytes
    }
}
