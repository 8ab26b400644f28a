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

    private var reader: FeedReader {
        FeedReader(fileSystem: fileSystem, layout: layout, maxEnvelopeBytes: configuration.maxEnvelopeBytes)
    }

    /// A prepared publish: everything computed, nothing written yet.
    struct Draft {
        var schemaVersion: Int
        var compactPayload: [UInt8]
        var assets: [AssetInput]
        var assetLines: [Fingerprint.AssetLine]
        var fingerprint: String
    }

    /// Publishes the draft unless the served feed already has its fingerprint.
    func publish(_ draft: Draft) throws(PublishError) -> PublishResult {
        // Checked without the lock first so that an unchanged publish writes nothing at all,
        // not even the lock file; answering from this snapshot is linearisable.
        if let served = reader.read(schemaVersion: nil).served, served.fingerprint == draft.fingerprint {
            return .unchanged(generationId: served.id, fingerprint: served.fingerprint)
        }
        do {
            try prepareGroupFolders()
            let lock = try fileSystem.lockExclusive(layout.lockFile)
            defer { lock.unlock() }
            return try publishLocked(draft)
        } catch let error as FileSystemError {
            throw .storage(error)
        } catch {
            throw .storage(FileSystemError(kind: .other, operation: "publish", path: layout.directory))
        }
    }

    private func publishLocked(_ draft: Draft) throws -> PublishResult {
        let current = reader.read(schemaVersion: nil)
        if let served = current.served, served.fingerprint == draft.fingerprint {
            return .unchanged(generationId: served.id, fingerprint: served.fingerprint)
        }
        let oldCandidates = reader.candidates().ids
        let oldPointerIDs = reader.pointedIDs()
        let id = GenerationID.make(epochMs: try nextEpochMs(), fingerprint: draft.fingerprint)
        let envelope = Envelope(
            schemaVersion: draft.schemaVersion, generatedAtEpochMs: GenerationID.epochMs(of: id)!,
            fingerprint: draft.fingerprint, compactPayload: draft.compactPayload, assets: draft.assetLines)
        try writeGeneration(id, envelope: envelope, assets: draft.assets)
        let pointer = Pointer(current: id, previous: keptPrevious(from: oldCandidates, excluding: id))
        do {
            try writePointer(pointer)
        } catch {
            try? fileSystem.removeTree(layout.generation(id))
            throw error
        }
        applyRetention(pointer: pointer, retiring: oldPointerIDs)
        return .published(generationId: id, fingerprint: draft.fingerprint, assetBytes: draft.assets.reduce(0) { $0 + $1.bytes.count })
    }

    private func prepareGroupFolders() throws {
        if try fileSystem.ensureDirectory(root) { try syncParent(of: root) }
        if try fileSystem.ensureDirectory(layout.directory) { try fileSystem.syncDirectory(root) }
        if try fileSystem.ensureDirectory(layout.generations) { try fileSystem.syncDirectory(layout.directory) }
    }

    private func syncParent(of path: String) throws {
        let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
        guard let slash = trimmed.lastIndex(of: "/") else { return try fileSystem.syncDirectory(".") }
        try fileSystem.syncDirectory(slash == trimmed.startIndex ? "/" : String(trimmed[..<slash]))
    }

    /// Milliseconds for the new id: now, but always after every existing generation so that
    /// "name descending" stays "newest first" even if the clock steps back.
    private func nextEpochMs() throws -> Int64 {
        let now = clock.nowEpochMs()
        guard let newest = try fileSystem.listDirectory(layout.generations)
            .compactMap({ GenerationID.epochMs(of: $0.name) }).max() else { return now }
        return max(now, newest + 1)
    }

    private func writeGeneration(_ id: String, envelope: Envelope, assets: [AssetInput]) throws {
        let temporary = layout.temporaryGeneration(id)
        try fileSystem.removeTree(temporary)
        try fileSystem.createDirectory(temporary)
        do {
            if !assets.isEmpty {
                let assetsFolder = temporary + "/assets"
                try fileSystem.createDirectory(assetsFolder)
                for asset in assets {
                    try fileSystem.writeFileDurably(assetsFolder + "/" + asset.name, contents: asset.bytes)
                }
                try fileSystem.syncDirectory(assetsFolder)
            }
            try fileSystem.writeFileDurably(temporary + "/feed.json", contents: envelope.encoded())
            try fileSystem.syncDirectory(temporary)
            try fileSystem.rename(temporary, to: layout.generation(id))
        } catch {
            try? fileSystem.removeTree(temporary)
            throw error
        }
        try fileSystem.syncDirectory(layout.generations)
    }

    private func writePointer(_ pointer: Pointer) throws {
        let temporary = layout.pointerTemporary
        try fileSystem.removeTree(temporary)
        do {
            try fileSystem.writeFileDurably(temporary, contents: pointer.encoded())
            try fileSystem.rename(temporary, to: layout.pointer)
        } catch {
            try? fileSystem.removeTree(temporary)
            throw error
        }
        try fileSystem.syncDirectory(layout.directory)
    }

    /// The readable generations (any schema) the old order offered, newest first, up to `keepPrevious`.
    private func keptPrevious(from candidates: [String], excluding newID: String) -> [String] {
        var kept: [String] = []
        for id in candidates where id != newID && kept.count < configuration.keepPrevious {
            if case .success = reader.load(id, schemaVersion: nil) { kept.append(id) }
        }
        return kept
    }

    /// Marks generations that just left the pointer as retired now, then removes stray `.tmp`
    /// folders and unreferenced generations retired longer than the grace period ago.
    /// Failures here do not fail the publish (it is already durable); they are retried next time.
    private func applyRetention(pointer: Pointer, retiring previousIDs: [String]) {
        let referenced: Set<String> = Set([pointer.current] + pointer.previous)
        for id in previousIDs where !referenced.contains(id) && SafeName.isSafe(id) {
            if fileSystem.status(layout.generation(id))?.kind == .directory {
                try? fileSystem.touch(layout.generation(id))
            }
        }
        let now = clock.nowEpochMs()
        for entry in (try? fileSystem.listDirectory(layout.generations)) ?? [] where entry.isDirectory {
            let path = layout.generations + "/" + entry.name
            if entry.name.hasSuffix(GenerationID.temporarySuffix) {
                try? fileSystem.removeTree(path)
            } else if !referenced.contains(entry.name), let info = fileSystem.status(path),
                      now - info.modificationNanos / 1_000_000 >= configuration.gracePeriodMs {
                try? fileSystem.removeTree(path)
            }
        }
    }
}
