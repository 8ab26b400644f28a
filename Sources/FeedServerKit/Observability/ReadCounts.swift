import ConcurrencyPrimitives
import FeedStore
import Synchronization

/// Reads of `GET /feeds/{group}` counted per group, per served generation and per answer (`200`,
/// `304`, fallback served, `404`), for `GET /journal/reads`. A cached answer holds its
/// generation's `Tally`, so counting a read is one relaxed atomic add: no lock, no lookup.
/// Tallies are made when an answer is cached (the slow path), at most `maxGenerations` of them;
/// past that the oldest one no cached answer holds is folded into its group's `earlier` counts.
final class ReadCounts: Sendable {
    /// Reads of one generation of one group.
    final class Tally: Sendable {
        let group: String
        let generationId: String
        let ok = Atomic<Int>(0)
        let notModified = Atomic<Int>(0)
        let fallbackServed = Atomic<Int>(0)

        init(group: String, generationId: String) {
            self.group = group
            self.generationId = generationId
        }

        /// Counts one read answered with this generation.
        func count(notModified answeredNotModified: Bool, fallback: Bool) {
            if answeredNotModified {
                notModified.add(1, ordering: .relaxed)
            } else {
                ok.add(1, ordering: .relaxed)
            }
            if fallback { fallbackServed.add(1, ordering: .relaxed) }
        }

        var counts: Counts {
            Counts(
                ok: ok.load(ordering: .relaxed), notModified: notModified.load(ordering: .relaxed),
                fallbackServed: fallbackServed.load(ordering: .relaxed))
        }

        func reset() {
            ok.store(0, ordering: .relaxed)
            notModified.store(0, ordering: .relaxed)
            fallbackServed.store(0, ordering: .relaxed)
        }
    }

    /// Counts of reads answered with a generation.
    struct Counts: Equatable, Sendable {
        var ok = 0
        var notModified = 0
        var fallbackServed = 0

        var isZero: Bool { ok == 0 && notModified == 0 && fallbackServed == 0 }

        static func + (left: Counts, right: Counts) -> Counts {
            Counts(
                ok: left.ok &+ right.ok, notModified: left.notModified &+ right.notModified,
                fallbackServed: left.fallbackServed &+ right.fallbackServed)
        }
    }

    /// One group's reads, as `GET /journal/reads` lists them.
    struct GroupReads: Sendable {
        var group: String
        /// `404`s: no readable generation (for that `schemaVersion`).
        var notFound = 0
        /// Per generation, oldest tally first.
        var generations: [(generationId: String, counts: Counts)] = []
        /// Generations whose tallies were folded away (past `maxGenerations`).
        var earlier = Counts()
    }

    /// Most generations with a tally of their own, and most groups whose `404`s are counted by
    /// name (further ones are counted together as `otherNotFound`).
    let maxGenerations: Int
    let maxGroups: Int

    private struct State {
        var tallies: [Key: Tally] = [:]
        /// The tallies' keys in the order they were made.
        var order: [Key] = []
        var notFound: [String: Int] = [:]
        var earlier: [String: Counts] = [:]
        var otherNotFound = 0
        var since: Int64
    }
    private struct Key: Hashable {
        var group: String
        var generationId: String
    }
    private let state: Lock<State>

    /// Counts from `since` (epoch ms) on.
    init(since: Int64, maxGenerations: Int = 4096, maxGroups: Int = 4096) {
        self.maxGenerations = max(1, maxGenerations)
        self.maxGroups = max(0, maxGroups)
        state = Lock(State(since: since))
    }

    /// The tally of `generationId` in `group`, made on first use.
    func tally(group: String, generationId: String) -> Tally {
        state.withLock { state in
            let key = Key(group: group, generationId: generationId)
            if let known = state.tallies[key] { return known }
            if state.order.count >= maxGenerations { Self.foldOldestUnheld(&state) }
            let made = Tally(group: group, generationId: generationId)
            state.tallies[key] = made
            state.order.append(key)
            return made
        }
    }

    /// Counts a `404` read of `group`.
    func countNotFound(group: String) {
        state.withLock { state in
            if state.notFound[group] != nil || state.notFound.count < maxGroups {
                state.notFound[group, default: 0] &+= 1
            } else {
                state.otherNotFound &+= 1
            }
        }
    }

    /// Every group's reads (or `group`'s alone), by name; generations never read are left out.
    func snapshot(group: String? = nil) -> (since: Int64, groups: [GroupReads], otherNotFound: Int) {
        state.withLock { state in
            var groups: [String: GroupReads] = [:]
            for key in state.order where group == nil || key.group == group {
                guard let tally = state.tallies[key] else { continue }
                let counts = tally.counts
                guard !counts.isZero else { continue }
                groups[tally.group, default: GroupReads(group: tally.group)].generations.append(
                    (tally.generationId, counts))
            }
            for (name, count) in state.notFound where group == nil || name == group {
                groups[name, default: GroupReads(group: name)].notFound = count
            }
            for (name, counts) in state.earlier where group == nil || name == group {
                groups[name, default: GroupReads(group: name)].earlier = counts
            }
            let sorted = groups.values.sorted { $0.group < $1.group }
            return (state.since, sorted, group == nil ? state.otherNotFound : 0)
        }
    }

    /// Starts counting again from `now` (`DELETE /journal`); cached answers keep their tallies.
    func reset(now: Int64) {
        state.withLock { state in
            for tally in state.tallies.values { tally.reset() }
            state.notFound = [:]
            state.earlier = [:]
            state.otherNotFound = 0
            state.since = now
        }
    }

    /// Folds the oldest tally that only this registry holds into its group's `earlier` counts;
    /// when every tally is held by a cached answer (more cached answers than `maxGenerations`),
    /// folds the oldest anyway: its later reads are then lost rather than the registry growing.
    private static func foldOldestUnheld(_ state: inout State) {
        guard !state.order.isEmpty else { return }
        let position = state.order.indices.first { isKnownUniquelyReferenced(&state.tallies[state.order[$0]]) } ?? 0
        let key = state.order.remove(at: position)
        guard let tally = state.tallies.removeValue(forKey: key) else { return }
        let counts = tally.counts
        guard !counts.isZero else { return }
        state.earlier[key.group] = state.earlier[key.group, default: Counts()] + counts
    }
}
