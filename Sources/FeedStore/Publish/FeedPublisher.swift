import ConcurrencyPrimitives

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    /// Called with the id of the generation readers get while they still get it: under the lock
    /// just before the pointer moves away from it, or as an `unchanged` publish answers.
    var whileServed: ((_ servedID: String?) -> Void)? = nil
    /// The served generation as last seen, so a publish reads it from disk only when it changed.
    var servedMemo: ServedMemo? = nil
    /// The groups whose lock file this process has opened (nil: looked for every time).
    var knownLockFiles: KnownLockFiles? = nil

    var reader: FeedReader {
        FeedReader(fileSystem: fileSystem, layout: layout, limits: configuration.envelopeLimits)
    }

    /// A prepared publish: everything computed, nothing written yet.
    struct Draft {
        var schemaVersion: Int
        /// The payload parsed; its bytes are what `feed.json` holds.
        var payload: JSONDocument
        var assets: [AssetInput]
        var storedAssets: [StoredAsset]
        var fingerprint: String
    }

    /// Publishes the draft unless the served feed already has its fingerprint; with a
    /// precondition, only when it holds (checked again under the lock).
    func publish(_ draft: Draft, precondition: WritePrecondition? = nil) throws(PublishError) -> PublishResult {
        // Until the lock file exists, taking the lock would write it: check without the lock
        // first so an unchanged publish writes nothing at all (answering from that snapshot is
        // linearisable). Once it exists, the check under the lock is the only read; once this
        // process has opened it, it is not looked for again.
        if knownLockFiles?.contains(layout.directory) != true, fileSystem.status(layout.lockFile) == nil {
            let read = reader.read(schemaVersion: nil)
            let served = read.served
            if let precondition, !precondition.holds(for: served) {
                throw .preconditionFailed(servedFingerprint: served?.fingerprint)
            }
            if let served, served.fingerprint == draft.fingerprint, !read.isFallback {
                whileServed?(served.id)
                return .unchanged(generationId: served.id, fingerprint: served.fingerprint)
            }
        }
        return try underGroupLock("publish") { try publishLocked(draft, precondition: precondition) }
    }

    /// Runs `body` holding the group's advisory lock, creating the group folder the lock file
    /// lives in first, waiting `lockWaitMs` at most for another writer (`groupLocked` after it).
    /// File-system failures become `PublishError.storage` with root-relative paths.
    func underGroupLock<T>(_ operation: String, _ body: () throws -> T) throws(PublishError) -> T {
        let wait = configuration.lockWaitMs
        guard let lock = try groupLock(waitingUntil: MonotonicClock.nanos() &+ wait &* 1_000_000) else {
            throw .groupLocked(waitedMs: wait)
        }
        defer { lock.unlock() }
        return try mappingFailures(operation) { try body() }
    }

    /// The group's advisory lock if it can be had before `deadline` (monotonic nanoseconds), nil
    /// when another holder keeps it that long. `flock` has no timed wait, so this polls.
    func groupLock(waitingUntil deadline: Int64) throws(PublishError) -> (any FileLock)? {
        try mappingFailures("lock") {
            // Looked at every time, not only when the lock's open fails: a symbolic link in the
            // folder's place would let that open write the lock file, and all after it, elsewhere.
            try prepareGroupFolder()
            // Short sleeps first: an ordinary writer holds the lock for milliseconds.
            var pause: useconds_t = 500
            while true {
                if let lock = try fileSystem.tryLockExclusive(layout.lockFile) {
                    knownLockFiles?.insert(layout.directory)
                    return lock
                }
                if MonotonicClock.nanos() >= deadline { return nil }
                usleep(pause)
                pause = min(pause * 2, 10_000)
            }
        }
    }

    /// Runs `body`, turning file-system failures into `PublishError.storage` with root-relative
    /// paths (and whether the write had already become visible).
    func mappingFailures<T>(_ operation: String, _ body: () throws -> T) throws(PublishError) -> T {
        do {
            return try body()
        } catch let error as PublishError {
            throw error
        } catch let error as FileSystemError {
            throw .storage(error.relativized(to: root), outcome: .unchanged)
        } catch let error as VisibleNotDurable {
            throw .storage(error.underlying.relativized(to: root), outcome: .visibleNotDurable)
        } catch {
            throw .storage(
                FileSystemError(kind: .other, operation: operation, path: layout.directory).relativized(to: root),
                outcome: .unchanged)
        }
    }

    /// A failure after the rename that made a write visible: what follows cannot be undone.
    struct VisibleNotDurable: Error {
        let underlying: FileSystemError
    }

    private func publishLocked(_ draft: Draft, precondition: WritePrecondition?) throws -> PublishResult {
        let before = servedMemo?.inspect(with: reader) ?? reader.inspect(schemaVersion: nil)
        if let precondition, !precondition.holds(for: before.read.served) {
            throw PublishError.preconditionFailed(servedFingerprint: before.read.served?.fingerprint)
        }
        // Equal content is `unchanged` only when the pointer's own candidate is what readers get:
        // after a fallback, writing it again heals the pointer (the fault lab relies on this).
        if let served = before.read.served, served.fingerprint == draft.fingerprint, !before.read.isFallback {
            whileServed?(served.id)
            sweepUnchanged(before)
            return .unchanged(generationId: served.id, fingerprint: served.fingerprint)
        }
        // Under the lock: a DELETE may have renamed `generations/` away since the last publish.
        try ensureGenerationsFolder()
        let listing = claimSweep() ? try fileSystem.listDirectory(layout.generations) : nil
        let (id, epochMs) = newID(for: draft.fingerprint, known: before.pointed + (listing?.map(\.name) ?? []))
        let envelope = Envelope(
            schemaVersion: draft.schemaVersion, generatedAtEpochMs: epochMs,
            fingerprint: draft.fingerprint, compactPayload: draft.payload.bytes, assets: draft.storedAssets)
        let encoded = envelope.encoded()
        // One limit for writing and reading: never acknowledge a feed.json the reader would refuse.
        guard encoded.count <= configuration.maxFeedBytes else {
            throw PublishError.feedTooLarge(bytes: encoded.count, limit: configuration.maxFeedBytes)
        }
        try writeGeneration(id, envelope: encoded, assets: draft.assets)
        let pointer = Pointer(current: id, previous: keptPrevious(before))
        whileServed?(before.read.served?.id)
        do {
            try writePointer(pointer)
        } catch let error as FileSystemError {
            // The pointer never switched: the new folder is unreferenced and can go now.
            removeOutOfSight(id)
            throw error
        }
        rememberServed(envelope, document: draft.payload, id: id, pointer: pointer)
        applyRetention(pointer: pointer, retiring: before.pointed, listing: listing)
        if listing != nil { sweepDeletedGenerations() }
        return .published(
            generationId: id, fingerprint: draft.fingerprint, assetBytes: draft.assets.reduce(0) { $0 + $1.byteCount }
        )
    }

    /// Keeps what readers get now, the generation just written, as a read of it would find it:
    /// the next publish's dedupe check and lint then read nothing of it from disk.
    private func rememberServed(_ envelope: Envelope, document: JSONDocument, id: String, pointer: Pointer) {
        guard let servedMemo else { return }
        let generation = Generation(
            id: id, schemaVersion: envelope.schemaVersion, generatedAtEpochMs: envelope.generatedAtEpochMs,
            fingerprint: envelope.fingerprint, compactPayload: envelope.compactPayload,
            assets: AssetInfo.sortedByName((envelope.assets ?? []).map(AssetInfo.init(stored:))))
        let inspection = FeedReader.Inspection(
            read: FeedRead(served: generation, skipped: [], pointerProblem: nil),
            pointed: [pointer.current] + pointer.previous)
        servedMemo.remember(
            inspection, document: document, of: layout, pointerStatus: fileSystem.status(layout.pointer),
            fileSystem: fileSystem)
    }

    /// Whether a retention sweep is due now (at most one per group per `sweepIntervalMs`); claims it.
    private func claimSweep() -> Bool {
        schedule.claimSweep(of: layout.directory, now: clock.nowEpochMs(), interval: configuration.sweepIntervalMs)
    }

    /// Writer rule 3 asks every publish to remove stray `.tmp` folders, so a publish that writes
    /// nothing still runs a due sweep (under the lock, so none of them is a write of ours in
    /// progress); the pointer is unchanged, so it retires nothing. Failures are left to the next.
    private func sweepUnchanged(_ before: FeedReader.Inspection) {
        guard let current = before.pointed.first, claimSweep(),
            let listing = try? fileSystem.listDirectory(layout.generations)
        else { return }
        applyRetention(
            pointer: Pointer(current: current, previous: Array(before.pointed.dropFirst())), retiring: [],
            listing: listing)
        sweepDeletedGenerations()
    }

    /// The root and the group folder (each flushed into its parent when created), so the lock
    /// file can be created.
    private func prepareGroupFolder() throws {
        if fileSystem.status(layout.directory)?.kind == .directory { return }
        if try fileSystem.ensureDirectory(root) { try syncParent(of: root) }
        if try fileSystem.ensureDirectory(layout.directory) { try fileSystem.syncDirectory(root) }
    }

    /// `generations/`, flushed into the group folder when created; called holding the lock.
    func ensureGenerationsFolder() throws {
        if try fileSystem.ensureDirectory(layout.generations) { try fileSystem.syncDirectory(layout.directory) }
    }

    private func syncParent(of path: String) throws {
        let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
        guard let slash = trimmed.lastIndex(of: "/") else { return try fileSystem.syncDirectory(".") }
        try fileSystem.syncDirectory(slash == trimmed.startIndex ? "/" : String(trimmed[..<slash]))
    }

    /// The new id and its epoch milliseconds: the clock's, but after every generation we know of
    /// (the pointer's, and the whole folder when it was scanned, `.tmp` ones included) so that
    /// "name descending" stays "newest first" even if the clock steps back; bumped past any folder
    /// already there. Ids on disk may be anything: no step can overflow.
    func newID(for fingerprint: String, known names: [String]) -> (String, Int64) {
        var epochMs = clock.nowEpochMs()
        if let newest = names.compactMap(GenerationID.epochMs(of:)).max() {
            let (next, overflow) = newest.addingReportingOverflow(1)
            if !overflow { epochMs = max(epochMs, next) }
        }
        while true {
            let id = GenerationID.make(epochMs: epochMs, fingerprint: fingerprint)
            // A `<id>.tmp` folder there is a crash's leftover, never a write in progress (the lock is
            // held): `writeTemporaryGeneration` replaces it.
            if fileSystem.status(layout.generation(id)) == nil { return (id, epochMs) }
            let (next, overflow) = epochMs.addingReportingOverflow(1)
            // Past Int64.max (ids on disk at the very end of time): wrap to the clock, which is
            // far below; an id there is as valid, and the pointer, not the name, says what is current.
            epochMs = overflow ? clock.nowEpochMs() &+ Int64(names.count) : next
        }
    }

    func writeGeneration(_ id: String, envelope: [UInt8], assets: [AssetInput]) throws {
        try writeTemporaryGeneration(id, envelope: envelope, assets: assets)
        try installGeneration(id)
    }

    /// Steps 1 and 2: the complete `<id>.tmp` folder, flushed (removed again on failure).
    func writeTemporaryGeneration(_ id: String, envelope: [UInt8], assets: [AssetInput]) throws {
        let temporary = layout.temporaryGeneration(id)
        try replacingLeftover(temporary) { try fileSystem.createDirectory(temporary) }
        do {
            if !assets.isEmpty {
                let assetsFolder = temporary + "/assets"
                try fileSystem.createDirectory(assetsFolder)
                for asset in assets {
                    let path = assetsFolder + "/" + asset.name
                    if let file = asset.file {
                        try fileSystem.copyFileDurably(from: file.path, byteCount: file.byteCount, to: path)
                    } else {
                        try fileSystem.writeFileDurably(path, contents: asset.bytes)
                    }
                }
                try fileSystem.syncDirectory(assetsFolder)
            }
            try fileSystem.writeFileDurably(temporary + "/feed.json", contents: envelope)
            try fileSystem.syncDirectory(temporary)
            try beforeRename?(temporary)
        } catch {
            try? fileSystem.removeTree(temporary)
            throw error
        }
    }

    /// Runs `create` (which makes `path` exclusively); when a crash left something there, removes
    /// it and runs `create` once more. Called holding the lock, so it is nobody's write in progress.
    private func replacingLeftover(_ path: String, _ create: () throws -> Void) throws {
        do {
            try create()
        } catch let error as FileSystemError where error.kind == .alreadyExists {
            try fileSystem.removeTree(path)
            try create()
        }
    }

    /// Step 3: `<id>.tmp` renamed to `<id>`, `generations/` flushed (the `.tmp` removed if the rename fails).
    func installGeneration(_ id: String) throws {
        let temporary = layout.temporaryGeneration(id)
        do {
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
        do {
            try replacingLeftover(temporary) { try fileSystem.writeFileDurably(temporary, contents: bytes) }
            try fileSystem.rename(temporary, to: layout.pointer)
        } catch {
            try? fileSystem.removeTree(temporary)
            throw error
        }
        do {
            try fileSystem.syncDirectory(layout.directory)
        } catch let error as FileSystemError {
            throw VisibleNotDurable(underlying: error)
        }
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
        // A generation already gone is not there to touch, and the touch fails harmlessly.
        for id in previousIDs where !referenced.contains(id) && SafeName.isSafe(id) {
            try? fileSystem.touch(layout.generation(id))
        }
        guard let listing else { return }
        let now = clock.nowEpochMs()
        for entry in listing where entry.isDirectory {
            let path = layout.generations + "/" + entry.name
            if entry.name.hasSuffix(GenerationID.temporarySuffix) {
                try? fileSystem.removeTree(path)
            } else if !referenced.contains(entry.name), mayHaveExpired(entry.name, now: now),
                let info = fileSystem.status(path),
                now - info.modificationNanos / 1_000_000 >= configuration.gracePeriodMs
            {
                removeOutOfSight(entry.name)
            }
        }
    }

    /// Removes a generation folder so that no reader ever sees it half-deleted: it is first
    /// renamed to a `.tmp` name (readers ignore those; one step), then deleted file by file. A
    /// crash in between leaves a `.tmp` folder, which the next sweep removes.
    private func removeOutOfSight(_ id: String) {
        let doomed = layout.generation(id) + ".removed" + GenerationID.temporarySuffix
        guard (try? fileSystem.rename(layout.generation(id), to: doomed)) != nil else { return }
        try? fileSystem.removeTree(doomed)
    }

    /// A generation created within the grace period was retired even more recently, so its
    /// folder need not be looked at; this keeps retention from costing one `lstat` per folder.
    private func mayHaveExpired(_ id: String, now: Int64) -> Bool {
        guard let created = GenerationID.epochMs(of: id) else { return true }
        return now - created >= configuration.gracePeriodMs
    }
}
