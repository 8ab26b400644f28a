import ConcurrencyPrimitives

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
    /// What WidgetBridge's Swift reader of that schema version gets now, by its own rules and
    /// JSON decoder (`WidgetBridgeReader`; it never looks at asset files). Its served generation
    /// carries the envelope's members only: no payload, no assets.
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
    /// Another writer kept the group's lock for as long as the fault was allowed to wait.
    case groupLocked(String)
    /// The disk refused a write.
    case storage(FileSystemError)

    /// A readable account.
    public var description: String {
        switch self {
        case .invalidGroupName(let name, let reason): return "group name '\(name)' \(reason)"
        case .notApplicable(let detail): return detail
        case .groupLocked(let group): return "another writer holds the lock of group '\(group)'"
        case .storage(let error): return "storage failure: \(error)"
        }
    }
}

extension FeedStore {
    /// Writes the broken state of `request.kind` into `group` under the group lock, the way the
    /// real failure leaves it on disk, records it in `fault-lab.json`, and says what readers get.
    ///
    /// The lock is waited for at most `lockWaitNanos` (`.groupLocked` past that), so a fault never
    /// waits out another writer's long hold. A `slow-publish` here is held for no time at all:
    /// `beginSlowPublish` holds one.
    public func injectFault(
        _ request: FaultRequest, group: String, lockWaitNanos: Int64
    ) throws(FaultError) -> FaultOutcome {
        if request.kind == .slowPublish {
            return try beginSlowPublish(request, group: group, lockWaitNanos: lockWaitNanos).finish().get()
        }
        let injector = try faultInjector(request, group: group)
        let lock = try faultLock(injector, group: group, lockWaitNanos: lockWaitNanos)
        let outcome: FaultOutcome
        do {
            defer { lock.unlock() }
            outcome = try faultStep(injector) {
                try injector.publisher.ensureGenerationsFolder()
                return try injector.inject(request)
            }
        }
        notifyFault(outcome, group: group, layout: injector.layout)
        return outcome
    }

    /// The injector for `request` in `group`, refusing first what cannot apply.
    func faultInjector(_ request: FaultRequest, group: String) throws(FaultError) -> FaultInjector {
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
        return FaultInjector(fileSystem: fileSystem, layout: layout, clock: clock, publisher: publisher)
    }

    /// The group's lock, waited for at most `lockWaitNanos`.
    func faultLock(_ injector: FaultInjector, group: String, lockWaitNanos: Int64) throws(FaultError) -> any FileLock {
        let longest = Int64(FaultKind.maxHoldSeconds) * 1_000_000_000
        let deadline = MonotonicClock.nanos() + min(max(0, lockWaitNanos), longest)
        let lock: (any FileLock)?
        do { lock = try injector.publisher.groupLock(waitingUntil: deadline) } catch {
            throw faultError(error, injector.layout)
        }
        guard let lock else { throw .groupLocked(group) }
        return lock
    }

    /// Runs one step of an injection (the lock held), with the store's failures as `FaultError`s.
    func faultStep<T>(_ injector: FaultInjector, _ body: () throws -> T) throws(FaultError) -> T {
        let result: Result<T, FaultError>
        do {
            result = try injector.publisher.mappingFailures("inject fault") {
                do { return .success(try body()) } catch let error as FaultError { return .failure(error) }
            }
        } catch {
            throw faultError(error, injector.layout)
        }
        return try result.get()
    }

    private func faultError(_ error: PublishError, _ layout: GroupLayout) -> FaultError {
        if case .storage(let fileError, _) = error { return .storage(fileError) }
        return .storage(
            FileSystemError(kind: .other, operation: "inject fault", path: layout.directory).relativized(to: root))
    }

    /// Wakes whoever waits for the group, as a publish does (`--on-publish` gets the kind, and the
    /// generation the fault wrote or named: its fingerprint when its `feed.json` declares one, its
    /// folder when it exists).
    func notifyFault(_ outcome: FaultOutcome, group: String, layout: GroupLayout) {
        let id = outcome.generationId
        let reader = FeedReader(fileSystem: fileSystem, layout: layout, limits: configuration.envelopeLimits)
        // A stale-tmp fault names the generation whose `.tmp` folder it left: that folder is what it wrote.
        let written = outcome.kind == .staleTmp ? id.map(layout.temporaryGeneration) : id.map(layout.generation)
        let folder = written.flatMap { fileSystem.status($0)?.kind == .directory ? $0 : nil }
        notifier.feedPublished(
            PublishEvent(
                kind: .fault, group: group, groupDirectory: layout.directory, generationId: id,
                fingerprint: id.flatMap(reader.declaredFingerprint), directory: folder, fault: outcome.kind.rawValue))
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
    struct Start {
        var before: FeedReader.Inspection
        var record: FaultRecord
        var schemaVersion: Int
        /// The generation a reader of `schemaVersion` gets now (this server's rules): what faults copy.
        var base: Generation?
    }

    /// Every kind but `slow-publish`, which is held in two halves (`prepareSlowPublish`).
    func inject(_ request: FaultRequest) throws -> FaultOutcome {
        let start = try begin()
        var entry = FaultRecord.Entry(
            kind: request.kind, generationId: nil, readerSchemaVersion: start.schemaVersion,
            injectedAtEpochMs: clock.nowEpochMs(), pointerSHA256: nil)
        let detail: String
        switch request.kind {
        case .danglingPointer: detail = try danglingPointer(start, &entry)
        case .corruptPointer: detail = try corruptPointer(start, &entry)
        case .staleTmp: detail = try staleTemporaryFolder(start, &entry)
        case .slowPublish: throw FaultError.notApplicable("slow-publish is held in two halves: beginSlowPublish.")
        case .corruptFeed, .wrongSchema, .missingAsset, .truncatedAsset, .tornGeneration:
            detail = try brokenGeneration(request, start, &entry)
        }
        try note(entry, in: start.record)
        return outcome(entry, detail: detail + " This is \(request.kind.summary).")
    }

    func begin() throws -> Start {
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

    func note(_ entry: FaultRecord.Entry, in record: FaultRecord) throws {
        var updated = FaultRecord(entries: record.active(fileSystem, layout))
        updated.entries.append(entry)
        try updated.save(fileSystem, layout)
    }

    func outcome(_ entry: FaultRecord.Entry, detail: String) -> FaultOutcome {
        let widgetBridge = WidgetBridgeReader(
            fileSystem: fileSystem, layout: layout, maxBytes: publisher.configuration.envelopeLimits.maxBytes)
        return FaultOutcome(
            kind: entry.kind, generationId: entry.generationId, schemaVersion: entry.readerSchemaVersion,
            widgetBridgeRead: widgetBridge.read(schemaVersion: entry.readerSchemaVersion),
            serverRead: reader.read(schemaVersion: entry.readerSchemaVersion), detail: detail)
    }

    // MARK: Generations copied from the served one, then broken

    /// A copy of the base generation (payload and asset files), ready to write.
    struct Copy {
        var id: String
        var envelope: Envelope
        var assets: [AssetInput]
    }

    func copy(_ start: Start, kind: FaultKind, schemaVersion: Int, payload: [UInt8]? = nil) throws -> Copy {
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
    func freshID(fingerprint: String, _ start: Start) -> (String, Int64) {
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
}
