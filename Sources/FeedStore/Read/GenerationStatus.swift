import ConcurrencyPrimitives

/// One generation folder as a puzzled user needs to see it: what it is to readers, and why.
public struct GenerationStatus: Equatable, Sendable {
    /// What the generation is to a reader.
    public enum State: String, Equatable, Sendable {
        /// The generation readers get now.
        case served
        /// Listed in `current.json` as a fallback, and readable.
        case kept
        /// Readable, but no longer in `current.json`: removed once its grace period is over.
        case retired
        /// Readable, but not of the schema version asked for.
        case wrongSchema = "wrong-schema"
        /// Not readable (missing or unparsable `feed.json`, torn assets, unsafe id, ...).
        case corrupt
        /// A `.tmp` folder: a write in progress, or what a crash left (removed by the next publish).
        case inProgress = "in-progress"
        /// Named by `current.json` but not on disk.
        case missing
    }

    /// The folder name (or the id `current.json` gives).
    public var id: String
    /// Its state.
    public var state: State
    /// Why, for every state but `served`.
    public var reason: String?
    /// What its envelope says, when readable.
    public var generation: GenerationSummary?
}

/// What a listing shows of a readable generation: its envelope's head and its assets, never its
/// payload.
public struct GenerationSummary: Equatable, Sendable {
    /// The payload's schema version.
    public var schemaVersion: Int
    /// When it was written, epoch milliseconds.
    public var generatedAtEpochMs: Int64
    /// Its fingerprint.
    public var fingerprint: String
    /// Its assets, sorted by name.
    public var assets: [AssetInfo]
}

extension FeedReader {
    /// Every generation folder, newest first, plus ids the pointer names that are not on disk.
    /// Each `feed.json` is judged through the memo: read and parsed once while its file status
    /// holds, whatever schema version later listings ask for.
    func statuses(schemaVersion: Int?) -> [GenerationStatus] {
        var pointed: [String] = []
        if case .present(let pointer) = readPointer() { pointed = [pointer.current] + pointer.previous }
        let folders = ((try? fileSystem.listDirectory(layout.generations)) ?? []).filter(\.isDirectory).map(\.name)
            .sorted(by: >)
        var outcomes: [String: Result<GenerationSummary, SkipReason>] = [:]
        func outcome(_ id: String) -> Result<GenerationSummary, SkipReason> {
            if let known = outcomes[id] { return known }
            let found = summary(id, schemaVersion: schemaVersion)
            outcomes[id] = found
            return found
        }
        // The reader's choice: the pointer's candidates in order, then the listed folders.
        let served = (pointed + listedGenerations()).first { id in
            if case .success = outcome(id) { return true }
            return false
        }
        let previous = Set(pointed.dropFirst())
        var result: [GenerationStatus] = []
        for id in folders {
            guard !id.hasSuffix(GenerationID.temporarySuffix) else {
                result.append(
                    GenerationStatus(
                        id: id, state: .inProgress,
                        reason: "a write in progress, or what a crash left; readers ignore it", generation: nil))
                continue
            }
            result.append(status(id, outcome: outcome(id), served: served, previous: previous))
        }
        for id in pointed where !folders.contains(id) {
            result.append(
                GenerationStatus(
                    id: id, state: .missing,
                    reason: SafeName.isSafe(id)
                        ? "named by current.json but not on disk" : "named by current.json but not a safe name",
                    generation: nil))
        }
        return result
    }

    private func status(
        _ id: String, outcome: Result<GenerationSummary, SkipReason>, served: String?, previous: Set<String>
    ) -> GenerationStatus {
        switch outcome {
        case .success(let generation):
            let state: GenerationStatus.State = id == served ? .served : previous.contains(id) ? .kept : .retired
            let reason: String? =
                switch state {
                case .served: nil
                case .kept: "listed in current.json as a fallback"
                default: "not in current.json; deleted once its grace period is over"
                }
            return GenerationStatus(id: id, state: state, reason: reason, generation: generation)
        case .failure(let reason):
            if case .wrongSchema = reason {
                return GenerationStatus(
                    id: id, state: .wrongSchema, reason: reason.description,
                    generation: try? summary(id, schemaVersion: nil).get())
            }
            return GenerationStatus(id: id, state: .corrupt, reason: reason.description, generation: nil)
        }
    }
}

extension FeedStore {
    /// Every generation of a group with its state and the reason for it (nil: no such group).
    public func generations(group: String, schemaVersion: Int? = nil) -> [GenerationStatus]? {
        guard SafeName.isGroupName(group) else { return nil }
        let layout = GroupLayout(root: root, group: group)
        // A group that never had a feed, or was cleared, has neither pointer nor generations.
        guard
            FeedReader.directoryExists(layout.generations, fileSystem: fileSystem)
                || fileSystem.status(layout.pointer) != nil
        else {
            return nil
        }
        return reader(of: layout).statuses(schemaVersion: schemaVersion)
    }
}

extension FeedStore {
    /// A token that changes when a group's folder does: `current.json`, the `generations/`
    /// folder's own status (entries added, renamed or removed) and the fault record; for caching
    /// answers built from the whole folder (`generations(group:)`). Take it before reading.
    public func folderToken(group: String) -> ChangeToken {
        let writesSeen = writes.value
        let probedAt = MonotonicClock.nanos()
        let layout = GroupLayout(root: root, group: group)
        let paths = [layout.pointer, layout.generations, layout.directory + "/fault-lab.json"]
        return ChangeToken(
            probes: paths.map { ChangeToken.Probe(path: $0, status: fileSystem.status($0)) },
            occasionalProbes: [], assetProbes: [], lastCheck: clock.nowEpochMs(), writesSeen: writesSeen,
            probedAtNanos: probedAt)
    }
}
