import ConcurrencyPrimitives
import FeedStore

/// The end of every publish, whoever asks (`PUT /feeds/{group}`, an archive restore, a seed
/// folder, `feed-server publish`): lint, refuse under strict, write; and the answer's JSON. One
/// place, so a feed published offline gets the same checks, the same lock and the same answer as
/// one published over HTTP.
struct PublishCommit: Sendable {
    let store: FeedStore
    /// The platform-limit check (`--android-screen`).
    let lint: FeedLint

    /// What a written publish did, and the warnings it was written with.
    struct Committed {
        var result: PublishResult
        var warnings: LintReport
        /// The payload in the canonical form the store wrote, when it was JSON (the journal keeps
        /// these bytes rather than parsing the sent ones again).
        var canonicalPayload: [UInt8]?

        /// What the write journal keeps of it; `visible` for a publish that changed the feed (false
        /// when its profile shows nothing new: `invisible-change`).
        func journalFacts(schemaVersion: Int, payload: [UInt8]) -> JournalFacts {
            var facts = JournalFacts(
                result: result.changed ? "published" : "unchanged", generationId: result.generationId,
                fingerprint: result.fingerprint, warnings: warnings.warnings.map(\.code.rawValue),
                schemaVersion: schemaVersion, payload: .sent(payload))
            if let canonicalPayload { facts.payload = .canonical(canonicalPayload, sentBytes: payload.count) }
            if result.changed { facts.visible = warnings.counts[.invisibleChange] == nil }
            return facts
        }
    }

    /// The warnings of what `upload` would write to `group`, with the profile it carries or the
    /// group's (one is inferred without either; an unreadable stored one is a warning).
    func warnings(_ upload: AssetUpload, group: String) -> LintReport {
        let parsed = try? store.parsePayload(upload.payload)
        return lintReport(upload, parsed: parsed, group: group, reads: storeReads(upload, parsed: parsed, group: group))
    }

    /// What the lint of a publish reads of the store: the group's profile (none read when the
    /// upload carries one), and, only when there is a profile, the served payload the
    /// invisible-change check compares with.
    struct StoreReads: Sendable {
        var profile: WidgetProfile? = nil
        /// The stored profile could not be read: the warning that says so.
        var unreadable: LintWarning? = nil
        var served: (generation: Generation, document: JSONDocument)? = nil
    }

    /// Reads what the lint of `upload` needs of the store now.
    private func storeReads(_ upload: AssetUpload, parsed: ParsedPayload?, group: String) -> StoreReads {
        let (stored, unreadable) =
            upload.profile == nil ? PublishLint.storedProfile(store, group: group) : (nil, nil)
        let profile = upload.profile ?? stored
        // Only a profile makes the served payload worth reading.
        let served = profile == nil || parsed == nil ? nil : store.servedPayload(group: group)
        return StoreReads(profile: profile, unreadable: unreadable, served: served)
    }

    /// The lint of `upload` as pure work, given what it read of the store.
    private func lintReport(
        _ upload: AssetUpload, parsed: ParsedPayload?, group: String, reads: StoreReads
    )
        -> LintReport
    {
        let report = PublishLint.warnings(
            document: parsed?.document, packing: upload.packing, lint: lint, profile: reads.profile)
        let invisible = reads.profile.flatMap { profile in
            parsed.flatMap {
                ReloadCheck.invisibleChange(
                    upload, payload: $0.document, served: reads.served, profile: profile, group: group)
            }
        }
        return PublishLint.adding(invisible, to: PublishLint.adding(reads.unreadable, to: report))
    }

    /// Lints (`warnings`, when the caller has them already), refuses with a 422 under `strict`
    /// when there is any warning, and writes. `linted` sees the warnings of a publish refused
    /// for them or written; `wrote` how long the write took and whether it changed the feed.
    /// With `beside`, a publish that is not `strict` is linted on that pool while it writes
    /// (warnings never stop it, and the write mostly waits for the disk).
    func commit(
        group: String, upload: AssetUpload, schemaVersion: Int, strict: Bool, warnings known: LintReport? = nil,
        precondition: WritePrecondition? = nil, beside pool: WorkPool? = nil, linted: (LintReport) -> Void = { _ in },
        wrote: (_ seconds: Double, _ changed: Bool) -> Void = { _, _ in }
    ) throws(Problem) -> Committed {
        // Parsed once for the lint, the invisible-change check and the write.
        let parsed = try? store.parsePayload(upload.payload)
        // Under `strict` the warnings that decide the 422 are the ones answered: never made again.
        let linting =
            known.map { known in LintTasks(known) } ?? lintTasks(upload, parsed: parsed, group: group, recheck: !strict)
        if let pool, !strict, known == nil { linting.lint.offer(to: pool) }
        // A refused write answers with its problem alone: the lint no pool thread started is
        // given up, so it costs nothing and holds nothing.
        var joined = false
        defer { if !joined { linting.lint.abandon() } }
        if strict {
            let warnings = linting.lint.join()
            if !warnings.isEmpty {
                linted(warnings)
                throw Problem.platformLimits(warnings)
            }
        }
        let started = MonotonicClock.nanos()
        let result: PublishResult
        do {
            if let parsed {
                result = try store.publish(
                    group: group, payload: parsed, schemaVersion: schemaVersion, assets: upload.assetInputs,
                    precondition: precondition, whileServed: linting.checkReads)
            } else {
                // Not JSON: the store says why, after what it checks first (the group's name).
                result = try store.publish(
                    group: group, payloadJSON: upload.payload, schemaVersion: schemaVersion,
                    assets: upload.assetInputs, precondition: precondition)
            }
        } catch .preconditionFailed(let served) {
            throw Problem.preconditionFailed(served: served, precondition: precondition)
        } catch {
            throw Problem(error)
        }
        // The profile a seed folder or archive carries goes with the feed it was linted with.
        if let profile = upload.profile {
            do { try store.storeProfile(profile, group: group) } catch { throw Problem(error) }
        }
        wrote(Double(MonotonicClock.nanos() - started) / 1e9, result.changed)
        let warnings = linting.report()
        joined = true
        linted(warnings)
        return Committed(result: result, warnings: warnings, canonicalPayload: parsed?.document.bytes)
    }

    /// A publish's lint as side tasks: the lint, and inside it its reads of the store, which run
    /// with it (on the pool, off the writer's path) but must see the feed the publish replaces.
    private final class LintTasks {
        let lint: SideTask<LintReport>
        private let reads: SideTask<StoreReads>?
        /// How the reads are made, for `checkReads` to make them again; nil: never again.
        private let read: (@Sendable () -> StoreReads)?
        private let relint: @Sendable (StoreReads) -> LintReport
        /// The reads made again by `checkReads`: they had seen another feed.
        private var remade: StoreReads?

        /// The lint of what `read` finds; with `recheck`, made again if that saw another feed.
        init(
            read: @escaping @Sendable () -> StoreReads, lint: @escaping @Sendable (StoreReads) -> LintReport,
            recheck: Bool
        ) {
            let reads = SideTask(read)
            self.reads = reads
            self.lint = SideTask { lint(reads.join()) }
            self.read = recheck ? read : nil
            relint = lint
        }

        /// Warnings known already: nothing to read or run.
        init(_ known: LintReport) {
            (lint, reads, read, relint) = (SideTask { known }, nil, nil, { _ in known })
        }

        /// Called by the store under the group's lock while `servedID` is the feed readers get: the
        /// reads are joined (or made here), and made again if they saw another feed (a writer that
        /// switched the pointer after them and before this publish took the lock).
        func checkReads(_ servedID: String?) {
            // A served feed that is not JSON reads as none: made again each time, which is harmless.
            guard let seen = reads?.join(), let read, seen.profile != nil, seen.served?.generation.id != servedID
            else { return }
            remade = read()
        }

        /// The lint's warnings, run again with the reads `checkReads` made again, if it did.
        func report() -> LintReport {
            guard let remade else { return lint.join() }
            lint.abandon()
            return relint(remade)
        }
    }

    /// The side tasks that lint `upload`.
    private func lintTasks(_ upload: AssetUpload, parsed: ParsedPayload?, group: String, recheck: Bool) -> LintTasks {
        LintTasks(
            read: { [self] in storeReads(upload, parsed: parsed, group: group) },
            lint: { [self] in lintReport(upload, parsed: parsed, group: group, reads: $0) }, recheck: recheck)
    }

    /// The body of a publish's `201`/`200`: `result`, `generationId`, `fingerprint`, the packed
    /// assets with their URLs, what was skipped, and the warnings; one line.
    static func answer(group: String, _ committed: Committed, packing: AssetBudget.Result) -> [UInt8] {
        let result = committed.result
        let assets: [JSONValue] = packing.packed.map { packed in
            .object([
                JSONMember("name", .string(packed.name)),
                JSONMember("bytes", .number(String(packed.image.byteCount))),
                JSONMember("width", .number(String(packed.image.width))),
                JSONMember("height", .number(String(packed.image.height))),
                JSONMember("decodedBytes", .number(String(packed.image.decodedBytes))),
                JSONMember(
                    "url",
                    .string(FeedRendering.assetURL(group: group, generation: result.generationId, name: packed.name))),
            ])
        }
        let members =
            [
                JSONMember("result", .string(result.changed ? "published" : "unchanged")),
                JSONMember("generationId", .string(result.generationId)),
                JSONMember("fingerprint", .string(result.fingerprint)),
                JSONMember("assetBytes", .number(String(packing.totalBytes))),
                JSONMember("decodedBytes", .number(String(packing.totalDecodedBytes))),
                JSONMember("assets", .array(assets)),
                JSONMember("skipped", AssetUpload.skippedJSON(packing.skipped)),
            ] + PublishLint.members(committed.warnings)
        return CompactJSON.bytes(.object(members)) + [0x0A]
    }
}

extension PublishResult {
    /// Whether the publish wrote a new generation (`published`), not `unchanged`.
    var changed: Bool {
        if case .published = self { return true }
        return false
    }
}
