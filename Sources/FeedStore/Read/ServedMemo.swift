import ConcurrencyPrimitives

/// What a plain read of each group served last, kept while the files it came from are unchanged,
/// so a publish's dedupe check and its lint need not read and parse the served `feed.json` again.
///
/// Only a read the pointer's own `current` answered is kept (no fallback, nothing skipped): that
/// read depends on `current.json`, the served `feed.json` and its asset files alone, and is valid
/// while an `lstat` of each finds the status it was taken with (a rename gives a new inode, a write
/// in place a new size or times), the rule `EnvelopeMemo` and `ChangeToken` follow. Payloads count
/// against `byteLimit`; the least recently used group is forgotten first.
final class ServedMemo: Sendable {
    private struct Known {
        var inspection: FeedReader.Inspection
        /// The served payload parsed, when the publish that wrote it kept it.
        var document: JSONDocument?
        var probes: [ChangeToken.Probe]
        var payloadBytes: Int
        var lastUse: UInt64
    }

    private struct State {
        var known: [String: Known] = [:]
        var payloadBytes = 0
        var uses: UInt64 = 0
    }

    private let state = Lock(State())
    /// The most payload bytes kept, all groups together; a payload over a quarter of it is not kept.
    let byteLimit: Int
    /// The most groups kept.
    let groupLimit: Int

    /// A memo of at most `byteLimit` payload bytes over at most `groupLimit` groups.
    init(byteLimit: Int = 8 << 20, groupLimit: Int = 1024) {
        self.byteLimit = byteLimit
        self.groupLimit = groupLimit
    }

    /// A plain read's inspection of the group: the one kept while its files are unchanged, else
    /// `reader`'s (kept for next time when it can be).
    func inspect(with reader: FeedReader) -> FeedReader.Inspection { inspectKeeping(with: reader).0 }

    /// The same, with the served payload's document when one was kept with it.
    func inspectKeeping(with reader: FeedReader) -> (FeedReader.Inspection, JSONDocument?) {
        if let kept = known(reader.layout, fileSystem: reader.fileSystem) { return (kept.inspection, kept.document) }
        // Before the pointer is read: a switch after this status is seen by the next check.
        let pointerStatus = reader.fileSystem.status(reader.layout.pointer)
        let inspection = reader.inspect(schemaVersion: nil)
        remember(inspection, of: reader.layout, pointerStatus: pointerStatus, fileSystem: reader.fileSystem)
        return (inspection, nil)
    }

    /// The inspection kept for the group, when every file it came from still has its status.
    func inspection(of layout: GroupLayout, fileSystem: any FileSystem) -> FeedReader.Inspection? {
        known(layout, fileSystem: fileSystem)?.inspection
    }

    private func known(_ layout: GroupLayout, fileSystem: any FileSystem) -> Known? {
        guard let known = touch(layout.directory) else { return nil }
        guard known.probes.allSatisfy({ fileSystem.status($0.path) == $0.status }) else {
            forget(layout.directory)
            return nil
        }
        return known
    }

    /// Keeps `inspection` (and the served payload's `document`, when given) when the pointer's
    /// `current` answered it, with the statuses of the files it came from: `pointerStatus` as taken
    /// before the pointer was read, the rest now.
    func remember(
        _ inspection: FeedReader.Inspection, document: JSONDocument? = nil, of layout: GroupLayout,
        pointerStatus: FileStatus?, fileSystem: any FileSystem
    ) {
        // The document shares the payload's bytes and adds its tape.
        let bytes = document?.footprint ?? inspection.read.served?.compactPayload.count ?? 0
        guard let served = inspection.read.served, !inspection.read.isFallback, inspection.pointed.first == served.id,
            let pointerStatus, bytes <= byteLimit / 4
        else { return forget(layout.directory) }
        let files = [layout.envelope(served.id)] + served.assets.map { layout.asset(served.id, $0.name) }
        var probes = [ChangeToken.Probe(path: layout.pointer, status: pointerStatus)]
        for path in files {
            guard let status = fileSystem.status(path) else { return forget(layout.directory) }
            probes.append(ChangeToken.Probe(path: path, status: status))
        }
        let known = Known(inspection: inspection, document: document, probes: probes, payloadBytes: bytes, lastUse: 0)
        store(known, for: layout.directory)
    }

    /// Forgets what is kept for the group (its files changed, or a read there could not be kept).
    func forget(_ directory: String) {
        state.withLock { state in
            guard let old = state.known.removeValue(forKey: directory) else { return }
            state.payloadBytes -= old.payloadBytes
        }
    }

    /// Payload bytes kept now (for tests and the memory accounting).
    var payloadBytes: Int { state.withLock { $0.payloadBytes } }

    private func touch(_ directory: String) -> Known? {
        state.withLock { state in
            guard state.known[directory] != nil else { return nil }
            state.uses &+= 1
            state.known[directory]?.lastUse = state.uses
            return state.known[directory]
        }
    }

    private func store(_ entry: Known, for directory: String) {
        state.withLock { state in
            if let old = state.known.removeValue(forKey: directory) { state.payloadBytes -= old.payloadBytes }
            while !state.known.isEmpty,
                state.known.count >= groupLimit || state.payloadBytes + entry.payloadBytes > byteLimit
            {
                // A linear scan: evictions are rare (a full memo of many groups), lookups are not.
                guard let oldest = state.known.min(by: { $0.value.lastUse < $1.value.lastUse }) else { break }
                state.payloadBytes -= oldest.value.payloadBytes
                state.known.removeValue(forKey: oldest.key)
            }
            state.uses &+= 1
            var entry = entry
            entry.lastUse = state.uses
            state.known[directory] = entry
            state.payloadBytes += entry.payloadBytes
        }
    }
}
