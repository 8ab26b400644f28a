import FeedStore
import FeedStoreTesting
import HTTPTransport

@testable import FeedServerKit

/// Query and header parameters, through the same lookup and decoding the daemon uses
/// (`RequestFields`) and into the parsers and handlers that read them.
///
/// Input: a query string (`name=value&...`, values percent-encoded), a newline, then header
/// lines (`Name: value`). NUL bytes are dropped (libmicrohttpd never passes them on).
enum ParameterTarget {
    static let target = FuzzTarget(
        name: "parameters",
        summary:
            "schemaVersion/X-Schema-Version, count, epochMs, start, hours, zoneOffsetSeconds, wait, items, the upload "
            + "budget parameters, X-Request-Id and Content-Type, parsed directly and by the /rotation and /timeline "
            + "handlers: every value accepted is the number the text spells and lies in its documented range, every "
            + "refusal is a 400/422 problem with a JSON body, rotation and timeline answers agree with an independent "
            + "computation.",
        check: check)

    /// Epoch milliseconds the server accepts: JavaScript's Date range, ±8.64e15.
    static let epochRange: ClosedRange<Int64> = -8_640_000_000_000_000...8_640_000_000_000_000

    /// The clock the handlers see when `epochMs`/`start` are absent.
    static let now: Int64 = 1_764_450_000_000

    /// A store in memory with one group `g`: a schema-1 and a schema-2 generation.
    static let store: FeedStore = {
        let clock = FixedClock(epochMs: now)
        let store = FeedStore(root: "/fuzz", fileSystem: InMemoryFileSystem(clock: clock), clock: clock)
        _ = try? store.publish(
            group: "g", payloadJSON: Array(#"{"quotes":[{"id":1},{"id":2},{"id":3}],"empty":[]}"#.utf8))
        clock.advance(byMs: 1000)
        _ = try? store.publish(group: "g", payloadJSON: Array(#"{"entries":["a","b"]}"#.utf8), schemaVersion: 2)
        return store
    }()

    static func check(_ input: [UInt8]) throws(PropertyViolation) {
        let text = String(decoding: input.filter { $0 != 0 }, as: UTF8.self)
        let (queryLine, headerLines) =
            text.firstIndex(of: "\n").map { (String(text[..<$0]), String(text[text.index(after: $0)...])) } ?? (
                text, ""
            )
        let query = RequestFields(given: queryPairs(queryLine), kind: .GET_ARGUMENT_KIND)
        let headers = RequestFields(given: headerPairs(headerLines), kind: .HEADER_KIND)
        try checkSchemaVersion(header: headers["X-Schema-Version"], query: query["schemaVersion"])
        try checkWait(query["wait"])
        try checkUploadOptions(query)
        try checkRequestID(headers["X-Request-Id"])
        let request = HTTPRequest(
            method: "GET", rawPath: "/rotation", query: query, headers: headers, body: [], parts: nil)
        try checkMediaType(request)
        // A read cache per input, not one for the whole run: the cache keeps each generation's
        // parsed payload, and a `JSONValue` that outlives the run is reported by LeakSanitizer at
        // exit (Swift stores an enum's case in spare bits of its box pointers, which LSan does
        // not recognise as pointers, so the boxes look unreferenced). docs/testing.md.
        let cache = FeedResponseCache(store: store)
        let routes = RotationRoutes(clock: FixedClock(epochMs: now))
        let timeline = TimelineRoutes(store: store, cache: cache, clock: FixedClock(epochMs: now))
        try checkRotation(
            answered { () throws(Problem) in try routes.rotation(RoutedRequest(request: request, parameters: [])) },
            query: query)
        try checkTimeline(
            answered { () throws(Problem) in try timeline.timeline(RoutedRequest(request: request, parameters: ["g"]))
            },
            query: query)
    }

    /// A handler's answer, a thrown problem rendered as the pipeline renders it.
    private static func answered(_ handler: () throws(Problem) -> HTTPResponse) -> HTTPResponse {
        do { return try handler() } catch { return error.response }
    }

    // MARK: Parsers

    private static func checkSchemaVersion(header: String?, query: String?) throws(PropertyViolation) {
        let result = Result(catching: { () throws(Problem) in
            try ReadParameters.schemaVersion(header: header, query: query)
        })
        let given = [header, query].compactMap { $0 }
        let values = given.map { decimal(trimmed($0), in: 0...Int64(Int32.max)) }
        switch result {
        case .success(let version):
            try expect(
                values.allSatisfy { $0 != nil } && Set(values.map { $0.map(Int.init) }).count <= 1,
                "schemaVersion is accepted only when every given value is an integer 0...2147483647 and they agree",
                observed: "\(version as Any) from \(given.map(shown))")
            try expect(
                version == values.first.flatMap { $0.map(Int.init) }, "the schema version is the number given",
                observed: "\(version as Any) from \(given.map(shown))")
        case .failure(let problem):
            let malformed = values.contains { $0 == nil }
            try expect(
                problem.status == (malformed ? 400 : 422), "a malformed schema version is 400, two that disagree 422",
                observed: "\(problem.status) for \(given.map(shown))")
            try expectProblemBody(problem.response)
        }
    }

    private static func checkWait(_ text: String?) throws(PropertyViolation) {
        switch Result(catching: { () throws(Problem) in try ReadParameters.waitSeconds(text) }) {
        case .success(let seconds):
            guard let text else {
                try expect(seconds == nil, "no wait parameter means no wait")
                return
            }
            let limit = ReadParameters.maxWaitSeconds * (1 + 1.0 / 16)
            try expect(
                seconds.map { $0.isFinite && $0 >= 0 && $0 <= limit } ?? false,
                "an accepted wait is finite and between 0 and 60 s plus 1/16 jitter",
                observed: "\(seconds as Any) from \(shown(text))")
        case .failure(let problem):
            try expect(
                text.map { Double($0).map { !$0.isFinite || $0 < 0 } ?? true } ?? false,
                "wait is refused only when it is not a finite number of seconds, 0 or more", observed: shown(text ?? "")
            )
            try expect(problem.status == 400, "a bad wait is a 400")
        }
    }

    /// The integer upload parameters and their documented ranges.
    private static let uploadRanges: [(String, ClosedRange<Int64>)] = [
        ("maxDimension", 16...8192), ("maxBytes", 1...(1 << 30)), ("budgetBytes", 1...(1 << 32)),
        ("quality", 1...100), ("maxDecodedBytes", 1...(1 << 40)),
    ]

    private static func checkUploadOptions(_ query: RequestFields) throws(PropertyViolation) {
        let integers = uploadRanges.map { name, range in (name, query[name], query[name].map { decimal($0, in: range) })
        }
        let wordsValid = [("images", ["encode", "raw"]), ("strict", ["true", "false"])].allSatisfy { name, words in
            query[name].map(words.contains) ?? true
        }
        let valid = wordsValid && integers.allSatisfy { $0.2 == nil || $0.2! != nil }
        switch Result(catching: { () throws(Problem) in try AssetUpload.options(from: query) }) {
        case .success(let options):
            try expect(
                valid, "upload options are accepted only when every given one is in range",
                observed: integers.map { "\($0.0)=\($0.1.map(shown) ?? "-")" }.joined(separator: " "))
            let budget = options.budget
            if let value = integers[0].2 ?? nil {
                try expect(
                    budget.maxDimension == Int(value) && budget.minDimension <= budget.maxDimension,
                    "maxDimension is applied and stays above minDimension")
            }
            if let value = integers[1].2 ?? nil {
                try expect(budget.maxBytesPerImage == Int(value), "maxBytes is applied")
            }
            if let value = integers[2].2 ?? nil {
                try expect(budget.maxBytesTotal == Int(value), "budgetBytes is applied")
            }
            if let value = integers[3].2 ?? nil {
                try expect(
                    budget.jpegQuality == Int(value) && budget.minJPEGQuality <= budget.jpegQuality,
                    "quality is applied and stays above the minimum")
            }
            if let value = integers[4].2 ?? nil {
                try expect(budget.maxDecodedBytes == Int(value), "maxDecodedBytes is applied")
            }
            let images: String? = query["images"]
            let strict: String? = query["strict"]
            try expect(
                options.raw == (images == "raw") && options.strict == (strict == "true"),
                "images and strict are applied")
        case .failure(let problem):
            try expect(!valid, "valid upload options are accepted", observed: problem.detail)
            try expect(problem.status == 400, "bad upload options are a 400")
            try expectProblemBody(problem.response)
        }
    }

    private static func checkRequestID(_ header: String?) throws(PropertyViolation) {
        let echoed = header.flatMap { value in value.withCString { RequestID.sane($0) } }
        let id = echoed ?? RequestID.generate()
        let safe: (String) -> Bool = { text in
            (1...64).contains(text.utf8.count)
                && text.utf8.allSatisfy { byte in
                    switch byte {
                    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                        UInt8(ascii: "0")...UInt8(ascii: "9"),
                        UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                        return true
                    default: return false
                    }
                }
        }
        try expect(safe(id), "a request id is 1 to 64 of A-Z a-z 0-9 - _ .", observed: shown(id))
        if let header, safe(header) {
            try expect(echoed == header, "a sane client request id is echoed", observed: shown(id))
        }
        if let echoed { try expect(safe(echoed), "only a sane client request id is echoed", observed: shown(echoed)) }
    }

    private static func checkMediaType(_ request: HTTPRequest) throws(PropertyViolation) {
        guard let type = request.mediaType else { return }
        try expect(
            !type.contains(";") && type == type.lowercased() && trimmed(type) == type,
            "a media type has no parameters, no surrounding blanks and is lowercase", observed: shown(type))
    }

    // MARK: Handlers

    private static func checkRotation(_ response: HTTPResponse, query: RequestFields) throws(PropertyViolation) {
        let body = try expectJSON(response)
        let count = query["count"].flatMap { decimal($0, in: 1...1_000_000) }
        let epochMs = query["epochMs"].map { decimal($0, in: epochRange) } ?? now
        let zone = query["zoneOffsetSeconds"].map { decimal($0, in: -64_800...64_800) } ?? 0
        guard response.status == 200 else {
            try expect(
                response.status == 400 && (count == nil || epochMs == nil || zone == nil),
                "/rotation answers 400 exactly when count, epochMs or zoneOffsetSeconds is missing or out of range",
                observed: "\(response.status) \(shown(CompactJSON.bytes(body)))")
            return try expectProblemBody(response)
        }
        guard let count, let epochMs, let zone else {
            throw PropertyViolation(
                property: "/rotation answers 200 only for valid count, epochMs and zoneOffsetSeconds",
                observed: shown(CompactJSON.bytes(body)))
        }
        let slot = floorDivide(Int128(epochMs) + Int128(zone) * 1000, by: 3_600_000)
        let index = ((slot % Int128(count)) + Int128(count)) % Int128(count)
        let answered: (slot: Int128?, index: Int128?) = (
            body["slot"]?.integerValue.map { Int128($0) }, body["index"]?.integerValue.map { Int128($0) }
        )
        try expect(
            answered.slot == slot && answered.index == index,
            "/rotation's slot and index agree with floor division and a positive modulo",
            observed: "\(shown(CompactJSON.bytes(body))) expected slot \(slot) index \(index)")
    }

    private static func checkTimeline(_ response: HTTPResponse, query: RequestFields) throws(PropertyViolation) {
        let body = try expectJSON(response)
        guard response.status == 200 else {
            try expect(
                [400, 404, 422].contains(response.status), "/timeline answers 200, 400, 404 or 422",
                observed: "\(response.status)")
            return try expectProblemBody(response)
        }
        let hours = query["hours"].map { decimal($0, in: 1...168) } ?? 24
        let start = query["start"].map { decimal($0, in: epochRange) } ?? now
        guard let hours, let start, let entries = body["entries"]?.arrayValue else {
            throw PropertyViolation(
                property: "/timeline answers 200 only for valid hours and start, with entries",
                observed: shown(CompactJSON.bytes(body)))
        }
        try expect(
            entries.count == Int(hours), "/timeline has one entry per hour asked for",
            observed: "\(entries.count) for \(hours)")
        let starts = entries.compactMap { $0["startEpochMs"]?.integerValue }
        try expect(
            starts.count == entries.count && zip(starts, starts.dropFirst()).allSatisfy { $1 - $0 == 3_600_000 },
            "timeline entries start an hour apart", observed: "\(starts.prefix(3))")
        if let first = starts.first {
            try expect(
                first <= start && start - first < 3_600_000,
                "the first entry starts at the local hour containing start",
                observed: "first \(first), start \(start)")
        }
    }

    // MARK: Helpers

    /// The body of an in-memory response, which must be JSON.
    private static func expectJSON(_ response: HTTPResponse) throws(PropertyViolation) -> JSONValue {
        let bytes = bodyBytes(response)
        guard let value = try? JSONParser.parse(bytes) else {
            throw PropertyViolation(
                property: "every answer has a JSON body", observed: "\(response.status) \(shown(bytes))")
        }
        return value
    }

    private static func expectProblemBody(_ response: HTTPResponse) throws(PropertyViolation) {
        let body = try expectJSON(response)
        try expect(
            body["status"]?.integerValue == Int64(response.status) && !(body["detail"]?.stringValue ?? "").isEmpty
                && response.header("Content-Type") == "application/problem+json",
            "a problem is application/problem+json with its status and a detail",
            observed: shown(CompactJSON.bytes(body)))
    }

    /// `name=value&...` as libmicrohttpd splits it (values stay encoded; a name without '=' has no value).
    private static func queryPairs(_ line: String) -> [(String, String)] {
        line.split(separator: "&").compactMap { piece in
            guard let equals = piece.firstIndex(of: "=") else { return nil }
            return (String(piece[..<equals]), String(piece[equals...].dropFirst()))
        }
    }

    /// `Name: value` lines; libmicrohttpd trims blanks around the value.
    private static func headerPairs(_ lines: String) -> [(String, String)] {
        lines.split(separator: "\n").compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), trimmed(String(line[colon...].dropFirst())))
        }
    }

    private static func trimmed(_ text: String) -> String {
        var scalars = Substring(text).unicodeScalars
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }

    /// The integer an optional sign and decimal digits spell, when it lies in `range`
    /// (written here digit by digit, independently of the parsers under test).
    static func decimal(_ text: String, in range: ClosedRange<Int64>) -> Int64? {
        var digits = Substring(text).utf8
        var negative = false
        if let sign = digits.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
            negative = sign == UInt8(ascii: "-")
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        // Leading zeros spell nothing (`000…0`, 53 digits, is 0, and the server takes it, so the
        // reference must not count them); more than 38 significant digits are beyond every range
        // here, and would overflow Int128.
        let significant = digits.drop { $0 == 0x30 }
        guard significant.count <= 38 else { return nil }
        let magnitude = significant.reduce(Int128(0)) { $0 * 10 + Int128($1 - 0x30) }
        let value = negative ? -magnitude : magnitude
        guard value >= Int128(range.lowerBound), value <= Int128(range.upperBound) else { return nil }
        return Int64(value)
    }

    private static func floorDivide(_ value: Int128, by divisor: Int128) -> Int128 {
        let quotient = value / divisor
        return (value % divisor != 0 && value < 0) ? quotient - 1 : quotient
    }
}
