import ConcurrencyPrimitives
import FeedStore
import HTTPTransport

/// Archives written for `GET /feeds/{group}/archive`, kept open after their names are gone and
/// shared: every export of one generation (and profile) sends the same file, each answer through
/// a descriptor of its own. So the disk that exports hold grows with the generations exported,
/// not with the connections reading them: ten clients that never read one archive hold one file.
final class ExportFiles: Sendable {
    private struct Kept {
        let file: OpenedFile
        var lastUsedNanos: Int64
    }

    /// Most archives kept at once; the least recently used goes first.
    static let capacity = 8
    /// An archive unused this long is let go at the next export (its disk is freed once the
    /// answers still sending it are done).
    static let idleNanos: Int64 = 30_000_000_000

    private let kept = Lock<[ExportSizes.Key: Kept]>([:])

    /// A descriptor of `key`'s archive when one is kept, for an answer to send and close.
    func responseFile(_ key: ExportSizes.Key) -> ResponseFile? {
        let now = MonotonicClock.nanos()
        let file: OpenedFile? = kept.withLock { kept in
            kept = kept.filter { now - $0.value.lastUsedNanos < Self.idleNanos }
            kept[key]?.lastUsedNanos = now
            return kept[key]?.file
        }
        guard let file, let descriptor = try? file.duplicateDescriptor() else { return nil }
        return ResponseFile(takingDescriptor: descriptor, size: file.size)
    }

    /// Keeps `file`, `key`'s archive, for the exports that follow; the least recently used
    /// archive goes when there are `capacity` already.
    func keep(_ file: OpenedFile, for key: ExportSizes.Key) {
        let now = MonotonicClock.nanos()
        kept.withLock { kept in
            if kept[key] == nil, kept.count >= Self.capacity,
                let oldest = kept.min(by: { $0.value.lastUsedNanos < $1.value.lastUsedNanos })?.key
            {
                kept[oldest] = nil
            }
            kept[key] = Kept(file: file, lastUsedNanos: now)
        }
    }
}
