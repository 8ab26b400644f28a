import FeedStore
import HTTPTransport

/// `GET /feeds/{group}/timeline`: the entries a WidgetKit timeline would hold, one per hour, each
/// resolved with the group's widget profile as the widget's own code would: the item at
/// WidgetRotation's index, its title, subtitle and image, or the empty state.
struct TimelineRoutes: Sendable {
    let store: FeedStore
    let cache: FeedResponseCache
    let clock: any FeedClock

    var routes: [Route] {
        [
            Route(
                "/feeds/{group}/timeline", methods: ["GET": { routed throws(Problem) in try timeline(routed) }],
                offloaded: ["GET"])
        ]
    }

    /// `?hours=24&start=<epochMs>&zone=<IANA or ±HH:MM>&schemaVersion=`, and any profile member
    /// (`items`, `title`, `subtitle`, `image`, `empty`) to override the group's profile.
    func timeline(_ routed: RoutedRequest) throws(Problem) -> HTTPResponse {
        let group = routed.parameters[0]
        let query = routed.request.query
        guard SafeName.isGroupName(group) else { throw Problem.notASafeGroupName(group) }
        let hourCount = try Parameters.int(query["hours"], "hours", 1...168) ?? 24
        let offset = try Parameters.int(query["zoneOffsetSeconds"], "zoneOffsetSeconds", -64_800...64_800)
        let start = try Parameters.int64(query["start"], "start") ?? clock.nowEpochMs()
        let schemaVersion = try Parameters.int(query["schemaVersion"], "schemaVersion", 0...Int(Int32.max))
        // Through the read cache: the payload is parsed once per served generation.
        let generation = try cache.served(.init(group: group, schemaVersion: schemaVersion))
        let payload: JSONDocument
        do { payload = try cache.payload(of: generation) } catch { throw Problem.invalidParameter("\(error)") }
        let applied = try profile(group: group, query: query, offset: offset) {
            generation.rendered.inferredProfile(payload: payload)
        }
        let zone = applied.profile.profile.zone.flatMap(WidgetProfile.zoneRules) ?? .utc
        // The array's element positions are kept per generation, so a timeline reads only the
        // items its hours show, however long the array.
        let items = applied.profile.profile.items
        guard
            let positions = cache.elementPositions(of: generation, pointer: items.pointer, key: items.text, in: payload)
        else {
            throw Problem.noItems(pointer: items.text, generation: generation.generationId)
        }
        let hours = WidgetTimeline.hours(startEpochMs: start, count: hourCount, zone: zone)
        let writer = TimelineWriter(
            items: WidgetItems(profile: applied.profile.profile, payload: payload.root), generation: generation,
            positions: positions, payload: payload)
        let body = try writer.body(
            hours: hours, zone: zone, profile: PublishLint.json(applied.profile, source: applied.source),
            limit: store.configuration.maxFeedBytes)
        // Counted with the renders while it is sent: a reader that stops reading holds it.
        guard let counted = cache.countedBody(body) else { throw Problem.rendersLimit(cache.outsideLimitBytes) }
        return HTTPResponse(
            status: 200,
            headers: [
                ("Content-Type", "application/json"), ("X-Content-Type-Options", "nosniff"),
                ("Cache-Control", "no-store"),
            ], shared: counted)
    }

    /// The profile a timeline applies, and where it came from: the query's members over the
    /// group's profile (`query`; `zoneOffsetSeconds=` stands for `zone=` without it), the group's
    /// (`stored`), or a guess (`inferred`, made by `guess` only when the items are not given).
    private func profile(
        group: String, query: RequestFields, offset: Int?, guess: () -> InferredProfile?
    ) throws(Problem) -> (profile: LintProfile, source: String) {
        let stored: WidgetProfile?
        do { stored = try store.profile(group: group) } catch { throw Problem.unreadableProfile(error) }
        var strings = Dictionary(uniqueKeysWithValues: (stored?.strings ?? []).map { ($0.name, $0.text) })
        var overrides = WidgetProfile.memberNames.filter { query[$0] != nil }
        for name in overrides { strings[name] = query[name] }
        if let offset, query["zone"] == nil {
            strings["zone"] = ZoneRules(fixedOffsetSeconds: offset).name
            overrides.append("zone")
        }
        var inferred: [String] = []
        if strings["items"] == nil, let guessed = guess() {
            strings["items"] = guessed.profile.items.text
            inferred.append("items")
            if strings["image"] == nil, let image = guessed.profile.image {
                strings["image"] = image.text
                inferred.append("image")
            }
        }
        guard strings["items"] != nil else {
            throw Problem.noItemsToShow(
                "The group has no widget profile and its payload has no single array of objects: pass items (a "
                    + "JSON Pointer to the items array, such as /quotes) or PUT /feeds/\(group)/profile.")
        }
        let profile: WidgetProfile
        // A well-formed parameter that names no valid profile member is a 422 naming it, as a PUT
        // of the same profile is.
        do { profile = try WidgetProfile(strings: strings) } catch { throw Problem.invalidProfile(error) }
        var applied = LintProfile(stated: profile)
        applied.inferred = inferred
        let source = !overrides.isEmpty ? "query" : inferred.isEmpty ? "stored" : "inferred"
        return (applied, source)
    }
}

/// The body of a timeline answer, written straight into bytes: items are copied as their
/// canonical bytes, never as trees, and sized before the answer is built.
struct TimelineWriter {
    let items: WidgetItems
    let generation: FeedResponseCache.Entry
    let positions: [UInt32]
    let payload: JSONDocument

    /// `{"generationId","count","profile","zone","empty","entries":[…]}`; a 422 when the items the
    /// hours repeat would pass `limit` bytes.
    func body(
        hours: [WidgetTimeline.Hour], zone: ZoneRules, profile: JSONValue, limit: Int
    ) throws(Problem) -> [UInt8] {
        let indexes = hours.map { WidgetRotation.index(slot: $0.slot, count: positions.count) }
        let nodes = positions.isEmpty ? [] : indexes.map { payload.node(atTapePosition: positions[$0]) }
        let itemBytes = nodes.reduce(0) { $0 &+ ($1?.compactBytes.count ?? 4) }
        guard itemBytes <= limit else {
            throw Problem.timelineTooLarge(bytes: itemBytes, limit: limit, hours: hours.count)
        }
        var body = Array(#"{"generationId":"#.utf8)
        body.reserveCapacity(itemBytes + hours.count * 256 + 512)
        CompactJSON.writeString(generation.generationId, to: &body)
        body += Array(#","count":\#(positions.count),"profile":"#.utf8)
        CompactJSON.write(profile, to: &body)
        body += Array(#","zone":"#.utf8)
        CompactJSON.writeString(zone.name, to: &body)
        body += Array(#","empty":"#.utf8)
        CompactJSON.write(emptyState, to: &body)
        body += Array(#","entries":["#.utf8)
        for (position, hour) in hours.enumerated() {
            // Titles, names and warnings come on top of the items counted above: the answer is
            // refused as soon as it passes the limit, so it never grows past one entry beyond it.
            guard body.count <= limit else {
                throw Problem.timelineTooLarge(bytes: body.count, limit: limit, hours: hours.count)
            }
            if position > 0 { body.append(UInt8(ascii: ",")) }
            body += Array(
                #"{"startEpochMs":\#(hour.startEpochMs),"slot":\#(hour.slot),"zoneOffsetSeconds":\#(hour.zoneOffsetSeconds),"#
                    .utf8)
            if let node = nodes.isEmpty ? nil : nodes[position] {
                writeItem(node, index: indexes[position], to: &body)
            } else {
                body += Array(#""index":null,"pointer":null,"item":null,"title":null,"subtitle":null,"#.utf8)
                body += Array(#""image":null,"warning":null,"empty":"#.utf8)
                CompactJSON.write(items.emptyText.map(JSONValue.string) ?? .null, to: &body)
            }
            body.append(UInt8(ascii: "}"))
        }
        body += Array("]}\n".utf8)
        return body
    }

    /// `{"pointer","text"}` of the profile's empty state, or null when it names none.
    private var emptyState: JSONValue {
        guard let empty = items.profile.empty else { return .null }
        return .object([
            JSONMember("pointer", .string(empty.text)),
            JSONMember("text", items.emptyText.map(JSONValue.string) ?? .null),
        ])
    }

    private func writeItem(_ node: JSONNode, index: Int, to body: inout [UInt8]) {
        let item = items.item(node, index: index)
        body += Array(#""index":\#(index),"pointer":"#.utf8)
        CompactJSON.writeString(item.pointer, to: &body)
        body += Array(#","item":"#.utf8)
        body += node.compactBytes
        let (image, warning) = imageAndWarning(item)
        let members = [
            JSONMember("title", item.title.map(JSONValue.string) ?? .null),
            JSONMember("subtitle", item.subtitle.map(JSONValue.string) ?? .null),
            JSONMember("image", image), JSONMember("warning", warning),
        ]
        for member in members {
            body.append(UInt8(ascii: ","))
            CompactJSON.writeString(member.name, to: &body)
            body.append(UInt8(ascii: ":"))
            CompactJSON.write(member.value, to: &body)
        }
    }

    /// The item's image `{name,url,width,height}`, or null and the warning the lint gives.
    private func imageAndWarning(_ item: WidgetItems.Item) -> (image: JSONValue, warning: JSONValue) {
        switch item.image {
        case .notDescribed:
            return (.null, .null)
        case .url(let url):
            return (.object([JSONMember("name", .null), JSONMember("url", .string(url))]), .null)
        case .unnamed:
            return (.null, warning(item))
        case .asset(let name):
            guard let asset = generation.rendered.assets[name] else { return (.null, warning(item)) }
            let url = FeedRendering.assetURL(
                group: generation.rendered.identity.group, generation: generation.generationId, name: name)
            return (
                .object([
                    JSONMember("name", .string(name)), JSONMember("url", .string(url)),
                    JSONMember("width", asset.width.map { .number(String($0)) } ?? .null),
                    JSONMember("height", asset.height.map { .number(String($0)) } ?? .null),
                ]), .null
            )
        }
    }

    /// The lint's `item-image-missing` warning for the item, as the publish answer gives it.
    private func warning(_ item: WidgetItems.Item) -> JSONValue {
        let warning = LintWarning.itemImageMissing(
            pointer: item.pointer, image: item.image, rule: items.profile.image?.text ?? "",
            assetNames: Array(generation.rendered.assets.keys).sorted())
        return PublishLint.json([warning]).arrayValue?.first ?? .null
    }
}
