import CMicroHTTPD

#if canImport(Glibc)
import Glibc
#endif

/// Looks up request headers or query parameters on demand in libmicrohttpd's parsed request
/// (`MHD_lookup_connection_value`), so the hot path never copies fields it does not read.
///
/// Live fields are valid only while the access handler runs; `detached()` copies them for a
/// handler that runs later on the work pool.
package struct RequestFields: @unchecked Sendable {
    private enum Source {
        case live(connection: OpaquePointer, kind: MHD_ValueKind)
        /// Lowercased header names (or query names as sent) → first value, already decoded; and
        /// every decodable name in order, valueless ones (`?strict`) included.
        case copied([String: String], caseInsensitive: Bool, undecodable: String?, names: [String])
    }

    private let source: Source

    package init(connection: OpaquePointer, kind: MHD_ValueKind) {
        source = .live(connection: connection, kind: kind)
    }

    private init(copied values: [String: String], caseInsensitive: Bool, undecodable: String?, names: [String]) {
        source = .copied(values, caseInsensitive: caseInsensitive, undecodable: undecodable, names: names)
    }

    /// Fields without a connection, for fuzz targets and tests: raw name/value pairs as
    /// libmicrohttpd hands them over, kept as `detached()` keeps them (first decodable value
    /// per name, header names case-insensitive, query values percent-decoded once).
    package init(given pairs: [(String, String)], kind: MHD_ValueKind) {
        let caseInsensitive = kind == .HEADER_KIND
        var values: [String: String] = [:]
        var undecodable: String?
        var names: [String] = []
        for (name, raw) in pairs {
            let key = caseInsensitive ? name.lowercased() : name
            guard let value = raw.withCString({ Self.decoded($0, kind: kind) }) else {
                undecodable = undecodable ?? name
                continue
            }
            names.append(key)
            if values[key] == nil { values[key] = value }
        }
        self.init(copied: values, caseInsensitive: caseInsensitive, undecodable: undecodable, names: names)
    }

    /// The first value of `name` (headers: case-insensitive); query values are percent-decoded
    /// here, once, because the daemon is told to decode nothing itself.
    package subscript(name: String) -> String? {
        switch source {
        case .live(let connection, let kind):
            // withCString reads a native string in place (passing `name` itself would copy it).
            guard let value = name.withCString({ MHD_lookup_connection_value(connection, kind, $0) }) else {
                return nil
            }
            return Self.decoded(value, kind: kind)
        case .copied(let values, let caseInsensitive, _, _):
            return values[caseInsensitive ? name.lowercased() : name]
        }
    }

    /// The same for a literal name, passed to libmicrohttpd without building a C string.
    package subscript(name: StaticString) -> String? {
        guard case .live(let connection, let kind) = source else { return self[name.description] }
        let found = name.withUTF8Buffer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count + 1) {
                MHD_lookup_connection_value(connection, kind, $0)
            }
        }
        guard let value = found else { return nil }
        return Self.decoded(value, kind: kind)
    }

    /// Calls `body` with the bytes of a header's first value as sent (nil when absent), read in
    /// place in libmicrohttpd's parsed request: nothing is copied. (Query values are decoded first.)
    package func withBytes<R>(of name: StaticString, _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        guard case .live(let connection, let kind) = source, kind == .HEADER_KIND else {
            guard var value = self[name] else { return body(nil) }
            return value.withUTF8 { body($0) }
        }
        let found = name.withUTF8Buffer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count + 1) {
                MHD_lookup_connection_value(connection, kind, $0)
            }
        }
        guard let found else { return body(nil) }
        return found.withMemoryRebound(to: UInt8.self, capacity: strlen(found)) {
            body(UnsafeBufferPointer(start: $0, count: strlen(found)))
        }
    }

    /// The first query name that is not percent-encoded UTF-8, or whose value is not
    /// (`?%ff=1`, `?group=%ff`), nil when every one decodes (or these are headers). A route would
    /// read such a value as absent.
    package var undecodableName: String? {
        switch source {
        case .live(let connection, let kind):
            // Counted without a callback first: most requests have no query, and pay nothing more.
            guard kind == .GET_ARGUMENT_KIND, MHD_get_connection_values(connection, kind, nil, nil) > 0 else {
                return nil
            }
            let collector = FieldCollector(caseInsensitive: false, kind: kind, keepsValues: false)
            MHD_get_connection_values(connection, kind, collectField, Unmanaged.passUnretained(collector).toOpaque())
            return collector.undecodable
        case .copied(_, _, let undecodable, _):
            return undecodable
        }
    }

    /// Every name sent, in order, as sent (headers lowercased), a valueless one (`?strict`)
    /// included: a route that takes a fixed set of parameters refuses the others by these.
    package var names: [String] {
        switch source {
        case .live(let connection, let kind):
            let collector = FieldCollector(caseInsensitive: kind == .HEADER_KIND, kind: kind, keepsValues: false)
            MHD_get_connection_values(connection, kind, collectField, Unmanaged.passUnretained(collector).toOpaque())
            return collector.names
        case .copied(_, _, _, let names):
            return names
        }
    }

    /// A copy that stays valid after the handler call (`MHD_get_connection_values`).
    package func detached() -> RequestFields {
        guard case .live(let connection, let kind) = source else { return self }
        let collector = FieldCollector(caseInsensitive: kind == .HEADER_KIND, kind: kind, keepsValues: true)
        MHD_get_connection_values(connection, kind, collectField, Unmanaged.passUnretained(collector).toOpaque())
        return RequestFields(
            copied: collector.values, caseInsensitive: kind == .HEADER_KIND, undecodable: collector.undecodable,
            names: collector.names)
    }

    fileprivate static func decoded(_ value: UnsafePointer<CChar>, kind: MHD_ValueKind) -> String? {
        let raw = String(cString: value)
        return kind == .GET_ARGUMENT_KIND ? PercentDecoding.decode(raw, plusIsSpace: true) : raw
    }
}

/// What `MHD_get_connection_values` reports, first value per name.
private final class FieldCollector {
    var values: [String: String] = [:]
    /// Every decodable name, in order, valueless ones included.
    var names: [String] = []
    /// The first name whose value does not decode.
    var undecodable: String?
    let caseInsensitive: Bool
    let kind: MHD_ValueKind
    /// Whether values are kept, or only checked.
    let keepsValues: Bool

    init(caseInsensitive: Bool, kind: MHD_ValueKind, keepsValues: Bool) {
        self.caseInsensitive = caseInsensitive
        self.kind = kind
        self.keepsValues = keepsValues
    }
}

private let collectField: MHD_KeyValueIterator = { cls, _, key, value in
    guard let cls, let key else { return mhdYes }
    let collector = Unmanaged<FieldCollector>.fromOpaque(cls).takeUnretainedValue()
    let name = String(cString: key)
    // Names as the live lookup matches them (raw; headers case-insensitively); a name without
    // a value reads as absent there too.
    let normalized = collector.caseInsensitive ? name.lowercased() : name
    // A query name that does not decode (`?%ff=1`) names nothing a route could mean: refused as
    // an undecodable value is, rather than ignored.
    if collector.kind == .GET_ARGUMENT_KIND, PercentDecoding.decode(name, plusIsSpace: true) == nil {
        if collector.undecodable == nil { collector.undecodable = name }
        return mhdYes
    }
    guard let value else {
        collector.names.append(normalized)
        return mhdYes
    }
    guard let decoded = RequestFields.decoded(value, kind: collector.kind) else {
        if collector.undecodable == nil { collector.undecodable = name }
        return mhdYes
    }
    collector.names.append(normalized)
    if collector.keepsValues, collector.values[normalized] == nil { collector.values[normalized] = decoded }
    return mhdYes
}
