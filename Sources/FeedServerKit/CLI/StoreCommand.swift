import FeedImaging
import FeedStore
import HTTPTransport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `feed-server publish|lint|read|export`: the store without the server, for fixtures in CI and
/// a Simulator's App Group folder. Each runs the code the HTTP routes run (the seed reader, the
/// archive unpacker, the asset budget, the publish with its group lock, the reader, the archive
/// writer) and prints what the route answers, so a running server on the same root and a
/// command never disagree.
enum StoreCommand {
    /// The commands.
    enum Name: String, CaseIterable, Equatable {
        case publish, lint, read, export
    }

    /// Done as asked.
    static let succeeded: Int32 = 0
    /// A publish refused, warnings under `--strict`, no feed to read or export.
    static let refused: Int32 = 1
    /// A command-line mistake, or a root or image library that cannot be used.
    static let usage: Int32 = 2

    /// Runs the command the first argument names; nil when it names none (the server's arguments).
    static func run(arguments: [String], environment: [String: String]) -> Int32? {
        guard let first = arguments.first, let name = Name(rawValue: first) else { return nil }
        let options: StoreCommandOptions
        do {
            switch try StoreCommandOptions.parse(name, Array(arguments.dropFirst()), environment: environment) {
            case .help:
                Output.write(Array((name.helpText + "\n").utf8))
                return succeeded
            case .run(let parsed): options = parsed
            }
        } catch {
            say(name, error.description)
            return usage
        }
        switch name {
        case .publish: return publish(options)
        case .lint: return lint(options)
        case .read: return read(options)
        case .export: return export(options)
        }
    }

    // MARK: publish and lint

    private static func publish(_ options: StoreCommandOptions) -> Int32 {
        let group = options.operands[0]
        guard let source = operands(options, group: group, path: options.operands[1]),
            let encoder = imageEncoder(options)
        else { return usage }
        let store = FeedStore(root: options.server.root, configuration: options.server.storeConfiguration)
        do {
            try Server.prepareRoot(of: store)
        } catch {
            say(options.name, error.description)
            return usage
        }
        let shown = "group '\(LogSafe.name(group))'"
        let journal = serverJournal(options)
        var sentPayload: [UInt8]?
        do {
            let (upload, schemaVersion) = try source.upload(
                limits: options.server, images: options.images, encoder: encoder, threads: threads)
            sentPayload = upload.payload
            let committer = PublishCommit(store: store, lint: FeedLint(androidScreen: options.server.androidScreen))
            let warnings = committer.warnings(upload, group: group)
            SeedLog.warnings(warnings, prefix: "feed-server publish: \(shown)")
            let version = options.schemaVersion ?? schemaVersion ?? 1
            let committed = try committer.commit(
                group: group, upload: upload, schemaVersion: version, strict: options.strict, warnings: warnings)
            journal?.record(
                kind: .publish, group: group, client: "cli",
                facts: committed.journalFacts(schemaVersion: version, payload: upload.payload))
            Output.write(PublishCommit.answer(group: group, committed, packing: upload.packing))
            let result = committed.result
            say(
                options.name,
                result.changed ? "\(shown) published generation \(result.generationId)" : "\(shown) unchanged")
            return succeeded
        } catch {
            if SafeName.isGroupName(group) {
                journal?.record(
                    kind: .publish, group: group, client: "cli",
                    facts: JournalFacts(
                        result: "refused", warnings: WriteJournal.warningCodes(error),
                        payload: sentPayload.map(JournalPayload.sent)),
                    problem: String(error.type))
            }
            return refuse(options.name, error, source: source, shown: shown)
        }
    }

    /// The journal a server keeps on this root, when there is one: the CLI never makes one (a
    /// Simulator's App Group container gets the feed's folder and nothing else).
    private static func serverJournal(_ options: StoreCommandOptions) -> WriteJournal? {
        let journal = JournalFile(root: options.server.root)
        guard options.server.journal, PosixFileSystem().status(journal.directory)?.kind == .directory else {
            return nil
        }
        return WriteJournal(file: journal)
    }

    private static func lint(_ options: StoreCommandOptions) -> Int32 {
        let operand = options.operands[0]
        guard let source = operands(options, group: nil, path: operand), let encoder = imageEncoder(options) else {
            return usage
        }
        let limits = options.server.storeConfiguration.payloadLimits
        // Named in every line: a loop over fixtures sends stdout elsewhere and reads only these.
        let shown = "'\(LogSafe.name(operand))'"
        let upload: AssetUpload
        do {
            upload = try source.upload(
                limits: options.server, images: options.images, encoder: encoder, threads: threads
            )
            .upload
            try requireJSON(upload.payload, limits: limits)
        } catch {
            return refuse(options.name, error, source: source, shown: shown)
        }
        let lint = FeedLint(androidScreen: options.server.androidScreen)
        let report = PublishLint.warnings(
            payload: upload.payload, packing: upload.packing, lint: lint, limits: limits, profile: upload.profile)
        SeedLog.warnings(report, prefix: "feed-server lint: \(shown)")
        let members =
            [JSONMember("skipped", AssetUpload.skippedJSON(upload.packing.skipped))] + PublishLint.members(report)
        Output.write(CompactJSON.bytes(.object(members)) + [0x0A])
        say(options.name, report.isEmpty ? "\(shown): no warnings" : "\(shown): \(report.total) warning(s)")
        return options.strict && !report.isEmpty ? refused : succeeded
    }

    /// What the store would refuse, lint refuses: a feed that cannot publish is worse than a warning.
    private static func requireJSON(_ payload: [UInt8], limits: JSONLimits) throws(Problem) {
        do { _ = try CompactJSON.canonicalize(payload, limits: limits) } catch {
            throw Problem(PublishError.invalidPayload(error))
        }
    }

    /// The GROUP (when the command takes one) and PATH operands checked; nil when either is
    /// unusable, after saying why.
    private static func operands(_ options: StoreCommandOptions, group: String?, path: String) -> FeedSource? {
        if let group, let reason = SafeName.groupProblem(with: group) {
            say(options.name, "GROUP '\(LogSafe.name(group))' \(reason)")
            return nil
        }
        do { return try FeedSource.resolve(path) } catch {
            say(options.name, error.description)
            return nil
        }
    }

    private static func imageEncoder(_ options: StoreCommandOptions) -> VipsImageEncoder? {
        do { return try VipsImageEncoder(maxPixels: options.server.maxImagePixels) } catch {
            say(options.name, "\(error)")
            return nil
        }
    }

    /// Images are packed on every core, as the server packs them.
    private static var threads: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// A refused publish or lint: the problem document on stdout (what the route answers), one
    /// line on stderr naming what was refused (`shown`), exit status 1.
    private static func refuse(_ name: Name, _ problem: Problem, source: FeedSource, shown: String) -> Int32 {
        Output.write(problem.body)
        var line = "\(shown) refused (\(problem.status) \(problem.type)): \(problem.detail)"
        if problem.type == "assets-rejected", source.kind == .archive {
            line += " (--images pack packs a tar's images under the budget instead)"
        }
        say(name, line)
        return refused
    }

    // MARK: read and export

    private static func read(_ options: StoreCommandOptions) -> Int32 {
        guard let (store, group) = existingGroup(options) else { return usage }
        let read = store.read(group: group, schemaVersion: options.schemaVersion)
        var output = Array("{\"group\":".utf8)
        CompactJSON.writeString(group, to: &output)
        output += Array(",\"served\":".utf8)
        if let served = read.served {
            output += FeedRendering.body(group: group, generation: served).bytes.dropLast()  // its newline
        } else {
            output += Array("null".utf8)
        }
        output += Array(",\"skipped\":".utf8) + CompactJSON.bytes(FaultRoutes.skippedJSON(read)) + Array("}\n".utf8)
        Output.write(output)
        guard read.served != nil else {
            say(options.name, Problem.noFeed(group: group, schemaVersion: options.schemaVersion, read: read).detail)
            return refused
        }
        return succeeded
    }

    private static func export(_ options: StoreCommandOptions) -> Int32 {
        guard isatty(STDOUT_FILENO) == 0 else {
            say(options.name, "the tar goes to stdout, which is a terminal: redirect it (> GROUP.tar) or pipe it")
            return usage
        }
        guard let (store, group) = existingGroup(options) else { return usage }
        guard let generation = store.read(group: group, schemaVersion: options.schemaVersion).served else {
            say(options.name, Problem.nothingToExport(group: group).detail)
            return refused
        }
        do {
            try GenerationArchive(store: store, group: group, generation: generation).write { try Output.write($0) }
        } catch {
            say(
                options.name, "generation \(generation.id) not written whole: \(GenerationArchive.failureReason(error))"
            )
            return refused
        }
        return succeeded
    }

    /// The store of an existing root and the GROUP operand; nil after saying why not. A read
    /// creates nothing, so a mistyped root is said as such rather than read as an empty one.
    private static func existingGroup(_ options: StoreCommandOptions) -> (FeedStore, String)? {
        let group = options.operands[0]
        if let reason = SafeName.groupProblem(with: group) {
            say(options.name, "GROUP '\(LogSafe.name(group))' \(reason)")
            return nil
        }
        let root = options.server.root
        guard PosixFileSystem().status(root)?.kind == .directory || realpathIsFolder(root) else {
            say(options.name, "root folder '\(LogSafe.name(root))' does not exist or is not a folder")
            return nil
        }
        return (FeedStore(root: root, configuration: options.server.storeConfiguration), group)
    }

    /// Whether `path` leads to a folder once its links are followed (a root may be a link).
    private static func realpathIsFolder(_ path: String) -> Bool {
        guard let resolved = realpath(path, nil) else { return false }
        defer { free(resolved) }
        return PosixFileSystem().status(String(cString: resolved))?.kind == .directory
    }

    /// One line on stderr, made safe as the seed log's are (it may quote names and payload text).
    private static func say(_ name: Name, _ text: String) { SeedLog.message("feed-server \(name.rawValue): \(text)") }
}

/// Standard output, written whole through `write(2)`, never through a buffer that could hold
/// back or reorder a JSON answer or a tar.
enum Output {
    /// Why stdout took no more (a closed pipe with SIGPIPE ignored, a full disk).
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Writes `bytes`, ignoring a failure (the exit status says what the command did).
    static func write(_ bytes: [UInt8]) { try? bytes.withUnsafeBytes { try write($0) } }

    /// Writes every byte of `buffer`.
    static func write(_ buffer: UnsafeRawBufferPointer) throws(Failure) {
        var offset = 0
        while offset < buffer.count {
            let written = writeToStandardOutput(buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { throw Failure(description: "stdout: \(String(cString: strerror(errno)))") }
            offset += written
        }
    }
}

/// `write(2)` to stdout, outside `Output`, whose own `write` would shadow it.
private func writeToStandardOutput(_ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(STDOUT_FILENO, bytes, count)
}
