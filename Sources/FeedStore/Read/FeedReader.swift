/// The reader rules of format v1 over one group folder. Never throws on corrupt or foreign files.
struct FeedReader {
    let fileSystem: any FileSystem
    let layout: GroupLayout
    let limits: JSONLimits
    /// Whether a generation whose asset files do not match its list is skipped (this server's
    /// rule); false applies WidgetBridge's own rules, which never look at asset files.
    var verifiesAssets = true
    /// What earlier reads learned of `feed.json` files (nil: learn nothing, read every file).
    var memo: EnvelopeMemo?

    /// What one pass over the group saw: the read itself and the ids the pointer named.
    struct Inspection {
        var read: FeedRead
        /// The pointer's ids (current, then previous), in order.
        var pointed: [String]
    }

    /// Applies the reader rules; `schemaVersion` nil accepts any schema (newest readable generation).
    func read(schemaVersion: Int?) -> FeedRead {
        inspect(schemaVersion: schemaVersion).read
    }

    /// Tries candidates in order: `current`, each `previous`, then every non-`.tmp` folder, name
    /// descending, duplicates removed. The folder is listed only when the pointer's candidates
    /// are exhausted, so the usual read costs no directory scan however many generations linger.
    func inspect(schemaVersion: Int?) -> Inspection {
        var pointed: [String] = []
        var pointerProblem: String?
        switch readPointer() {
        case .absent: break
        case .unusable(let reason): pointerProblem = reason
        case .present(let pointer): pointed = [pointer.current] + pointer.previous
        }
        var seen = Set<String>()
        var skipped: [SkippedCandidate] = []
        func attempt(_ ids: [String]) -> Generation? {
            for id in ids where seen.insert(id).inserted {
                switch load(id, schemaVersion: schemaVersion) {
                case .success(let generation): return generation
                case .failure(let reason): skipped.append(SkippedCandidate(id: id, reason: reason))
                }
            }
            return nil
        }
        let served = attempt(pointed) ?? attempt(listedGenerations())
        return Inspection(
            read: FeedRead(served: served, skipped: skipped, pointerProblem: pointerProblem), pointed: pointed)
    }

    /// Every non-`.tmp` generation folder, name descending (String order equals byte order for
    /// ASCII, and only ASCII names are safe ids: others are skipped wherever they sort). Hidden
    /// folders are not listed: WidgetBridge's reader lists with hidden files skipped, so one
    /// named by no pointer is never its feed.
    func listedGenerations() -> [String] {
        let listed = (try? fileSystem.listDirectory(layout.generations)) ?? []
        return
            listed
            .filter {
                $0.isDirectory && !$0.name.hasSuffix(GenerationID.temporarySuffix)
                    && !$0.name.hasPrefix(".")
            }
            .map(\.name)
            .sorted(by: >)
    }

    /// Loads one candidate, or says why it must be skipped.
    func load(_ id: String, schemaVersion: Int?) -> Result<Generation, SkipReason> {
        if let skipped = skipBeforeReading(id, schemaVersion: schemaVersion) { return .failure(skipped) }
        let envelope: Envelope
        switch readEnvelope(id) {
        case .success(let decoded): envelope = decoded
        case .failure(let reason): return .failure(reason)
        }
        let assets: [AssetInfo]
        switch verifiedAssets(id, envelope.summary, schemaVersion: schemaVersion) {
        case .success(let list): assets = list
        case .failure(let reason): return .failure(reason)
        }
        return .success(
            Generation(
                id: id, schemaVersion: envelope.schemaVersion, generatedAtEpochMs: envelope.generatedAtEpochMs,
                fingerprint: envelope.fingerprint, compactPayload: envelope.compactPayload, assets: assets))
    }

    /// Why a candidate is skipped before its `feed.json` is read whole: an unsafe id, no folder,
    /// or what the memo or the file's first bytes already tell.
    private func skipBeforeReading(_ id: String, schemaVersion: Int?) -> SkipReason? {
        guard SafeName.isSafe(id) else { return .unsafeID }
        switch fileSystem.status(layout.generation(id))?.kind {
        case nil: return .missing
        case .directory?: return knownSkip(id, schemaVersion: schemaVersion)
        default: return .notADirectory
        }
    }

    /// The fingerprint a generation's `feed.json` declares, whatever state its assets are in (nil:
    /// no such generation, or its envelope does not decode).
    func declaredFingerprint(_ id: String) -> String? {
        guard SafeName.isSafe(id), case .success(let envelope) = readEnvelope(id) else { return nil }
        return envelope.fingerprint
    }

    /// Why a candidate is skipped, when that is known without reading its `feed.json` whole: the
    /// memo knows the file (unreadable, or another schema), or, for a read that wants a schema
    /// version, the file's first bytes declare another.
    private func knownSkip(_ id: String, schemaVersion: Int?) -> SkipReason? {
        guard let memo else { return nil }
        let path = layout.envelope(id)
        guard let status = fileSystem.status(path) else { return .missing }
        switch memo.value(path, status: status) {
        case .skip(let reason)?:
            return reason
        case let known?:
            if let wanted = schemaVersion, let declared = known.schemaVersion, declared != wanted {
                return .wrongSchema(found: declared, wanted: wanted)
            }
            return nil
        case nil:
            guard let wanted = schemaVersion,
                let prefix = try? fileSystem.readPrefix(path, count: EnvelopeHead.prefixBytes),
                let declared = EnvelopeHead.schemaVersion(in: prefix)
            else { return nil }
            memo.remember(.declared(declared), path, status: status)
            return declared == wanted ? nil : .wrongSchema(found: declared, wanted: wanted)
        }
    }

    private func readEnvelope(_ id: String) -> Result<Envelope, SkipReason> {
        let path = layout.envelope(id)
        let status = memo == nil ? nil : fileSystem.status(path)
        let outcome = decodeEnvelope(id)
        if let memo, let status {
            switch outcome {
            case .success(let envelope):
                memo.remember(.parsed(envelope.summary), path, status: status)
            case .failure(let reason):
                // Only what the content decides: an I/O error may be gone on the next try.
                switch reason {
                case .unparsable, .invalidEnvelope: memo.remember(.skip(reason), path, status: status)
                default: break
                }
            }
        }
        return outcome
    }

    private func decodeEnvelope(_ id: String) -> Result<Envelope, SkipReason> {
        let bytes: [UInt8]
        do {
            bytes = try fileSystem.readFile(layout.envelope(id), limit: limits.maxBytes)
        } catch let error as FileSystemError where error.kind == .notFound {
            return .failure(.missing)
        } catch {
            return .failure(.unreadable("\(error)"))
        }
        do throws(Envelope.DecodeError) {
            return .success(try Envelope.decode(bytes, limits: limits))
        } catch {
            switch error {
            case .unparsable(let parseError): return .failure(.unparsable(parseError.description))
            case .invalid(let detail): return .failure(.invalidEnvelope(detail))
            }
        }
    }

    /// The served generation's summary, what a listing shows, by the reader rules: from the
    /// memo where it knows a candidate's `feed.json`, so a listing reads no payload it has seen.
    func servedSummary() -> (id: String, summary: EnvelopeSummary)? {
        var pointed: [String] = []
        if case .present(let pointer) = readPointer() { pointed = [pointer.current] + pointer.previous }
        var seen = Set<String>()
        for id in pointed + listedGenerations() where seen.insert(id).inserted {
            if let summary = loadSummary(id) { return (id, summary) }
        }
        return nil
    }

    /// A candidate as a listing shows it, by the same rules as `load` but from the memo where it
    /// knows the candidate's `feed.json`: no payload is kept, and one seen is not read again.
    func summary(_ id: String, schemaVersion: Int?) -> Result<GenerationSummary, SkipReason> {
        switch summaryAndAssets(id, schemaVersion: schemaVersion) {
        case .success(let (envelope, assets)):
            return .success(
                GenerationSummary(
                    schemaVersion: envelope.schemaVersion, generatedAtEpochMs: envelope.generatedAtEpochMs,
                    fingerprint: envelope.fingerprint, assets: assets))
        case .failure(let reason):
            return .failure(reason)
        }
    }

    private func loadSummary(_ id: String) -> EnvelopeSummary? {
        try? summaryAndAssets(id, schemaVersion: nil).get().0
    }

    /// A candidate's envelope head and assets by the reader rules, its `feed.json` taken from the
    /// memo while its file status holds, else read (and remembered).
    private func summaryAndAssets(
        _ id: String, schemaVersion: Int?
    ) -> Result<(EnvelopeSummary, [AssetInfo]), SkipReason> {
        if let skipped = skipBeforeReading(id, schemaVersion: schemaVersion) { return .failure(skipped) }
        let path = layout.envelope(id)
        let envelope: EnvelopeSummary
        if let status = fileSystem.status(path), case .parsed(let known)? = memo?.value(path, status: status) {
            envelope = known
        } else {
            switch readEnvelope(id) {
            case .success(let decoded): envelope = decoded.summary
            case .failure(let reason): return .failure(reason)
            }
        }
        return verifiedAssets(id, envelope, schemaVersion: schemaVersion).map { (envelope, $0) }
    }

    /// The assets of a candidate whose envelope decoded, or why it is skipped: another schema
    /// version than `schemaVersion`, or (when this server's rule applies) asset files that do
    /// not match its list.
    private func verifiedAssets(
        _ id: String, _ envelope: EnvelopeSummary, schemaVersion: Int?
    ) -> Result<[AssetInfo], SkipReason> {
        if let wanted = schemaVersion, envelope.schemaVersion != wanted {
            return .failure(.wrongSchema(found: envelope.schemaVersion, wanted: wanted))
        }
        switch assetList(id, stored: envelope.assets) {
        case .success(let list): return .success(list)
        case .failure(let reason) where verifiesAssets: return .failure(reason)
        case .failure: return .success([])
        }
    }

    /// The generation's assets: the envelope's list when it has one (each file checked by size),
    /// otherwise the regular files with safe names in `assets/` (WidgetBridge's own generations).
    private func assetList(_ id: String, stored: [StoredAsset]?) -> Result<[AssetInfo], SkipReason> {
        if let listed = stored {
            var assets: [AssetInfo] = []
            for line in listed {
                guard SafeName.isSafe(line.name),
                    let info = fileSystem.status(layout.asset(id, line.name)),
                    info.kind == .regular, info.size == line.byteCount
                else {
                    return .failure(.incompleteAsset(line.name))
                }
                assets.append(AssetInfo(stored: line))
            }
            return .success(AssetInfo.sortedByName(assets))
        }
        let entries = (try? fileSystem.listDirectory(layout.assets(id))) ?? []
        let assets = entries.compactMap { entry -> AssetInfo? in
            guard !entry.isDirectory, SafeName.isSafe(entry.name),
                let info = fileSystem.status(layout.asset(id, entry.name)), info.kind == .regular
            else { return nil }
            return AssetInfo(name: entry.name, bytes: info.size)
        }
        return .success(AssetInfo.sortedByName(assets))
    }

    enum PointerState {
        case absent
        case unusable(String)
        case present(Pointer)
    }

    func readPointer() -> PointerState {
        do {
            let bytes = try fileSystem.readFile(layout.pointer, limit: limits.maxBytes)
            guard let pointer = Pointer.decode(bytes) else { return .unusable("current.json is not a valid pointer") }
            return .present(pointer)
        } catch let error as FileSystemError where error.kind == .notFound {
            return .absent
        } catch {
            return .unusable("current.json cannot be read: \(error)")
        }
    }

    /// Whether `path` is a real folder.
    static func directoryExists(_ path: String, fileSystem: any FileSystem) -> Bool {
        fileSystem.status(path)?.kind == .directory
    }
}
