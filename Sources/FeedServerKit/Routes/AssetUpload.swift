import FeedImaging
import FeedStore
import HTTPTransport

/// A `multipart/form-data` publish: the `payload` part plus one part per asset, images packed
/// under the budget the query asks for.
struct AssetUpload {
    /// The JSON payload bytes.
    var payload: [UInt8]
    /// What the budget kept and skipped.
    var packing: AssetBudget.Result
    /// The widget profile a seed folder or archive carries (`profile.json`); stored with the
    /// publish, and the lint's profile instead of the group's.
    var profile: WidgetProfile? = nil

    /// The query parameters of an upload.
    struct Options {
        var budget = AssetBudget()
        var raw = false
        var strict = false
        /// Whether the assets are an archive's, stored as they are (all or nothing without `strict`
        /// being asked for): a refusal then says how to have them packed instead.
        var archiveAsIs = false
    }

    /// Reads `maxDimension`, `maxBytes`, `budgetBytes`, `quality`, `maxDecodedBytes`, `images`, `strict`.
    static func options(from query: RequestFields) throws(Problem) -> Options {
        var options = Options()
        func integer(_ name: String, _ range: ClosedRange<Int>) throws(Problem) -> Int? {
            guard let text = query[name] else { return nil }
            guard let value = Int(text), range.contains(value) else {
                throw Problem.invalidParameter(
                    "\(name) must be an integer from \(range.lowerBound) to \(range.upperBound) (got '\(text)').")
            }
            return value
        }
        if let value = try integer("maxDimension", 16...8192) {
            options.budget.maxDimension = value
            options.budget.minDimension = min(options.budget.minDimension, value)
        }
        if let value = try integer("maxBytes", 1...(1 << 30)) { options.budget.maxBytesPerImage = value }
        if let value = try integer("budgetBytes", 1...(1 << 32)) { options.budget.maxBytesTotal = value }
        if let value = try integer("quality", 1...100) {
            options.budget.jpegQuality = value
            options.budget.minJPEGQuality = min(options.budget.minJPEGQuality, value)
        }
        if let value = try integer("maxDecodedBytes", 1...(1 << 40)) { options.budget.maxDecodedBytes = value }
        switch query["images"] {
        case nil, "encode", "pack": break
        case "raw": options.raw = true
        case let other?:
            throw Problem.invalidParameter("images must be 'encode' (or 'pack') or 'raw' (got '\(other)').")
        }
        switch query["strict"] {
        case nil, "false": break
        case "true": options.strict = true
        case let other?: throw Problem.invalidParameter("strict must be 'true' or 'false' (got '\(other)').")
        }
        return options
    }

    /// Splits the parts, checks names, and packs the images.
    static func prepare(
        parts: [MultipartPart], options: Options, encoder: VipsImageEncoder, threads: Int,
        prefetch: ImagePrefetchBatch? = nil
    ) throws(Problem)
        -> AssetUpload
    {
        var payload: [UInt8]?
        var candidates: [AssetBudget.Candidate] = []
        var names = Set<String>()
        for part in parts {
            // `-F payload=@feed.json` (a file part) and `-F 'payload={...}'` (a field) both work.
            if part.name == "payload" {
                guard payload == nil else { throw Problem.repeatedPayloadPart }
                payload = part.bytes
                continue
            }
            // The asset name is the part's filename; a part without one is named by its field.
            let name = part.filename ?? part.name
            if let reason = SafeName.problem(with: name) { throw Problem.invalidAssetName(name, reason: reason) }
            guard names.insert(name).inserted else { throw Problem(PublishError.duplicateAssetName(name)) }
            candidates.append(AssetBudget.Candidate(name: name, source: part.source))
        }
        guard let payload else { throw Problem.missingPayloadPart }
        return try pack(
            payload: payload, candidates: candidates, options: options, encoder: encoder, threads: threads,
            prefetch: prefetch)
    }

    /// Packs checked, uniquely named candidates under the options' budget (as they are with
    /// `raw`); with `strict`, a skipped asset is a 422. Multipart publishes, seed folders and
    /// archives all come through here, so the same files always pack to the same bytes.
    static func pack(
        payload: [UInt8], candidates: [AssetBudget.Candidate], options: Options, encoder: VipsImageEncoder,
        threads: Int,
        prefetch: ImagePrefetchBatch? = nil
    ) throws(Problem) -> AssetUpload {
        let packing =
            options.raw
            ? options.budget.packRaw(candidates, encoder: encoder)
            : encoder.pack(candidates, budget: options.budget, threads: threads, prefetch: prefetch)
        return try checked(payload: payload, packing: packing, options: options)
    }

    /// The upload once packed, unless the server could not judge an image (a 503: a 201 without
    /// it would read as a bad image) or, with `strict`, any was skipped (a 422).
    static func checked(
        payload: [UInt8], packing: AssetBudget.Result, options: Options
    ) throws(Problem)
        -> AssetUpload
    {
        if let fault = packing.serverFault { throw Problem.imagingUnavailable(fault) }
        if options.strict, !packing.skipped.isEmpty {
            throw Problem.assetsRejected(packing.skipped, archiveAsIs: options.archiveAsIs)
        }
        return AssetUpload(payload: payload, packing: packing)
    }

    /// The packed images as store inputs.
    var assetInputs: [AssetInput] {
        packing.packed.map {
            guard let file = $0.image.file else {
                return AssetInput(name: $0.name, bytes: $0.image.bytes, width: $0.image.width, height: $0.image.height)
            }
            return AssetInput(name: $0.name, file: file, width: $0.image.width, height: $0.image.height)
        }
    }

    /// `[{"name","reason"}]`.
    static func skippedJSON(_ skipped: [AssetBudget.Skipped]) -> JSONValue {
        .array(
            skipped.map { .object([JSONMember("name", .string($0.name)), JSONMember("reason", .string($0.reason))]) })
    }
}
