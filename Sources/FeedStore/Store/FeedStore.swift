import ConcurrencyPrimitives
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A WidgetBridge-compatible feed store: one folder per group under `root`, format v1.
///
/// Thread-safe; publishers of one group are serialised across threads and processes by an
/// advisory lock in the group folder. Readers never block and never throw.
public final class FeedStore: Sendable {
    /// The folder holding one sub-folder per group.
    public let root: String
    /// Retention and limits.
    public let configuration: FeedStoreConfiguration
    let fileSystem: any FileSystem
    /// Changing calls this store made through `fileSystem`.
    let writes = WriteCounter()
    let clock: any FeedClock
    let notifier: any PublishNotifier
    /// What reads learned of each generation's `feed.json` (schema version, or why it is skipped).
    let envelopeMemo = EnvelopeMemo(capacity: 4096)
    let retention = RetentionSchedule()
    /// The groups whose lock file this process has opened (see `KnownLockFiles`).
    let knownLockFiles = KnownLockFiles()
    /// What a plain read of each group served last, while its files are unchanged.
    let servedMemo = ServedMemo()
    /// Each group's profile while `profile.json` is unchanged (at most 256 of 16 KiB each).
    let profileMemo = StatusMemo<WidgetProfile>(capacity: 256)

    /// Creates a store over `root`; nothing is written until the first publish.
    public init(
        root: String, configuration: FeedStoreConfiguration = FeedStoreConfiguration(),
        fileSystem: any FileSystem = PosixFileSystem(), clock: any FeedClock = SystemClock(),
        notifier: any PublishNotifier = SilentNotifier()
    ) {
        self.root = root
        self.configuration = configuration
        self.fileSystem = WriteCountingFileSystem(base: fileSystem, writes: writes)
        self.clock = clock
        self.notifier = notifier
    }

    // MARK: Publish

    /// Publishes raw JSON payload bytes with assets; `unchanged` (nothing written) when the
    /// served feed already has the resulting fingerprint.
    public func publish(
        group: String, payloadJSON: [UInt8], schemaVersion: Int = 1, assets: [AssetInput] = [],
        precondition: WritePrecondition? = nil
    ) throws(PublishError) -> PublishResult {
        let layout = try validatedLayout(group)
        try validate(assets)
        let payload = try parsePayload(payloadJSON)
        return try publish(layout, payload.document, schemaVersion, assets, precondition)
    }

    /// Publishes a payload parsed by `parsePayload` (the caller linted it already: parsed once; one
    /// parsed by a store with other limits is parsed again by this one's). `whileServed` gets the
    /// id of the generation being replaced (nil: none) under the group's lock, just before the
    /// pointer moves, or that of the served one as an `unchanged` publish answers: what it reads
    /// of the group then is still that feed.
    public func publish(
        group: String, payload: ParsedPayload, schemaVersion: Int = 1, assets: [AssetInput] = [],
        precondition: WritePrecondition? = nil, whileServed: ((_ servedID: String?) -> Void)? = nil
    ) throws(PublishError) -> PublishResult {
        let layout = try validatedLayout(group)
        try validate(assets)
        let checked = payload.limits == configuration.payloadLimits ? payload : try parsePayload(payload.document.bytes)
        return try publish(layout, checked.document, schemaVersion, assets, precondition, whileServed: whileServed)
    }

    /// `payloadJSON` parsed by this store's rules (`configuration.payloadLimits`), in canonical form.
    public func parsePayload(_ payloadJSON: [UInt8]) throws(PublishError) -> ParsedPayload {
        do {
            let limits = configuration.payloadLimits
            return ParsedPayload(document: try JSONDocument.parse(payloadJSON, limits: limits), limits: limits)
        } catch { throw .invalidPayload(error) }
    }

    private func publish(
        _ layout: GroupLayout, _ payload: JSONDocument, _ schemaVersion: Int, _ assets: [AssetInput],
        _ precondition: WritePrecondition?, whileServed: ((_ servedID: String?) -> Void)? = nil
    ) throws(PublishError) -> PublishResult {
        let stored = assets.map {
            StoredAsset(
                name: $0.name, byteCount: $0.byteCount, sha256: $0.sha256, width: $0.width,
                height: $0.height)
        }
        let draft = FeedPublisher.Draft(
            schemaVersion: schemaVersion, payload: payload, assets: assets, storedAssets: stored,
            fingerprint: Fingerprint.compute(
                schemaVersion: schemaVersion, compactPayload: payload.bytes, assets: stored.map(\.fingerprintLine)))
        var publisher = FeedPublisher(
            fileSystem: fileSystem, root: root, layout: layout, configuration: configuration,
            clock: clock, schedule: retention)
        publisher.servedMemo = servedMemo
        publisher.knownLockFiles = knownLockFiles
        publisher.whileServed = whileServed
        let result = try publisher.publish(draft, precondition: precondition)
        if case .published(let id, let fingerprint, _) = result {
            notifier.feedPublished(
                PublishEvent(
                    kind: .publish, group: layout.group, groupDirectory: layout.directory, generationId: id,
                    fingerprint: fingerprint, directory: layout.generation(id)))
        }
        return result
    }

    /// Publishes an `Encodable` payload (encoded with sorted keys, so the same value always fingerprints the same).
    public func publish<Payload: Encodable>(
        group: String, payload: Payload, schemaVersion: Int = 1, assets: [AssetInput] = []
    ) throws(PublishError) -> PublishResult {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data: Data
        do { data = try encoder.encode(payload) } catch { throw .unencodablePayload("\(error)") }
        return try publish(group: group, payloadJSON: Array(data), schemaVersion: schemaVersion, assets: assets)
    }

    private func validatedLayout(_ group: String) throws(PublishError) -> GroupLayout {
        if let reason = SafeName.groupProblem(with: group) { throw .invalidGroupName(group, reason: reason) }
        return GroupLayout(root: root, group: group)
    }

    private func validate(_ assets: [AssetInput]) throws(PublishError) {
        var names = Set<String>()
        for asset in assets {
            if let reason = SafeName.problem(with: asset.name) { throw .invalidAssetName(asset.name, reason: reason) }
            guard names.insert(asset.name).inserted else { throw .duplicateAssetName(asset.name) }
        }
    }

    /// Removes every generation and the pointer of a group (readers then find no feed), when
    /// the precondition holds; returns what was served before (nil: there was no feed).
    @discardableResult
    public func clear(group: String, precondition: WritePrecondition? = nil) throws(PublishError) -> Generation? {
        let layout = try validatedLayout(group)
        let publisher = FeedPublisher(
            fileSystem: fileSystem, root: root, layout: layout, configuration: configuration,
            clock: clock, schedule: retention)
        let removed = try publisher.clear(precondition: precondition)
        if removed != nil {
            notifier.feedPublished(PublishEvent(kind: .delete, group: group, groupDirectory: layout.directory))
        }
        return removed
    }

    /// Removes what interrupted writes left in every group (folders of a DELETE that a crash cut
    /// short; each group under its lock) and deleted generations past the grace period. Called at
    /// start-up; publishes and DELETEs also sweep.
    public func sweepLeftovers() {
        for group in groups() {
            let publisher = FeedPublisher(
                fileSystem: fileSystem, root: root, layout: GroupLayout(root: root, group: group),
                configuration: configuration, clock: clock, schedule: retention)
            try? publisher.sweepLeftovers()
        }
        deletedGenerations.sweepAll(now: clock.nowEpochMs())
    }

    // MARK: Read

    /// Applies the reader rules to a group; `schemaVersion` nil serves the newest readable generation of any schema.
    public func read(group: String, schemaVersion: Int? = nil) -> FeedRead {
        guard SafeName.isGroupName(group) else { return FeedRead(served: nil, skipped: [], pointerProblem: nil) }
        return reader(for: group).read(schemaVersion: schemaVersion)
    }

    /// Reads a group and decodes its payload as `Payload`; nil when no generation is readable or decoding fails.
    public func read<Payload: Decodable & Sendable>(
        _ type: Payload.Type, group: String, schemaVersion: Int
    ) -> TypedFeed<Payload>? {
        guard let generation = read(group: group, schemaVersion: schemaVersion).served,
            let payload = try? JSONDecoder().decode(Payload.self, from: Data(generation.compactPayload))
        else { return nil }
        return TypedFeed(generation: generation, payload: payload)
    }

    /// The generation a plain read of `group` serves (any schema) and its payload as a document,
    /// from memory while the files they came from are unchanged: what a publish compares itself
    /// with, without reading and parsing it again. Nil when there is none (or its payload is not JSON).
    public func servedPayload(group: String) -> (generation: Generation, document: JSONDocument)? {
        guard SafeName.isGroupName(group) else { return nil }
        let (inspection, kept) = servedMemo.inspectKeeping(with: reader(for: group))
        guard let served = inspection.read.served,
            let document = kept ?? (try? JSONDocument(canonical: served.compactPayload))
        else { return nil }
        return (served, document)
    }

    /// A read plus the token that tells, by one `lstat` of `current.json`, whether it is still
    /// what a reader would get.
    public func snapshot(group: String, schemaVersion: Int? = nil) -> FeedSnapshot {
        // Before anything is looked at: the pointer is trusted from the moment it was stat'ed, not
        // from when the (possibly long) read of the generation ended.
        let writesSeen = writes.value
        let probedAt = MonotonicClock.nanos()
        guard SafeName.isGroupName(group) else {
            return FeedSnapshot(
                read: FeedRead(served: nil, skipped: [], pointerProblem: nil),
                token: ChangeToken(
                    probes: [], occasionalProbes: [], assetProbes: [], lastCheck: clock.nowEpochMs(),
                    writesSeen: writesSeen, probedAtNanos: probedAt))
        }
        let layout = GroupLayout(root: root, group: group)
        var probes = [probe(layout.pointer)]
        // With no pointer, readers list generations/: a new folder there changes its status.
        if probes[0].status == nil { probes.append(probe(layout.generations)) }
        let read = reader(for: group).read(schemaVersion: schemaVersion)
        // The served generation's feed.json, and those of the candidates skipped before it: one
        // repaired in place (its feed.json put back or rewritten) changes the read as much.
        let occasional =
            (read.served.map { [probe(layout.envelope($0.id))] } ?? [])
            + read.skipped.filter { SafeName.isSafe($0.id) }.prefix(Self.skippedProbes).map {
                probe(layout.envelope($0.id))
            }
        let assets =
            read.served.map { generation in generation.assets.map { probe(layout.asset(generation.id, $0.name)) } }
            ?? []
        return FeedSnapshot(
            read: read,
            token: ChangeToken(
                probes: probes, occasionalProbes: occasional, assetProbes: assets,
                lastCheck: clock.nowEpochMs(), writesSeen: writesSeen, probedAtNanos: probedAt))
    }

    /// The default `FeedStoreConfiguration.probeIntervalNanos`: a write by another process
    /// (WidgetBridge in a simulator, a second server on the root) is seen by reads that start a
    /// millisecond after it. One `lstat` per request would be about 0.8 µs of a cached read's
    /// ~9 µs (docs/benchmarks.md).
    public static let defaultProbeIntervalNanos: Int64 = 1_000_000
    /// The most skipped candidates whose `feed.json` a read's token re-checks.
    static let skippedProbes = 8
    /// How often `isCurrent` also re-checks the served generation's own `feed.json` (and those
    /// of the candidates skipped before it).
    public static let occasionalProbeIntervalMs: Int64 = 100
    /// How often `isCurrent` also re-checks the served generation's asset files.
    public static let assetProbeIntervalMs: Int64 = 1_000

    /// Whether nothing a snapshot depended on has changed on disk since it was taken.
    ///
    /// The pointer is stat'ed (every publish, ours or another process's, replaces it) whenever
    /// this store wrote anything since it was last found unchanged, and otherwise at most every
    /// `configuration.probeIntervalNanos`; at most every `occasionalProbeIntervalMs` one caller also stats the
    /// served `feed.json`, and at most every `assetProbeIntervalMs` one caller stats its asset
    /// files, so a generation corrupted in place (a torn `feed.json`, an asset deleted or
    /// truncated), with no pointer change, is noticed within those times, while an ordinary read
    /// costs no system call at all.
    public func isCurrent(_ token: ChangeToken) -> Bool { isCurrent(token, thoroughly: false) }

    /// The same, checking every file now whatever the intervals (for sweeping a cache).
    public func isCurrentNow(_ token: ChangeToken) -> Bool { isCurrent(token, thoroughly: true) }

    private func isCurrent(_ token: ChangeToken, thoroughly: Bool) -> Bool {
        let writesSeen = writes.value  // before probing: a write after this forces the next check
        let nowNanos = MonotonicClock.nanos()
        // This store wrote something since the token was last checked: everything is looked at
        // once, so what this server did itself (a DELETE removing assets too) is seen at once.
        let wroteSince = !token.lastCheckSaw(writes: writesSeen)
        let probesDue =
            thoroughly || wroteSince
            || !token.probesCheckedRecently(
                now: nowNanos, writes: writesSeen, interval: configuration.probeIntervalNanos)
        if probesDue, !token.probes.allSatisfy({ fileSystem.status($0.path) == $0.status }) { return false }
        let now = clock.nowEpochMs()
        if thoroughly || wroteSince || token.occasionalCheckDue(now: now, interval: Self.occasionalProbeIntervalMs),
            !token.occasionalProbes.allSatisfy({ fileSystem.status($0.path) == $0.status })
        {
            return false
        }
        if thoroughly || wroteSince || token.assetCheckDue(now: now, interval: Self.assetProbeIntervalMs),
            !token.assetProbes.allSatisfy({ fileSystem.status($0.path) == $0.status })
        {
            return false
        }
        if probesDue { token.probesChecked(now: nowNanos, writes: writesSeen) }
        return true
    }

    private func probe(_ path: String) -> ChangeToken.Probe {
        ChangeToken.Probe(path: path, status: fileSystem.status(path))
    }

    private func reader(for group: String) -> FeedReader {
        reader(of: GroupLayout(root: root, group: group))
    }

    func reader(of layout: GroupLayout) -> FeedReader {
        var reader = FeedReader(fileSystem: fileSystem, layout: layout, limits: configuration.envelopeLimits)
        reader.memo = envelopeMemo
        return reader
    }

    // MARK: Assets and groups

    /// The assets a generation lists (any schema), or nil when the names are unsafe or the
    /// generation is not readable. Generations never change once visible, so callers may cache this.
    public func assetIndex(group: String, generationId: String) -> [AssetInfo]? {
        guard SafeName.isGroupName(group), SafeName.isSafe(generationId) else { return nil }
        let reader = reader(of: assetLayout(group: group, generationId: generationId).layout)
        guard case .success(let generation) = reader.load(generationId, schemaVersion: nil) else { return nil }
        return generation.assets
    }

    /// Where a generation's files are: in the group, or, when a DELETE took it within the grace
    /// period, among the deleted generations (so a widget still showing it gets its images).
    private func assetLayout(group: String, generationId: String) -> (layout: GroupLayout, isDeleted: Bool) {
        let layout = GroupLayout(root: root, group: group)
        guard fileSystem.status(layout.generation(generationId)) == nil,
            let deleted = deletedGenerations.layout(holding: generationId, group: group, now: clock.nowEpochMs())
        else { return (layout, false) }
        return (deleted, true)
    }

    private var deletedGenerations: DeletedGenerations {
        DeletedGenerations(fileSystem: fileSystem, root: root, gracePeriodMs: configuration.gracePeriodMs)
    }

    /// Opens an asset file for reading: every name must be safe, and the file is reached through
    /// `<group>/generations/<id>/assets/<name>` without following any symlink; it must be a regular
    /// file. (Whether the generation lists the name is `assetIndex`'s answer.)
    public func openAsset(group: String, generationId: String, name: String) throws -> OpenedFile {
        try openAssetLocated(group: group, generationId: generationId, name: name).file
    }

    /// The opened asset and whether it came from the deleted generations (its layout looked up once).
    private func openAssetLocated(
        group: String, generationId: String, name: String
    ) throws -> (file: OpenedFile, layout: GroupLayout, isDeleted: Bool) {
        guard SafeName.isGroupName(group), SafeName.isSafe(generationId), SafeName.isSafe(name) else {
            throw FileSystemError(kind: .notFound, operation: "open asset (unsafe name)", path: name)
        }
        let (layout, isDeleted) = assetLayout(group: group, generationId: generationId)
        let file = try fileSystem.openBeneath(root, layout.generationsBelowRoot + [generationId, "assets", name])
        return (file, layout, isDeleted)
    }

    /// Opens an asset as `openAsset` does, with a token that stays current while the asset's path
    /// names the very file opened (same inode, size and times). Assets never change once visible,
    /// so `isCurrent` checks that with an `lstat` at most every `assetProbeIntervalMs`, as it does
    /// for a feed's assets: a file removed or damaged in place is noticed within that time. Nil
    /// token when the path changed between the open and the check.
    public func openAssetForReuse(
        group: String, generationId: String, name: String
    ) throws -> (OpenedFile, ChangeToken?) {
        let (file, layout, isDeleted) = try openAssetLocated(group: group, generationId: generationId, name: name)
        // A deleted generation's asset is served only while its grace period lasts: never kept.
        guard !isDeleted else { return (file, nil) }
        let probe = probe(layout.asset(generationId, name))
        guard probe.status == file.status else { return (file, nil) }
        return (
            file,
            ChangeToken(
                probes: [], occasionalProbes: [], assetProbes: [probe], lastCheck: clock.nowEpochMs(),
                writesSeen: writes.value, probedAtNanos: MonotonicClock.nanos())
        )
    }

    /// The groups under the root (folders with safe names), sorted.
    /// The generation a plain read of `group` serves, as a listing shows it (id, schema version,
    /// when, fingerprint), without keeping its payload: a `feed.json` seen before (same file
    /// status) is not read again. Nil when the group has no readable generation.
    public func servedSummary(group: String) -> (id: String, summary: EnvelopeSummary)? {
        guard SafeName.isGroupName(group) else { return nil }
        return reader(for: group).servedSummary()
    }

    public func groups() -> [String] {
        let entries = (try? fileSystem.listDirectory(root)) ?? []
        return entries.filter { $0.isDirectory && SafeName.isGroupName($0.name) }.map(\.name).sorted()
    }
}

public struct ResolvedAsset: Equatable, Sendable {
    /// Absolute or root-relative path of the file.
    public var path: String
    /// Its size in bytes, as the generation lists it.
    public var bytes: Int
}
