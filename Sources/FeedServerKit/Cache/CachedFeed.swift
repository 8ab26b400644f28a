import ConcurrencyPrimitives
import FeedStore
import HTTPTransport
import Synchronization

/// One served generation rendered once, shared by every key of its group that serves it (a
/// read with and without `schemaVersion` costs one body, not two).
final class RenderedGeneration: Sendable {
    /// Group, generation id and fingerprint: what makes two renders the same bytes.
    struct Identity: Hashable, Sendable {
        var group: String
        var generationId: String
        var fingerprint: String
    }

    let identity: Identity
    /// The generation's assets (a timeline gives each item's image its size and URL).
    let assets: [String: AssetInfo]
    /// The body of `GET /feeds/{group}`.
    let body: SharedBody
    /// Where the compact payload lies in `body`.
    private let payloadRange: Range<Int>
    private let document = Lock<JSONDocument?>(nil)
    /// Where the elements of arrays timelines asked for lie in the document, by JSON Pointer.
    private let arrays = Lock<[String: [UInt32]]>([:])
    /// The profile guessed from this generation's payload, once made (nil inside: nothing guessed).
    private let inferred = Lock<InferredProfile??>(nil)
    /// Most arrays remembered per generation: a client naming ever new pointers walks each once
    /// and is not remembered.
    static let maxArrays = 8

    /// Renders `generation`; `ledger` already counts `reserved` bytes for it, corrected here to
    /// the body's size and given back when the body is freed (the last answer holding it sent).
    init(group: String, generation: Generation, ledger: RenderLedger? = nil, reserved: Int = 0) {
        identity = Identity(group: group, generationId: generation.id, fingerprint: generation.fingerprint)
        assets = Dictionary(generation.assets.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let rendered = FeedRendering.body(group: group, generation: generation)
        let count = rendered.bytes.count
        var whenFreed: (@Sendable () -> Void)?
        if let ledger { whenFreed = { ledger.release(count) } }
        body = SharedBody(rendered.bytes, whenFreed: whenFreed)
        payloadRange = rendered.payload
        ledger?.add(count - reserved)
    }

    /// The render `released` names again, while an answer still holds its body.
    init?(reviving released: ReleasedRender) {
        guard let body = released.body else { return nil }
        identity = released.identity
        assets = released.assets
        self.body = body
        payloadRange = released.payloadRange
    }

    /// What finds this render's body again once the cache lets it go.
    var released: ReleasedRender {
        ReleasedRender(identity: identity, assets: assets, payloadRange: payloadRange, body: body)
    }

    /// About how many bytes rendering `generation` makes (the payload, the envelope, each asset's
    /// entry), known before rendering it.
    static func estimatedBytes(of generation: Generation) -> Int {
        generation.compactPayload.count + 256 + generation.assets.count * 160
    }

    /// The payload as a document (its tape and a copy of its bytes), made on first use; whether
    /// this call made it, so the cache can count what it added.
    func payload() throws(JSONParseError) -> (document: JSONDocument, made: Bool) {
        if let made = document.withLock({ $0 }) { return (made, false) }
        let parsed = try JSONDocument(canonical: Array(body.bytes[payloadRange]))
        return document.withLock { current in
            if let current { return (current, false) }
            current = parsed
            return (parsed, true)
        }
    }

    /// The element positions of the array `pointer` names in `payload` (nil: no array there),
    /// walked once per pointer and kept (up to `maxArrays`); the bytes this call added.
    func elementPositions(
        _ pointer: JSONPointer, key: String, in payload: JSONDocument
    ) -> (
        positions: [UInt32]?, added: Int
    ) {
        if let known = arrays.withLock({ $0[key] }) { return (known, 0) }
        guard let array = pointer.resolve(in: payload.root), array.kind == .array else { return (nil, 0) }
        let positions = array.elementPositions
        let added = arrays.withLock { arrays -> Int in
            guard arrays[key] == nil, arrays.count < Self.maxArrays else { return 0 }
            arrays[key] = positions
            return positions.count * MemoryLayout<UInt32>.stride
        }
        return (positions, added)
    }

    /// The profile a timeline guesses for this generation, guessed once: the guess walks the payload.
    func inferredProfile(payload: JSONDocument) -> InferredProfile? {
        if let known = inferred.withLock({ $0 }) { return known }
        let guess = InferredProfile(payload: payload.root, assetNames: Array(assets.keys).sorted())
        inferred.withLock { $0 = .some(guess) }
        return guess
    }

    /// Bytes it holds: the body, the payload's document once made, and the arrays' positions.
    var footprint: Int {
        body.bytes.count + assets.count * 96 + (document.withLock { $0?.footprint } ?? 0)
            + arrays.withLock { $0.values.reduce(0) { $0 + $1.count * MemoryLayout<UInt32>.stride } }
    }
}

extension FeedResponseCache {
    /// The answers of one key: its served generation's shared render, and its own headers.
    final class Entry: Sendable {
        let token: ChangeToken
        let entityTag: String
        let rendered: RenderedGeneration
        /// Headers of both the `200` and the `304` (ETag, Cache-Control, nosniff, X-Feed-*).
        let headers: [(String, String)]
        /// Whether candidates were skipped to reach the served generation.
        let isFallback: Bool
        /// The served generation's id.
        let generationId: String
        /// The served generation's fingerprint.
        let fingerprint: String
        /// When the served generation was written.
        let generatedAtEpochMs: Int64
        /// The served generation's schema version.
        let schemaVersion: Int
        /// Reads answered with this entry's generation (`GET /journal/reads`).
        let reads: ReadCounts.Tally
        /// The `200` response (built once, and queued as one prepared `MHD_Response`).
        let ok: HTTPResponse
        /// The `304` response, stating the `200`'s `Content-Length` (RFC 9110 §8.6).
        let notModified: HTTPResponse
        /// The prepared `MHD_Response`s of `ok` and `notModified`.
        let okPrepared: PreparedResponse
        let notModifiedPrepared: PreparedResponse
        /// `ok` and `notModified` as a long-poll's answers (`no-store`), each one prepared response
        /// shared by every waiter a publish wakes.
        let okAfterWait: HTTPResponse
        let notModifiedAfterWait: HTTPResponse
        /// When it was last used, for eviction (the cache's clock, not wall time).
        let lastUse = Atomic<UInt64>(0)

        init(
            token: ChangeToken, generation: Generation, rendered: RenderedGeneration, headers: [(String, String)],
            read: FeedRead, reads: ReadCounts.Tally
        ) {
            self.token = token
            entityTag = Conditional.entityTag(generation.fingerprint)
            generationId = generation.id
            fingerprint = generation.fingerprint
            generatedAtEpochMs = generation.generatedAtEpochMs
            schemaVersion = generation.schemaVersion
            self.rendered = rendered
            self.headers = headers
            isFallback = read.isFallback
            self.reads = reads
            // The request history names the generation served, and why it is a fallback.
            let served = ServedVersion(
                id: generation.id,
                fallbackReason: read.pointerProblem != nil ? "unusable-pointer" : read.skipped.first?.reason.code)
            okPrepared = PreparedResponse(served: served)
            notModifiedPrepared = PreparedResponse(served: served)
            var ok = HTTPResponse(
                status: 200, headers: [("Content-Type", "application/json")] + headers, shared: rendered.body)
            ok.prepared = okPrepared
            ok.served = served
            self.ok = ok
            var notModified = HTTPResponse(status: 304, headers: headers)
            notModified.body = .lengthOnly(rendered.body.bytes.count)
            notModified.prepared = notModifiedPrepared
            notModified.served = served
            self.notModified = notModified
            okAfterWait = Self.unstored(ok, prepared: PreparedResponse(served: served))
            notModifiedAfterWait = Self.unstored(notModified, prepared: PreparedResponse(served: served))
        }

        /// `answer` with `Cache-Control: no-store` and `prepared` (nil: built per request): it tells
        /// one client how its wait ended, and a cache that kept it would give the next client that
        /// outcome instead of a wait (an instant answer it would poll again at once).
        static func unstored(_ answer: HTTPResponse, prepared: PreparedResponse?) -> HTTPResponse {
            var answer = answer
            answer.headers.removeAll { $0.0 == "Cache-Control" }
            answer.headers.append(("Cache-Control", "no-store"))
            answer.prepared = prepared
            return answer
        }

        /// The shared body.
        var body: SharedBody { rendered.body }

        /// What this entry serves, without its body (waiters and streams keep this).
        var facts: ServedFacts {
            ServedFacts(
                token: token, entityTag: entityTag, fingerprint: fingerprint, generationId: generationId,
                generatedAtEpochMs: generatedAtEpochMs)
        }
    }
}
