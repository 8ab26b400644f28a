/// A fault to inject (the fault lab's request, without HTTP).
public struct FaultRequest: Sendable {
    /// Which broken state to write.
    public var kind: FaultKind
    /// `missing-asset`, `truncated-asset`: the asset to break (default: the first one the
    /// payload names, else the first by name).
    public var asset: String?
    /// `slow-publish`: the payload to publish (default: the served generation's).
    public var payload: JSONValue?

    /// Creates a request.
    public init(kind: FaultKind, asset: String? = nil, payload: JSONValue? = nil) {
        self.kind = kind
        self.asset = asset
        self.payload = payload
    }
}

/// What an injection wrote and what readers get now.
public struct FaultOutcome: Sendable {
    /// The fault written.
    public var kind: FaultKind
    /// The generation it wrote or named (nil for `corrupt-pointer`).
    public var generationId: String?
    /// The schema version of the readers below: the group's (the served generation's, or the
    /// one an earlier `wrong-schema` fault was aimed at).
    public var schemaVersion: Int
    /// What a WidgetBridge reader of that schema version gets now (it never looks at asset files).
    public var widgetBridgeRead: FeedRead
    /// What this server's read with that schema version gets now.
    public var serverRead: FeedRead
    /// What exactly was written, in a sentence.
    public var detail: String
}

/// Why a fault could not be injected; nothing was written.
public enum FaultError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The group name is not a safe name.
    case invalidGroupName(String, reason: String)
    /// The group's state does not allow this kind (no served generation to copy, no asset to break, ...).
    case notApplicable(String)
    /// The disk refused a write.
    case storage(FileSystemError)

    /// A readable account.
    public var description: String {
        switch self {
        case .invalidGroupName(let name, let reason): return "group name '\(name)' \(reason)"
        case .notApplicable(let detail): return detail
        case .storage(let error): return "storage failure: \(error)"
        }
    }
}

extension FeedStore {
    /// Writes the broken state of `request.kind` into `group` under the group lock, the way the
    /// real failure leaves it on disk, records it in `fault-lab.json`, and says what readers get.
    ///
    /// For `slow-publish`, `hold` is called (lock held) with what readers get while the complete
    /// `.tmp` folder waits; the rename and the pointer switch follow when it returns, and the
    /// outcome returned is the one after them.
    public func injectFault(
        _ request: FaultRequest, group: String, hold: (FaultOutcome) -> Void = { _ in }
    ) throws(FaultError) -> FaultOutcome {
        if let reason = SafeName.problem(with: group) { throw .invalidGroupName(group, reason: reason) }
        let layout = GroupLayout(root: root, group: group)
        // Taking the lock would create the group: refuse first what cannot apply to a group that has nothing.
        if request.kind.copiesServedGeneration, fileSystem.status(layout.generations)?.kind != .directory {
            throw .notApplicable(
                "\(request.kind.rawValue) copies the served generation, and group '\(group)' has none: publish one "
                    + "first."
            )
        }
        let publisher = FeedPublisher(
            fileSystem: fileSystem, root: root, layout: layout, configuration: configuration,
            clock: clock, schedule: retention)
        let injector = FaultInjector(fileSystem: fileSystem, layout: layout, clock: clock, publisher: publisher)
        let result: Result<FaultOutcome, FaultError>
        do {
            result = try publisher.underGroupLock("inject fault") {
                try publisher.ensureGenerationsFolder()
                do { return .success(try injector.inject(request, hold: hold)) } catch let error as FaultError {
                    return .failure(error)
                }
            }
        } catch {
            if case .storage(let fileError, _) = error { throw .storage(fileError) }
            throw .storage(
                FileSystemError(kind: .other, operation: "inject fault", path: layout.directory).relativized(to: root))
        }
        let outcome = try result.get()
        let generation = outcome.generationId.flatMap {
            try? FeedReader(fileSystem: fileSystem, layout: layout, limits: configuration.envelopeLimits).load(
                $0, schemaVersion: nil
            ).get()
        }
        notifier.feedPublished(
            PublishEvent(
                group: group, generationId: outcome.generationId ?? "", fingerprint: generation?.fingerprint ?? "",
                directory: layout.generation(outcome.generationId ?? "current.json"), fault: request.kind.rawValue))
        return outcome
    }
}

/// Writes one fault's broken state; runs under the group lock (see `FeedStore.injectFault`).
struct FaultInjector {
    let fileSystem: any FileSystem
    let layout: GroupLayout
    let clock: any FeedClock
    var publisher: FeedPublisher

    /// Largest asset file copied into a fault generation.
    static let maxAssetBytes = 1 << 30

    private var reader: FeedReader {
        FeedReader(fileSystem: fileSystem, layout: layout, limits: publisher.configuration.envelopeLimits)
    }

    /// The state the injection starts from.
    private struct Start {
        var before: FeedReader.Inspection
        var record: FaultRecord
        var schemaVersion: Int
        /// The generation a reader of `schemaVersion` gets now (this server's rules): what faults copy.
        var base: Generation?
    }

    func inject(_ request: FaultRequest, hold: (FaultOutcome) -> Void) throws -> FaultOutcome {
        let start = try begin()
        var entry = FaultRecord.Entry(
            kind: request.kind, generationId: nil, readerSchemaVersion: start.schemaVersion,
            injectedAtEpochMs: clock.nowEpochMs(), pointerSHA256: nil)
        let detail: String
        switch request.kind {
        case .danglingPointer: detail = try danglingPointer(start, &entry)
        case .corruptPointer: detail = try corruptPointer(start, &entry)
        case .staleTmp: detail = try staleTemporaryFolder(start, &entry)
        case .slowPublish: detail = try slowPublish(request, start, &entry, hold: hold)
        case .corruptFeed, .wrongSchema, .missingAsset, .truncatedAsset, .tornGeneration:
            detail = try brokenGeneration(request, start, &entry)
        }
        if request.kind != .slowPublish { try note(entry, in: start.record) }
        return outcome(entry, detail: detail + " This is \(request.kind.summary).")
    }

    private func begin() throws -> Start {
        let before = reader.inspect(schemaVersion: nil)
        let record = FaultRecord.load(fileSystem, layout)
        // The group's schema version is the served generation's, unless that generation is an
        // earlier wrong-schema fault: then it is the version that fault was aimed at.
        var version = before.read.served?.schemaVersion ?? 1
        if let served = before.read.served, let earlier = record.entries.last(where: { $0.generationId == served.id }) {
            version = earlier.readerSchemaVersion
        }
        return Start(
            before: before, record: record, schemaVersion: version, base: reader.read(schemaVersion: version).served)
    }

    private func note(_ entry: FaultRecord.Entry, in record: FaultRecord) throws {
        var updated = FaultRecord(entries: record.active(fileSystem, layout))
        updated.entries.append(entry)
        try updated.save(fileSystem, layout)
    }

    private func outcome(_ entry: FaultRecord.Entry, detail: String) -> FaultOutcome {
        var widgetBridge = reader
        widgetBridge.verifiesAssets = false
        return FaultOutcome(
            kind: entry.kind, generationId: entry.generationId, schemaVersion: entry.readerSchemaVersion,
            widgetBridgeRead: widgetBridge.read(schemaVersion: entry.readerSchemaVersion),
            serverRead: reader.read(schemaVersion: entry.readerSchemaVersion), detail: detail)
    }

    // MARK: Generations copied from the served one, then broken

    /// A copy of the base generation (payload and asset files), ready to write.
    private struct Copy {
        var id: String
        var envelope: Envelope
        var assets: [AssetInput]
    }

    private func copy(_ start: Start, kind: FaultKind, schemaVersion: Int, payload: [UInt8]? = nil) throws -> Copy {
        guard let base = start.base else {
            throw FaultError.notApplicable(
                "\(kind.rawValue) copies the served generation, and the group has no readable generation of "
                    + "schemaVersion \(start.schemaVersion): publish one first."
            )
        }
        var assets: [AssetInput] = []
        var stored: [StoredAsset] = []
        for info in base.assets {
            let bytes = try fileSystem.readFile(layout.asset(base.id, info.name), limit: Self.maxAssetBytes)
            assets.append(AssetInput(name: info.name, bytes: bytes, width: info.width, height: info.height))
            stored.append(
                StoredAsset(
                    name: info.name, byteCount: bytes.count, sha256: SHA256Hash.hex(bytes), width: info.width,
                    height: info.height))
        }
        let compact = payload ?? base.compactPayload
        let fingerprint = Fingerprint.compute(
            schemaVersion: schemaVersion, compactPayload: compact, assets: stored.map(\.fingerprintLine))
        let (id, epochMs) = freshID(fingerprint: fingerprint, start)
        let envelope = Envelope(
            schemaVersion: schemaVersion, generatedAtEpochMs: epochMs,
            fingerprint: fingerprint, compactPayload: compact, assets: stored)
        return Copy(id: id, envelope: envelope, assets: assets)
    }

    /// An id after every generation in the folder (`.tmp` ones included), so it is the newest.
    private func freshID(fingerprint: String, _ start: Start) -> (String, Int64) {
        let listed = (try? fileSystem.listDirectory(layout.generations))?.map(\.name) ?? []
        return publisher.newID(for: fingerprint, known: start.before.pointed + listed)
    }

    /// Writes the copy (broken by `damage` in its `.tmp` folder, before the rename) and makes it current.
    private func writeCurrent(_ copy: Copy, _ start: Start, damage: @escaping (String) throws -> Void) throws {
        var writer = publisher
        writer.beforeRename = damage
        try writer.writeGeneration(copy.id, envelope: copy.envelope.encoded(), assets: copy.assets)
        try publisher.writePointer(Pointer(current: copy.id, previous: publisher.keptPrevious(start.before)))
    }

    private func brokenGeneration(
        _ request: FaultRequest, _ start: Start, _ entry: inout FaultRecord.Entry
    ) throws -> String {
        let kind = request.kind
        var schemaVersion = start.schemaVersion
        if kind == .wrongSchema {
            let (next, overflow) = schemaVersion.addingReportingOverflow(1)
            guard !overflow else { throw FaultError.notApplicable("schemaVersion \(schemaVersion) has no successor.") }
            schemaVersion = next
        }
        let copy = try copy(start, kind: kind, schemaVersion: schemaVersion)
        let victim = kind == .missingAsset || kind == .truncatedAsset ? try chooseAsset(request, copy) : nil
        var detail = ""
        try writeCurrent(copy, start) { folder in
            detail = try damage(kind, folder: folder, victim: victim)
        }
        entry.generationId = copy.id
        return "New current generation \(copy.id): \(detail)."
    }

    /// Breaks a complete `.tmp` folder as `kind` says; returns what it did.
    private func damage(_ kind: FaultKind, folder: String, victim: AssetInput?) throws -> String {
        switch kind {
        case .corruptFeed:
            let cut = try cutInHalf(folder + "/feed.json")
            return "feed.json cut at byte \(cut.kept) of \(cut.of)"
        case .missingAsset:
            guard let victim else { return "" }
            try fileSystem.removeTree(folder + "/assets/" + victim.name)
            return "asset \(victim.name) (\(victim.bytes.count) bytes) removed; feed.json still lists it"
        case .truncatedAsset:
            guard let victim else { return "" }
            let cut = try cutInHalf(folder + "/assets/" + victim.name)
            return "asset \(victim.name) cut at byte \(cut.kept) of \(cut.of)"
        case .tornGeneration:
            var emptied = ["feed.json"]
            try replace(folder + "/feed.json", with: [])
            for entry in (try? fileSystem.listDirectory(folder + "/assets")) ?? [] where !entry.isDirectory {
                try replace(folder + "/assets/" + entry.name, with: [])
                emptied.append("assets/" + entry.name)
            }
            return "every file left empty (\(emptied.joined(separator: ", ")))"
        case .wrongSchema:
            return "a complete copy of the served generation written with schemaVersion one above the group's"
        case .danglingPointer, .corruptPointer, .staleTmp, .slowPublish:
            return ""
        }
    }

    private func chooseAsset(_ request: FaultRequest, _ copy: Copy) throws -> AssetInput {
        if let name = request.asset {
            guard let asset = copy.assets.first(where: { $0.name == name }) else {
                throw FaultError.notApplicable(
                    "The served generation has no asset '\(name)' (it has: "
                        + "\(copy.assets.map(\.name).joined(separator: ", ")))."
                )
            }
            guard request.kind != .truncatedAsset || asset.bytes.count > 0 else {
                throw FaultError.notApplicable("Asset '\(name)' is empty, so it cannot be cut short.")
            }
            return asset
        }
        let candidates = copy.assets.filter { request.kind != .truncatedAsset || !$0.bytes.isEmpty }
        guard let first = candidates.first else {
            throw FaultError.notApplicable(
                "\(request.kind.rawValue) breaks an asset file, and the served generation has no "
                    + "asset\(request.kind == .truncatedAsset && !copy.assets.isEmpty ? " with any bytes" : ""): "
                    + "publish one with images first."
            )
        }
        // Prefer an image the payload names, so the widget visibly misses it.
        let named =
            (try? JSONDocument.parse(copy.envelope.compactPayload)).map {
                PayloadReferences(payload: $0.root, assetNames: candidates.map(\.name)).referenced
            } ?? []
        return candidates.first { named.contains($0.name) } ?? first
    }

    private func cutInHalf(_ path: String) throws -> (kept: Int, of: Int) {
        let bytes = try fileSystem.readFile(path, limit: Self.maxAssetBytes)
        let kept = bytes.count / 2
        try replace(path, with: Array(bytes.prefix(kept)))
        return (kept, bytes.count)
    }

    private func replace(_ path: String, with bytes: [UInt8]) throws {
        try fileSystem.removeTree(path)
        try fileSystem.writeFileDurably(path, contents: bytes)
    }

    // MARK: Pointer faults

    private func danglingPointer(_ start: Start, _ entry: inout FaultRecord.Entry) throws -> String {
        let id = freshID(
            fingerprint: SHA256Hash.hex(Array("fault-lab dangling-pointer \(clock.nowEpochMs())".utf8)), start
        ).0
        let pointer = Pointer(current: id, previous: publisher.keptPrevious(start.before))
        try publisher.writePointer(pointer)
        entry.generationId = id
        return "current.json names \(id), which is not on disk"
            + (pointer.previous.isEmpty ? "" : "; previous: \(pointer.previous.joined(separator: ", "))") + "."
    }

    private func corruptPointer(_ start: Start, _ entry: inout FaultRecord.Entry) throws -> String {
        // Cut a well-formed pointer (the one there, else one naming the served generation), so
        // the result is never accidentally valid JSON: half of `{"current":"…` is not.
        let existing = (try? fileSystem.readFile(layout.pointer, limit: 1 << 20)).flatMap(Pointer.decode)
        let whole = (existing ?? Pointer(current: start.before.read.served?.id ?? "none", previous: [])).encoded()
        let cut = Array(whole.prefix(whole.count / 2))
        try publisher.replacePointer(with: cut)
        entry.pointerSHA256 = SHA256Hash.hex(cut)
        return "current.json cut at byte \(cut.count) of \(whole.count)."
    }

    // MARK: .tmp folders

    private func staleTemporaryFolder(_ start: Start, _ entry: inout FaultRecord.Entry) throws -> String {
        let id: String
        var written: [String] = []
        if start.base != nil {
            let copy = try copy(start, kind: .staleTmp, schemaVersion: start.schemaVersion)
            id = copy.id
            let folder = layout.temporaryGeneration(id)
            try fileSystem.createDirectory(folder)
            if !copy.assets.isEmpty {
                try fileSystem.createDirectory(folder + "/assets")
                for asset in copy.assets {
                    try fileSystem.writeFileDurably(folder + "/assets/" + asset.name, contents: asset.bytes)
                    written.append("assets/" + asset.name)
                }
            }
            let envelope = copy.envelope.encoded()
            try fileSystem.writeFileDurably(folder + "/feed.json", contents: Array(envelope.prefix(envelope.count / 2)))
            written.append("feed.json cut at byte \(envelope.count / 2) of \(envelope.count)")
        } else {
            id = freshID(fingerprint: SHA256Hash.hex(Array("fault-lab stale-tmp \(clock.nowEpochMs())".utf8)), start).0
            try fileSystem.createDirectory(layout.temporaryGeneration(id))
        }
        try fileSystem.syncDirectory(layout.generations)
        // So that the next publish that writes removes it, however recently the last one swept.
        publisher.schedule.forget(layout.directory)
        entry.generationId = id
        return "Left generations/\(id)\(GenerationID.temporarySuffix)"
            + (written.isEmpty ? ", empty." : " with \(written.joined(separator: ", ")).")
    }

    private func slowPublish(
        _ request: FaultRequest, _ start: Start, _ entry: inout FaultRecord.Entry, hold: (FaultOutcome) -> Void
    ) throws -> String {
        let copy = try copy(
            start, kind: .slowPublish, schemaVersion: start.schemaVersion,
            payload: request.payload.map(CompactJSON.bytes))
        entry.generationId = copy.id
        let held = entry
        let detail =
            "Generation \(copy.id) written completely as generations/\(copy.id)\(GenerationID.temporarySuffix), "
            + "held there before the rename"
        try withoutActuallyEscaping(hold) { hold in
            try writeCurrent(copy, start) { _ in
                // Noted first, so /generations shows the held folder as the fault lab's.
                try note(held, in: start.record)
                hold(outcome(held, detail: detail + ". This is \(FaultKind.slowPublish.summary)."))
            }
        }
        return detail + ", then renamed and made current."
    }
}
