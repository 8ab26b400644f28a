import ConcurrencyPrimitives
import FeedStore
import HTTPTransport

#if canImport(Glibc)
import Glibc
#endif

#if os(Linux)
/// `--watch`: republishes a seed group when its files change. inotify watches the seed folder,
/// each group folder and each `assets/` folder; changes are collected until the folder has been
/// quiet for `debounceMillis` (an editor's save is several events), then each changed group is
/// republished on this watcher's own thread, never on libmicrohttpd's. A broken edit is logged
/// and the last good feed stays served (the publish is refused before anything is written).
///
/// Owns the inotify descriptor and a wake-up pipe (made in init, closed in deinit).
final class SeedWatcher: @unchecked Sendable {
    private let publisher: SeedPublisher
    private let debounceMillis: Int32
    private let inotify: Int32
    /// `stop` writes to `wake[1]`; the loop polls `wake[0]`.
    private let wake: (Int32, Int32)
    /// Watch descriptor → what it watches. Touched only by the watcher thread after `start`.
    private var watched: [Int32: Watched] = [:]
    private let finished = ConditionLock()
    /// Under `finished`: whether the thread runs, and whether `stop` asked it to end.
    private var running = false
    private var stopRequested = false
    /// The seed folder itself was moved or deleted: every watch is dropped and the path is tried
    /// again every `rootRetryMillis` until a folder is there again (an editor or a `git checkout`
    /// may replace the whole folder).
    private var rootLost = false
    private static let rootRetryMillis: Int64 = 500

    private enum Watched: Equatable {
        case root
        case group(String)
        case assets(String)
    }

    private static let mask = UInt32(
        IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_MODIFY | IN_DELETE_SELF
            | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)

    /// A watcher over the publisher's folder; `start` begins watching.
    init(publisher: SeedPublisher, debounceMillis: Int32 = 200) throws {
        self.publisher = publisher
        self.debounceMillis = debounceMillis
        let descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard descriptor >= 0 else {
            throw Server.StartError(
                description: "--watch: inotify is not available (\(String(cString: strerror(errno))))")
        }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            close(descriptor)
            throw Server.StartError(description: "--watch: cannot make a pipe (\(String(cString: strerror(errno))))")
        }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        inotify = descriptor
        wake = (ends[0], ends[1])
        guard add(publisher.folder.path, as: .root) else {
            throw Server.StartError(
                description: "--watch: the seed folder cannot be watched (\(String(cString: strerror(errno))))")
        }
        for group in (try? publisher.folder.groups()) ?? [] { watchGroup(group) }
    }

    deinit {
        close(inotify)
        close(wake.0)
        close(wake.1)
    }

    /// Starts the watching thread.
    func start() throws(ThreadStartError) {
        finished.withLock { running = true }
        do {
            try startThread()
        } catch {
            finished.withLock { running = false }
            throw error
        }
    }

    private func startThread() throws(ThreadStartError) {
        try DetachedThread.start(name: "feed-seed-watch") { [self] in
            run()
            finished.withLock {
                running = false
                finished.broadcast()
            }
        }
    }

    /// Asks the thread to stop and waits for it to end, until `deadlineNanos` (monotonic) at
    /// the latest: shutdown never waits longer for a republish in progress (a publish is
    /// written aside and switched to by one rename, so one cut short by the exit leaves the
    /// served feed whole). No group is republished after this is called.
    func stop(until deadlineNanos: Int64) {
        finished.withLock { stopRequested = true }
        var byte: UInt8 = 1
        _ = write(wake.1, &byte, 1)
        // An idle watcher ends within moments of the wake-up: give it those even when the
        // deadline has passed already, so only a republish really in progress is left running.
        let deadline = max(deadlineNanos, MonotonicClock.nanos() + 50_000_000)
        let ended = finished.withLock {
            while running { if !finished.wait(untilNanos: deadline) { break } }
            return !running
        }
        if !ended { SeedLog.message("feed-server: watch: a republish is still running; shutdown does not wait for it") }
    }

    private var isStopRequested: Bool { finished.withLock { stopRequested } }

    private func run() {
        var dirty = Set<String>()
        var quietSince: Int64 = 0
        var descriptors = [
            pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake.0, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            var timeout: Int32 = rootLost ? Int32(Self.rootRetryMillis) : -1
            if !dirty.isEmpty {
                let elapsed = (MonotonicClock.nanos() - quietSince) / 1_000_000
                timeout = Int32(clamping: max(0, Int64(debounceMillis) - elapsed))
            }
            let ready = poll(&descriptors, 2, timeout)
            if ready < 0, errno != EINTR { return }
            if descriptors[1].revents != 0 { return }
            if rootLost, add(publisher.folder.path, as: .root) {
                rootLost = false
                SeedLog.message(
                    "feed-server: watch: the seed folder is there again; watching it and republishing its groups")
                for group in (try? publisher.folder.groups()) ?? [] {
                    watchGroup(group)
                    dirty.insert(group)
                }
                quietSince = MonotonicClock.nanos()
            }
            if descriptors[0].revents != 0 {
                let changed = drainEvents()
                if !changed.isEmpty {
                    dirty.formUnion(changed)
                    quietSince = MonotonicClock.nanos()
                }
                continue
            }
            if !dirty.isEmpty, (MonotonicClock.nanos() - quietSince) / 1_000_000 >= Int64(debounceMillis) {
                for group in dirty.sorted() {
                    guard !isStopRequested else { return }
                    republish(group)
                }
                dirty.removeAll()
            }
        }
    }

    private func republish(_ group: String) {
        let folder = publisher.folder.groupPath(group)
        guard PosixFileSystem().status(folder)?.kind == .directory else {
            SeedLog.message(
                "feed-server: watch: group '\(LogSafe.name(group))' was removed from the seed folder; its feed stays "
                    + "served")
            return
        }
        publisher.publish(group: group, trigger: "watch")
    }

    /// Reads every pending event; returns the groups they touched. New group and `assets/`
    /// folders get watches of their own.
    private func drainEvents() -> Set<String> {
        var groups = Set<String>()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let (descriptor, mask, length) = buffer.withUnsafeBytes { raw in
                    (
                        raw.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                        raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                        Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    )
                }
                let nameEnd = min(count, offset + header + length)
                let name = String(decoding: buffer[(offset + header)..<nameEnd].prefix { $0 != 0 }, as: UTF8.self)
                offset = nameEnd
                if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    // Events were lost: everything may have changed.
                    for group in (try? publisher.folder.groups()) ?? [] {
                        watchGroup(group)
                        groups.insert(group)
                    }
                    continue
                }
                if watched[descriptor] == .root, mask & UInt32(IN_MOVE_SELF | IN_DELETE_SELF | IN_IGNORED) != 0 {
                    loseRoot()
                    continue
                }
                if mask & UInt32(IN_IGNORED) != 0 {
                    watched[descriptor] = nil
                    continue
                }
                let isDirectory = mask & UInt32(IN_ISDIR) != 0
                let created = mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0
                switch watched[descriptor] {
                case .root?:
                    guard SeedFolder.isGroupFolder(name) else { continue }
                    if isDirectory, created { watchGroup(name) }
                    if isDirectory { groups.insert(name) }
                case .group(let group)?:
                    if name == "assets", isDirectory, created {
                        _ = add(publisher.folder.groupPath(group) + "/assets", as: .assets(group))
                    }
                    if !name.isEmpty, !SeedFolder.isEditorLeftover(name) { groups.insert(group) }
                case .assets(let group)?:
                    if !SeedFolder.isEditorLeftover(name) { groups.insert(group) }
                case nil:
                    continue
                }
            }
        }
        return groups
    }

    /// Drops every watch (a moved folder's watches would follow it) and starts looking for the
    /// seed folder's path again; the feeds already published stay served.
    private func loseRoot() {
        for descriptor in watched.keys { inotify_rm_watch(inotify, descriptor) }
        watched.removeAll()
        guard !rootLost else { return }
        rootLost = true
        SeedLog.message(
            "feed-server: watch: the seed folder was moved or deleted; its feeds stay served, and it is watched "
                + "again as soon as a folder is back at its path"
        )
    }

    private func watchGroup(_ group: String) {
        let folder = publisher.folder.groupPath(group)
        if add(folder, as: .group(group)) { _ = add(folder + "/assets", as: .assets(group)) }
    }

    /// Adds (or renews) a watch; false when the folder cannot be watched (gone, not a folder).
    private func add(_ path: String, as what: Watched) -> Bool {
        let descriptor = inotify_add_watch(inotify, path, Self.mask)
        guard descriptor >= 0 else { return false }
        watched[descriptor] = what
        return true
    }
}
#else
/// `--watch` elsewhere: inotify is Linux's, and the macOS build is not built or tested here
/// (docs/recipes.md: the container is the verified way on a Mac), so the option says so at start.
final class SeedWatcher: Sendable {
    /// Always throws: there is no watcher on this platform.
    init(publisher: SeedPublisher, debounceMillis: Int32 = 200) throws {
        throw Server.StartError(
            description: "--watch needs inotify (Linux); on a Mac, run the container (docs/recipes.md)")
    }

    /// Never reached.
    func start() {}
    /// Never reached.
    func stop(until deadlineNanos: Int64) {}
}
#endif
