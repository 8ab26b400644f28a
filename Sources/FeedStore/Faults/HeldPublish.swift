import ConcurrencyPrimitives

/// A `slow-publish` between its two halves: the complete `<id>.tmp` folder is on disk and the
/// group's lock is held (so nothing else of ours writes the group), and `finish()` renames the
/// folder into place and switches the pointer. An object rather than a waiting thread, so that
/// any number of holds cost no thread: whoever times the hold calls `finish()` when it is over.
///
/// `finish()` may be called from any thread, once counts (later calls fail): the lock is handed
/// from the thread that began the publish to the one that finishes it, which `flock` allows (it
/// belongs to the open file, not to a thread). Dropped unfinished, it releases the lock with its
/// descriptor and leaves the `.tmp` folder for the next publish's sweep, as a crash would.
public final class HeldPublish: @unchecked Sendable {
    /// What readers get while the `.tmp` folder is held.
    public let outcome: FaultOutcome
    /// The group held.
    public let group: String
    /// The generation waiting in `generations/<id>.tmp`.
    public let generationId: String
    private let store: FeedStore
    private let injector: FaultInjector
    private let prepared: FaultInjector.SlowPublish
    /// The group's lock until `finish()` takes it.
    private let lock: Lock<(any FileLock)?>

    init(
        store: FeedStore, group: String, injector: FaultInjector, prepared: FaultInjector.SlowPublish,
        lock: any FileLock
    ) {
        self.store = store
        self.group = group
        self.injector = injector
        self.prepared = prepared
        self.lock = Lock(lock)
        outcome = prepared.during
        generationId = prepared.entry.generationId ?? ""
    }

    /// Renames the held folder into place and switches the pointer, releases the lock, and tells
    /// whoever waits for the group; says what readers get then.
    public func finish() -> Result<FaultOutcome, FaultError> {
        let taken = lock.withLock { held -> (any FileLock)? in
            defer { held = nil }
            return held
        }
        guard let taken else { return .failure(.notApplicable("This slow-publish has already finished.")) }
        let result = Result { () throws(FaultError) -> FaultOutcome in
            defer { taken.unlock() }
            return try store.faultStep(injector) {
                try injector.publisher.installGeneration(generationId)
                try injector.publisher.writePointer(prepared.pointer)
                return injector.outcome(prepared.entry, detail: prepared.afterwards)
            }
        }
        if case .success(let after) = result { store.notifyFault(after, group: group, layout: injector.layout) }
        return result
    }
}

extension FeedStore {
    /// Starts a `slow-publish`: under the group's lock (waited for at most `lockWaitNanos`), a
    /// copy of the served generation (or `request.payload`) written completely into its `.tmp`
    /// folder and recorded; the lock stays held by the returned object until its `finish()`.
    public func beginSlowPublish(
        _ request: FaultRequest, group: String, lockWaitNanos: Int64
    ) throws(FaultError) -> HeldPublish {
        var request = request
        request.kind = .slowPublish
        let injector = try faultInjector(request, group: group)
        let lock = try faultLock(injector, group: group, lockWaitNanos: lockWaitNanos)
        do throws(FaultError) {
            let prepared = try faultStep(injector) {
                try injector.publisher.ensureGenerationsFolder()
                return try injector.prepareSlowPublish(request)
            }
            return HeldPublish(store: self, group: group, injector: injector, prepared: prepared, lock: lock)
        } catch {
            lock.unlock()
            throw error
        }
    }
}

// MARK: .tmp folders

extension FaultInjector {
    /// The first half of a `slow-publish`, and what the second needs.
    struct SlowPublish {
        var entry: FaultRecord.Entry
        /// The pointer the rename is followed by.
        var pointer: Pointer
        /// What readers get during the hold.
        var during: FaultOutcome
        /// The detail once the folder is renamed.
        var afterwards: String
    }

    func prepareSlowPublish(_ request: FaultRequest) throws -> SlowPublish {
        let start = try begin()
        let copy = try copy(
            start, kind: .slowPublish, schemaVersion: start.schemaVersion,
            payload: request.payload.map(CompactJSON.bytes))
        let entry = FaultRecord.Entry(
            kind: .slowPublish, generationId: copy.id, readerSchemaVersion: start.schemaVersion,
            injectedAtEpochMs: clock.nowEpochMs(), pointerSHA256: nil)
        try publisher.writeTemporaryGeneration(copy.id, envelope: copy.envelope.encoded(), assets: copy.assets)
        do {
            // Noted before the hold, so /generations shows the held folder as the fault lab's.
            try note(entry, in: start.record)
        } catch {
            try? fileSystem.removeTree(layout.temporaryGeneration(copy.id))
            throw error
        }
        let detail =
            "Generation \(copy.id) written completely as generations/\(copy.id)\(GenerationID.temporarySuffix), "
            + "held there before the rename"
        let summary = " This is \(FaultKind.slowPublish.summary)."
        return SlowPublish(
            entry: entry, pointer: Pointer(current: copy.id, previous: publisher.keptPrevious(start.before)),
            during: outcome(entry, detail: detail + "." + summary),
            afterwards: detail + ", then renamed and made current." + summary)
    }

    func staleTemporaryFolder(_ start: Start, _ entry: inout FaultRecord.Entry) throws -> String {
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
        // So that the next publish removes it, however recently the last one swept.
        publisher.schedule.forget(layout.directory)
        entry.generationId = id
        return "Left generations/\(id)\(GenerationID.temporarySuffix)"
            + (written.isEmpty ? ", empty." : " with \(written.joined(separator: ", ")).")
    }
}
