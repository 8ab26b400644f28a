/// The fault lab's note of what it injected into a group: `<group>/fault-lab.json`.
///
/// It lives in the group folder, beside `publish.lock`: both readers open only `current.json`
/// and `generations/`, so a file they do not know there changes nothing for them (the format
/// says readers ignore such files), while the note travels with the data it describes (another
/// server on the same root, a restart, a group folder copied to a device all still see it). An
/// entry only counts while what it describes is still on disk as it was left, so a publish that
/// heals the group, or a clear, makes it stale without having to know about it.
struct FaultRecord: Equatable {
    /// One injected fault.
    struct Entry: Equatable {
        var kind: FaultKind
        /// The generation it wrote or named (without `.tmp`), nil for `corrupt-pointer`.
        var generationId: String?
        /// The schema version of the reader it was aimed at.
        var readerSchemaVersion: Int
        var injectedAtEpochMs: Int64
        /// `corrupt-pointer`: SHA-256 of the bytes it left in `current.json`.
        var pointerSHA256: String?
    }

    var entries: [Entry] = []

    /// The record's path in a group folder.
    static func path(_ layout: GroupLayout) -> String { layout.directory + "/fault-lab.json" }

    /// The group's record; empty when there is none or it cannot be read (it is only a note).
    static func load(_ fileSystem: any FileSystem, _ layout: GroupLayout) -> FaultRecord {
        guard let bytes = try? fileSystem.readFile(path(layout), limit: 1 << 20),
            let root = try? JSONParser.parse(bytes), let list = root["faults"]?.arrayValue
        else { return FaultRecord() }
        return FaultRecord(entries: list.compactMap(Entry.init(json:)))
    }

    /// Writes the record atomically (beside it, then renamed over it).
    func save(_ fileSystem: any FileSystem, _ layout: GroupLayout) throws {
        let target = Self.path(layout)
        let temporary = target + ".tmp"
        try fileSystem.removeTree(temporary)
        try fileSystem.writeFileDurably(
            temporary,
            contents: CompactJSON.bytes(.object([JSONMember("faults", .array(entries.map(\.json)))])) + [0x0A])
        try fileSystem.rename(temporary, to: target)
        try fileSystem.syncDirectory(layout.directory)
    }

    /// The entries whose fault is still on disk as it was left.
    func active(_ fileSystem: any FileSystem, _ layout: GroupLayout) -> [Entry] {
        let pointerBytes = try? fileSystem.readFile(layout.pointer, limit: 1 << 20)
        let pointer = pointerBytes.flatMap(Pointer.decode)
        return entries.filter { entry in
            switch entry.kind {
            case .corruptPointer:
                return pointerBytes.map { SHA256Hash.hex($0) } == entry.pointerSHA256
            case .danglingPointer:
                guard let id = entry.generationId else { return false }
                return pointer?.current == id && fileSystem.status(layout.generation(id)) == nil
            case .staleTmp, .slowPublish:
                return entry.generationId.map { fileSystem.status(layout.temporaryGeneration($0)) != nil } ?? false
            case .corruptFeed, .wrongSchema, .missingAsset, .truncatedAsset, .tornGeneration:
                return entry.generationId.map { fileSystem.status(layout.generation($0)) != nil } ?? false
            }
        }
    }
}

extension FaultRecord.Entry {
    init?(json: JSONValue) {
        guard let kind = json["kind"]?.stringValue.flatMap(FaultKind.init(rawValue:)),
            let version = json["readerSchemaVersion"]?.integerValue, let readerSchemaVersion = Int(exactly: version),
            let injectedAt = json["injectedAtEpochMs"]?.integerValue
        else { return nil }
        self.init(
            kind: kind, generationId: json["generationId"]?.stringValue, readerSchemaVersion: readerSchemaVersion,
            injectedAtEpochMs: injectedAt, pointerSHA256: json["pointerSHA256"]?.stringValue)
    }

    var json: JSONValue {
        var members = [JSONMember("kind", .string(kind.rawValue))]
        if let generationId { members.append(JSONMember("generationId", .string(generationId))) }
        members.append(JSONMember("readerSchemaVersion", .number(String(readerSchemaVersion))))
        members.append(JSONMember("injectedAtEpochMs", .number(String(injectedAtEpochMs))))
        if let pointerSHA256 { members.append(JSONMember("pointerSHA256", .string(pointerSHA256))) }
        return .object(members)
    }
}

/// An injected fault that is still on disk, with what each kind of reader does about it.
public struct InjectedFault: Equatable, Sendable {
    /// Which fault.
    public var kind: FaultKind
    /// The generation it wrote or named, nil for `corrupt-pointer`.
    public var generationId: String?
    /// Its row in a generation listing (`<id>`, `<id>.tmp`, or the missing id a dangling pointer
    /// names), nil for `corrupt-pointer`.
    public var folder: String?
    /// When it was injected.
    public var injectedAtEpochMs: Int64
    /// The schema version of the reader it was aimed at.
    public var readerSchemaVersion: Int
    /// What WidgetBridge's readers do with it, and why.
    public var widgetBridge: String
    /// What this server's reads do with it, and why (they differ for asset faults).
    public var server: String
}

extension FeedStore {
    /// The fault-lab faults still on disk in a group, oldest first (empty when none).
    public func injectedFaults(group: String) -> [InjectedFault] {
        guard SafeName.isSafe(group) else { return [] }
        let layout = GroupLayout(root: root, group: group)
        return FaultRecord.load(fileSystem, layout).active(fileSystem, layout).map { describe($0, layout) }
    }

    private func describe(_ entry: FaultRecord.Entry, _ layout: GroupLayout) -> InjectedFault {
        let id = entry.generationId
        var fault = InjectedFault(
            kind: entry.kind, generationId: id, folder: nil, injectedAtEpochMs: entry.injectedAtEpochMs,
            readerSchemaVersion: entry.readerSchemaVersion, widgetBridge: "", server: "")
        switch entry.kind {
        case .corruptPointer:
            let verdict =
                "current.json is not a usable pointer, so readers go on with the folder listing (newest folder first)"
            (fault.widgetBridge, fault.server) = (verdict, verdict)
        case .danglingPointer:
            fault.folder = id
            let verdict =
                "current.json names \(id ?? "?"), which is not on disk: readers skip it and try the previous ids, "
                + "then the folder listing"
            (fault.widgetBridge, fault.server) = (verdict, verdict)
        case .staleTmp, .slowPublish:
            fault.folder = id.map { $0 + GenerationID.temporarySuffix }
            let verdict = "a .tmp folder: readers never look at it"
            (fault.widgetBridge, fault.server) = (verdict, verdict)
        case .corruptFeed, .wrongSchema, .missingAsset, .truncatedAsset, .tornGeneration:
            fault.folder = id
            guard let id else { break }
            fault.widgetBridge = verdict(id, layout, schemaVersion: entry.readerSchemaVersion, widgetBridgeRules: true)
            fault.server = verdict(id, layout, schemaVersion: entry.readerSchemaVersion, widgetBridgeRules: false)
        }
        return fault
    }

    /// "skips it: <reason>" or "reads it" (with the asset caveat for WidgetBridge's readers).
    private func verdict(_ id: String, _ layout: GroupLayout, schemaVersion: Int, widgetBridgeRules: Bool) -> String {
        let server = FeedReader(fileSystem: fileSystem, layout: layout, limits: configuration.envelopeLimits)
        let read: Result<Generation, SkipReason>
        if widgetBridgeRules {
            let limit = configuration.envelopeLimits.maxBytes
            read = WidgetBridgeReader(fileSystem: fileSystem, layout: layout, maxBytes: limit).load(
                id, schemaVersion: schemaVersion)
        } else {
            read = server.load(id, schemaVersion: schemaVersion)
        }
        switch read {
        case .failure(let reason):
            return "skips it (\(reason.code)): \(reason.description)"
        case .success:
            guard widgetBridgeRules, case .failure(let reason) = server.load(id, schemaVersion: schemaVersion),
                case .incompleteAsset = reason
            else {
                return "reads it: nothing about it breaks the reader rules"
            }
            return
                "reads it: WidgetBridge's readers never look at asset files, so the widget gets this generation and "
                + "finds no usable file (\(reason.description))"
        }
    }
}
