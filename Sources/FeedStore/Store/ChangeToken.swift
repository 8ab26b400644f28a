import ConcurrencyPrimitives
import Synchronization

/// A read together with what it depended on.
public struct FeedSnapshot: Sendable {
    /// What a reader got.
    public var read: FeedRead
    /// Pass to `FeedStore.isCurrent` to learn whether `read` is still valid.
    public var token: ChangeToken
}

/// The file statuses a read depended on (opaque to callers).
///
/// A class: it is checked on every cached read, and passing one reference retains once where a
/// struct of three arrays and three counters would retain six times.
public final class ChangeToken: Sendable {
    struct Probe: Equatable, Sendable {
        var path: String
        var status: FileStatus?
    }
    /// Checked on every revalidation.
    let probes: [Probe]
    /// Checked at most every `FeedStore.occasionalProbeIntervalMs`.
    let occasionalProbes: [Probe]
    /// The served generation's asset files, checked at most every `FeedStore.assetProbeIntervalMs`.
    let assetProbes: [Probe]
    private let lastOccasional: LastCheck
    private let lastAssets: LastCheck

    private let lastProbes: ProbeCheck

    /// A token whose `probes` were taken after the store's write count was `writesSeen` and the
    /// monotonic clock `probedAtNanos`.
    init(
        probes: [Probe], occasionalProbes: [Probe], assetProbes: [Probe], lastCheck: Int64, writesSeen: Int,
        probedAtNanos: Int64
    ) {
        self.probes = probes
        self.occasionalProbes = occasionalProbes
        self.assetProbes = assetProbes
        lastOccasional = LastCheck(lastCheck)
        lastAssets = LastCheck(lastCheck)
        lastProbes = ProbeCheck(nanos: probedAtNanos, writes: writesSeen)
    }

    /// Whether the probes were found unchanged less than `interval` ago with the store's write
    /// count still `writes` (then nothing this process did, and at most `interval` of other
    /// processes' changes, can be missed by trusting them).
    func probesCheckedRecently(now: Int64, writes: Int, interval: Int64) -> Bool {
        lastProbes.writes.load(ordering: .acquiring) == writes
            && (0..<interval).contains(now &- lastProbes.nanos.load(ordering: .relaxed))
    }

    /// Whether the last recorded check saw the store's write count at `writes`.
    func lastCheckSaw(writes: Int) -> Bool { lastProbes.writes.load(ordering: .acquiring) == writes }

    /// Records that the probes were found unchanged at `now`, with the write count read before probing.
    func probesChecked(now: Int64, writes: Int) {
        // Two stores racing may mix one's time with the other's count: each mix only shortens
        // or voids the window (a count read later is larger; a time recorded earlier is older).
        lastProbes.nanos.store(now, ordering: .relaxed)
        lastProbes.writes.store(writes, ordering: .releasing)
    }

    private final class ProbeCheck: Sendable {
        let nanos: Atomic<Int64>
        let writes: Atomic<Int>
        init(nanos: Int64, writes: Int) {
            self.nanos = Atomic(nanos)
            self.writes = Atomic(writes)
        }
    }

    /// Claims the occasional check when it is due (one caller wins per interval).
    func occasionalCheckDue(now: Int64, interval: Int64) -> Bool { lastOccasional.claim(now: now, interval: interval) }

    /// Claims the asset check when it is due and there are assets (one caller wins per interval).
    func assetCheckDue(now: Int64, interval: Int64) -> Bool {
        !assetProbes.isEmpty && lastAssets.claim(now: now, interval: interval)
    }

    private final class LastCheck: Sendable {
        let value: Atomic<Int64>
        init(_ value: Int64) { self.value = Atomic(value) }

        func claim(now: Int64, interval: Int64) -> Bool {
            let last = value.load(ordering: .relaxed)
            // A wall clock stepped back (now < last) claims at once instead of waiting it out.
            guard now &- last >= interval || now < last else { return false }
            return value.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged
        }
    }
}

/// An asset file that passed every path-safety check.
