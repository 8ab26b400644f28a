import FeedImaging
import FeedStore
import HTTPTransport

/// Publishes the groups of a seed folder (`--seed`) the way a multipart publish would: the
/// same budget packs the same files to the same bytes, so an unchanged group writes nothing.
/// Every outcome is one line on stderr; a broken group is reported and skipped.
struct SeedPublisher: Sendable {
    let folder: SeedFolder
    let store: FeedStore
    let encoder: VipsImageEncoder
    let threads: Int
    /// `--max-parts`: most files in a group's `assets/`.
    let maxAssets: Int
    /// `--max-body-bytes`: most bytes a group's assets may hold together (as a multipart body).
    let maxAssetBytes: Int
    /// The platform-limit check whose warnings every seed and watch publish logs (`--android-screen`).
    var lint = FeedLint()
    /// `--seed-strict`: a group with any warning is refused (logged, not published).
    var strict = false
    /// Where each seed publish is recorded (`kind` seed, client `seed`); nil with `--journal off`.
    var journal: WriteJournal? = nil
    /// Where a group's assets are copied for packing, as a multipart publish's parts are (nil:
    /// read into memory).
    var uploads: UploadArea? = nil

    /// What publishing one group did.
    enum Outcome: Equatable {
        case published(generationId: String)
        case unchanged
        /// `--seed-strict` and this many warnings: nothing written.
        case refused(warnings: Int)
        case failed(String)
    }

    /// Publishes every group of the folder, each on its own (one failing stops no other).
    /// Throws only when the folder itself cannot be listed.
    @discardableResult
    func publishAll() throws(SeedError) -> [String: Outcome] {
        var outcomes: [String: Outcome] = [:]
        let groups = try folder.groups()
        for group in groups { outcomes[group] = publish(group: group, trigger: "seed") }
        for (name, reason) in folder.ignoredEntries() {
            SeedLog.message("feed-server: seed: '\(LogSafe.name(String(name.prefix(200))))' skipped: it \(reason)")
        }
        // An empty folder (a mount that did not take, a path mistyped into a new folder) says so.
        if groups.isEmpty {
            SeedLog.message(
                "feed-server: seed: the folder holds no group (one folder per group, each with a payload.json): "
                    + "nothing seeded")
        }
        return outcomes
    }

    /// Reads, packs and publishes one group, and logs what happened (`trigger` starts the line).
    @discardableResult
    func publish(group: String, trigger: String) -> Outcome {
        let outcome = attempt(group, trigger: trigger)
        let shown = LogSafe.name(group)
        switch outcome {
        case .published(let id):
            SeedLog.message("feed-server: \(trigger): group '\(shown)' published generation \(id)")
        case .unchanged:
            if trigger == "seed" { SeedLog.message("feed-server: \(trigger): group '\(shown)' unchanged") }
        case .refused(let count):
            SeedLog.message(
                "feed-server: \(trigger): group '\(shown)' refused: --seed-strict and \(count) platform-limit "
                    + "warning(s); \(servedNow(group))")
        case .failed(let reason):
            let trimmed = reason.hasSuffix(".") ? String(reason.dropLast()) : reason
            SeedLog.message("feed-server: \(trigger): group '\(shown)' skipped: \(trimmed); \(servedNow(group))")
        }
        return outcome
    }

    /// What readers of a group not published get now, for the line saying so.
    private func servedNow(_ group: String) -> String {
        store.read(group: group).served.map { "generation \($0.id) stays served" } ?? "the group has no feed"
    }

    private func attempt(_ group: String, trigger: String) -> Outcome {
        let seed: SeedGroup
        // Removed with its files when this attempt ends.
        let spool: UploadFolder?
        do { spool = try uploads?.makeFolder() } catch {
            return .failed("its assets cannot be copied for packing (\(LogSafe.name("\(error)")))")
        }
        defer { withExtendedLifetime(spool) {} }
        do {
            seed = try folder.read(
                group: group, maxPayloadBytes: store.configuration.maxFeedBytes, maxAssets: maxAssets,
                maxAssetBytes: maxAssetBytes, spool: spool)
        } catch {
            journalRefusal(group, problem: "invalid-seed", payload: nil)
            return .failed(error.description)
        }
        var upload: AssetUpload
        do {
            upload = try AssetUpload.pack(
                payload: seed.payload, candidates: seed.assets, options: AssetUpload.Options(), encoder: encoder,
                threads: threads)
        } catch {
            journalRefusal(group, problem: String(error.type), payload: seed.payload)
            return .failed(error.detail)
        }
        upload.profile = seed.profile
        let prefix = "feed-server: \(trigger): group '\(LogSafe.name(group))'"
        for skipped in upload.packing.skipped {
            SeedLog.message("\(prefix): asset '\(LogSafe.name(skipped.name))' left out: " + skipped.reason)
        }
        let committer = PublishCommit(store: store, lint: lint)
        let warnings = committer.warnings(upload, group: group)
        SeedLog.warnings(warnings, prefix: prefix)
        let codes = warnings.warnings.map(\.code.rawValue)
        if strict, !warnings.isEmpty {
            journal?.record(
                kind: .seed, group: group, client: "seed",
                facts: JournalFacts(result: "refused", warnings: codes, payload: .sent(upload.payload)),
                problem: "platform-limits")
            return .refused(warnings: warnings.total)
        }
        do {
            let committed = try committer.commit(
                group: group, upload: upload, schemaVersion: seed.schemaVersion, strict: false, warnings: warnings)
            journal?.record(
                kind: .seed, group: group, client: "seed",
                facts: committed.journalFacts(schemaVersion: seed.schemaVersion, payload: upload.payload))
            switch committed.result {
            case .published(let id, _, _): return .published(generationId: id)
            case .unchanged: return .unchanged
            }
        } catch {
            journalRefusal(group, problem: String(error.type), payload: upload.payload)
            return .failed(error.detail)
        }
    }

    /// A seed group not published is a refused write in the journal, with what made it fail.
    private func journalRefusal(_ group: String, problem: String, payload: [UInt8]?) {
        journal?.record(
            kind: .seed, group: group, client: "seed",
            facts: JournalFacts(result: "refused", payload: payload.map(JournalPayload.sent)),
            problem: problem)
    }
}

/// Every line the seed folder and its watcher log goes through here: names in it are escaped
/// on their own (`LogSafe.name`), and the whole line is made safe as well (`LogSafe.line`),
/// since a refused publish's reason may quote a payload's text.
enum SeedLog {
    /// Writes one log line.
    static func message(_ text: String) { AccessLog.message(LogSafe.line(text)) }

    /// One line per platform-limit warning, `prefix` first, and one for those only counted.
    static func warnings(_ report: LintReport, prefix: String) {
        for warning in report.warnings {
            message("\(prefix): warning \(warning.code.rawValue): \(warning.detail)")
        }
        if report.omitted > 0 { message("\(prefix): and \(report.omitted) more warning(s) not listed") }
    }
}
