/// The writer rules of format v1 for one group, with the durability WidgetBridge leaves out.
///
/// Order of operations (each step durable before the next makes it visible):
/// 1. `generations/<id>.tmp/assets/*` written and fsynced, then the `assets` folder fsynced;
/// 2. `generations/<id>.tmp/feed.json` written and fsynced, then the `.tmp` folder fsynced;
/// 3. rename `<id>.tmp` → `<id>`, then `generations/` fsynced;
/// 4. `current.json.tmp` written and fsynced, renamed over `current.json`, group folder fsynced;
/// 5. retention: retired generations marked, expired ones and stray `.tmp` folders removed.
struct FeedPublisher {
    let fileSystem: any FileSystem
    let root: String
    let layout: GroupLayout
    let configuration: FeedStoreConfiguration
    let clock: any FeedClock
    let schedule: RetentionSchedule
    /// Called with the complete `.tmp` folder just before it is renamed into place (the fault
    /// lab damages or holds generations here; ordinary publishes have none).
    var beforeRename: ((_ temporaryFolder: String) throws -> Void)? = nil

    private var reader: FeedReader {
        FeedReader(fileSystem: fileSystem, layout: layout, maxEnvelopeBytes: configuration.maxEnvelopeBytes)
    }

    /// A prepared publish: everything computed, nothing written yet.
    struct Draft {
        var schemaVersion: Int
        var compactPayload: [UInt8]
        var assets: [AssetInput]
        var storedAssets: [StoredAsset]
        var fingerprint: String
    }

    /// Publishes the draft unless the served feed already has its fingerprint; with a
    /// precondition, only when it holds (checked again under the lock).
    func publish(_ draft: Draft, precondition: WritePrecondition? = nil) throws(PublishError) -> PublishResult {
        // Until the lock file exists, taking the lock would write it: check without the lock
        // first so an unchanged publish writes nothing at all (answering from that snapshot is
        // linearisable). Once it exists, the check under the lock is the only read.
        if fileSystem.status(layout.lockFile) == nil {
            let read = reader.read(schemaVersion: nil)
            let served = read.served
            if let precondition, !precondition.holds(for: served) { throw .preconditionFailed(servedFingerprint: served?.fingerprint) }
            if let served, served.fingerprint == draft.fingerprint, !read.isFallback {
                return .unchanged(generationId: served.id, fingerprint: served.fingerprint)
            }
        }
        return try underGroupLock("publish", { try publishLocked(draft, precondition: precondition) }, prepare: prepareGroupFolders)
    }

    /// Runs `body` holding the group's advisory lock (after `prepare`, which may create the
    /// folder the lock file lives in); file-system failures become `PublishError.storage`.
    func underGroupLock<T>(_ operation: String, _ body: () throws -> T, prepare: () throws -> Void = {}) throws(PublishError) -> T {
        do {
            try prepare()
            let lock = try fileSystem.lockExclusive(layout.lockFile)
            defer { lock.unlock() }
            return try body()
        } catch let error as PublishError {
            throw error
        } catch let error as FileSystemError {
            throw .storage(error)
        } catch {
            throw .storage(FileSystemError(kind: .other, operation: operation, path: layout.directory))
        }
    }

    private func publishLocked(_ draft: Draft, precondition: WritePrecondition?) throws -> PublishResult {
        let before = reader.inspect(schemaVersion: nil)
        if let precondition, !precondition.holds(for: before.read.served) {
            throw PublishError.preconditionFailed(servedFingerprint: before.read.served?.fingerprint)
        }
        // Equal content is `unchanged` only when the pointer's own candidate is what readers get:
        // after a fallback, writing it again heals the pointer (the fault lab relies on this).
        if let served = before.read.served, served.fingerprint == draft.fingerprint, !before.read.isFallback {
            return .unchanged(generationId: served.id, fingerprint: served.fingerprint)
        }
        let sweeping = schedule.claimSweep(of: layout.directory, now: clock.nowEpochMs(), interval: configuration.sweepIntervalMs)
        let listing = sweeping ? try fileSystem.listDirectory(layout.generations) : nil
        let id = newID(for: draft.fingerprint, known: before.pointed + (listing?.map(\.name) ?? []))
        let envelope = Envelope(
            schemaVersion: draft.schemaVersion, generatedAtEpochMs: GenerationID.epochMs(of: id)!,
            fingerprint: draft.fingerprint, compactPayload: draft.compactPayload, assets: draft.storedAssets)
        try writeGeneration(id, envelope: envelope, assets: draft.assets)
        let pointer = Pointer(current: id, previous: keptPrevious(before))
        do {
            try writePointer(pointer)
        } catch {
            try? fileSystem.removeTree(layout.generation(id))
            throw error
        }
        applyRetention(pointer: pointer, retiring: before.pointed, listing: listing)
        return .published(generationId: id, fingerprint: draft.fingerprint, assetBytes: draft.assets.reduce(0) { $0 + $1.bytes.count })
    }

    func prepareGroupFolders() throws {
        if fileSystem.status(layout.generations)?.kind == .directory { return }
        if try fileSystem.ensureDirectory(root) { try syncParent(of: root) }
        if try fileSystem.ensureDirectory(layout.directory) { try fileSystem.syncDirectory(root) }
        if try fileSystem.ensureDirectory(layout.generations) { try fileSystem.syncDirectory(layout.directory) }
    }

    private func syncParent(of path: String) throws {
        let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
        guard let slash = trimmed.lastIndex(of: "/") else { return try fileSystem.syncDirectory(".") }
        try fileSystem.syncDirectory(slash == trimmed.startIndex ? "/" : String(trimmed[..<slash]))
    }

    /// The new id: the clock's milliseconds, but after every generation we know of (the pointer's,
    /// and the whole folder when it was scanned, `.tmp` ones included) so that "name descending"
    /// stays "newest first" even if the clock steps back; bumped past any folder already there.
    func newID(for fingerprint: String, known names: [String]) -> String {
        var epochMs = clock.nowEpochMs()
        if let newest = names.compactMap(GenerationID.epochMs(of:)).max() { epochMs = max(epochMs, newest + 1) }
        while true {
            let id = GenerationID.make(epochMs: epochMs, fingerprint: fingerprint)
            if fileSystem.status(layout.generation(id)) == nil, fileSystem.status(layout.temporaryGeneration(id)) == nil { return id }
            epochMs += 1
        }
    }

    func writeGeneration(_ id: String, envelope: Envelope, assets: [AssetInput]) throws {
        let temporary = layout.temporaryGeneration(id)
        try fileSystem.removeTree(temporary)
        try fileSystem.createDirectory(temporary)
        do {
            if !assets.isEmpty {
                let assetsFolder = temporary + "/assets"
                try fileSystem.createDirectory(assetsFolder)
                for asset in assets {
                    try fileSystem.writeFileDurably(assetsFolder + "/" + asset.name, contents: asset.bytes)
                }
                try fileSystem.syncDirectory(assetsFolder)
            }
            try fileSystem.writeFileDurably(temporary + "/feed.json", contents: envelope.encoded())
            try fileSystem.syncDirectory(temporary)
            try beforeRename?(temporary)
            try fileSystem.rename(temporary, to: layout.generation(id))
        } catch {
            try? fileSystem.removeTree(temporary)
            throw error
        }
        try fileSystem.syncDirectory(layout.generations)
    }

    func writePointer(_ pointer: Pointer) throws {
        try replacePointer(with: pointer.encoded())
    }

    /// Replaces `current.json` with `bytes` atomically: written and flushed beside it, renamed over it.
    func replacePointer(with bytes: [UInt8]) throws {
        let temporary = layout.pointerTemporary
        try fileSystem.removeTree(temporary)
        do {
            try fileSystem.writeFileDurably(temporary, contents: bytes)
            try fileSystem.rename(temporary, to: layout.pointer)
        } catch {
            try? fileSystem.removeTree(temporary)
            throw error
        }
        try fileSystem.syncDirectory(layout.directory)
    }

    /// The readable generations (any schema) the old order offered, newest first, up to
    /// `keepPrevious`: the one served before this publish, then further readable candidates
    /// (the folder is scanned only when the pointer's own candidates do not suffice).
    func keptPrevious(_ before: FeedReader.Inspection) -> [String] {
        guard configuration.keepPrevious > 0, let served = before.read.served else { return [] }
        var kept = [served.id]
        var seen = Set(before.read.skipped.map(\.id) + [served.id])
        func consider(_ ids: [String]) {
            for id in ids where kept.count < configuration.keepPrevious && seen.insert(id).inserted {
                if case .success = reader.load(id, schemaVersion: nil) { kept.append(id) }
            }
        }
        consider(before.pointed)
        if kept.count < configuration.keepPrevious { consider(reader.listedGenerations()) }
        return kept
    }

    /// Marks generations that just left the pointer as retired now; when a sweep is due (a
    /// `listing` was taken), removes stray `.tmp` folders and unreferenced generations retired
    /// longer than the grace period ago. Failures here do not fail the publish (it is already
    /// durable); they are retried by the next sweep.
    private func applyRetention(pointer: Pointer, retiring previousIDs: [String], listing: [DirectoryEntry]?) {
        let referenced: Set<String> = Set([pointer.current] + pointer.previous)
        for id in previousIDs where !referenced.contains(id) && SafeName.isSafe(id) {
            if fileSystem.status(layout.generation(id))?.kind == .directory {
                try? fileSystem.touch(layout.generation(id))
            }
        }
        guard let listing else { return }
        let now = clock.nowEpochMs()
        for entry in listing where entry.isDirectory {
            let path = layout.generations + "/" + entry.name
            if entry.name.hasSuffix(GenerationID.temporarySuffix) {
                try? fileSystem.removeTree(path)
            } else if !referenced.contains(entry.name), mayHaveExpired(entry.name, now: now),
                      let info = fileSystem.status(path), now - info.modificationNanos / 1_000_000 >= configuration.gracePeriodMs {
                try? fileSystem.removeTree(path)
            }
        }
    }

    /// A generation created within the grace period was retired even more recently, so its
    /// folder need not be looked at; this keeps retention from costing one `lstat` per folder.
    private func mayHaveExpired(_ id: String, now: Int64) -> Bool {
        guard let created = GenerationID.epochMs(of: id) else { return true }
        return now - created >= configuration.gracePeriodMs
    }

    /// Clears the group: `generations/` is renamed out of readers' sight in one step, the pointer
    /// removed, both flushed, then the old generations deleted. The group folder and its lock stay.
    func clear(precondition: WritePrecondition?) throws(PublishError) -> Generation? {
        guard fileSystem.status(layout.directory)?.kind == .directory else {
            if let precondition, !precondition.holds(for: nil) { throw .preconditionFailed(servedFingerprint: nil) }
            return nil
        }
        return try underGroupLock("clear") {
            let served = reader.read(schemaVersion: nil).served
            if let precondition, !precondition.holds(for: served) { throw PublishError.preconditionFailed(servedFingerprint: served?.fingerprint) }
            let doomed = layout.directory + "/.deleted-generations-\(clock.nowEpochMs())"
            if fileSystem.status(layout.generations) != nil { try fileSystem.rename(layout.generations, to: doomed) }
            try fileSystem.removeTree(layout.pointer)
            try fileSystem.syncDirectory(layout.directory)
            try fileSystem.removeTree(doomed)
            return served
        }
    }
}
