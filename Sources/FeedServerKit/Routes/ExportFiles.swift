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
        /// What the archive was written from: an in-place edit of its generation ends its use.
        let token: ChangeToken?
        var lastUsedNanos: Int64
    }

    /// Most archives kept at once; the least recently used goes first.
    static let capacity = 8
    /// An archive unused this long is let go at the next export (its disk is freed once the
    /// answers still sending it are done).
    static let idleNanos: Int64 = 30_000_000_000

    private let kept = Lock<[ExportSizes.Key: Kept]>([:])

    /// A descriptor of `key`'s archive when one is kept and what it was written from is
    /// `isCurrent`, for an answer to send and close.
    func responseFile(_ key: ExportSizes.Key, isCurrent: (ChangeToken) -> Bool = { _ in true }) -> ResponseFile? {
        let now = MonotonicClock.nanos()
        let found: Kept? = kept.withLock { kept in
            kept = kept.filter { now - $0.value.lastUsedNanos < Self.idleNanos }
            kept[key]?.lastUsedNanos = now
            return kept[key]
        }
        guard let found else { return nil }
        guard found.token.map(isCurrent) ?? true else {
            kept.withLock { kept in if kept[key]?.file === found.file { kept[key] = nil } }
            return nil
        }
        guard let descriptor = try? found.file.duplicateDescriptor() else { return nil }
        return ResponseFile(takingDescriptor: descriptor, size: found.file.size)
    }

    /// Keeps `file`, `key`'s archive written from what `token` describes, for the exports that
    /// follow; the least recently used archive goes when there are `capacity` already.
    func keep(_ file: OpenedFile, for key: ExportSizes.Key, token: ChangeToken? = nil) {
        let now = MonotonicClock.nanos()
        kept.withLock { kept in
            if kept[key] == nil, kept.count >= Self.capacity,
                let oldest = kept.min(by: { $0.value.lastUsedNanos < $1.value.lastUsedNanos })?.key
            {
                kept[oldest] = nil
            }
            kept[key] = Kept(file: file, token: token, lastUsedNanos: now)
        }
    }
}
