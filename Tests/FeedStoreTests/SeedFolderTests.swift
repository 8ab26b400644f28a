import FeedStore
import Foundation
import Testing

/// The seed folder's reads when files and folders change under them: at a chosen point (the
/// folder's hook, called just before each component is opened) a file becomes a FIFO or a
/// folder is exchanged for a link with `renameat2`, deterministically instead of by a race.
@Suite struct SeedFolderTests {
    /// A seed folder with one group `g`, and beside it a copy of that group with other contents
    /// that no read of the seed folder may reach.
    final class Scene {
        let scratch = TemporaryDirectory("seedfolder")
        var seed: String { scratch.path + "/seed" }
        var outside: String { scratch.path + "/outside" }

        init() throws {
            for (base, word) in [(seed, "inside"), (outside, "outside")] {
                try write(base + "/g/payload.json", #"{"from":"\#(word)"}"#)
                try write(base + "/g/meta.json", #"{"schemaVersion":\#(word == "inside" ? 2 : 7)}"#)
                try write(base + "/g/assets/a.png", word)
            }
        }

        func write(_ path: String, _ text: String) throws {
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        }

        /// Puts a FIFO where the file `relative` (to the seed folder) was.
        func makeFIFO(_ relative: String) {
            let path = seed + "/" + relative
            unlink(path)
            precondition(mkfifo(path, 0o644) == 0, "mkfifo \(path)")
        }

        /// Exchanges the folder `relative` with a link to its namesake outside, in one step.
        func swapForLink(_ relative: String) throws {
            let link = seed + "/" + relative + ".link"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: outside + "/" + relative)
            try exchange(seed + "/" + relative, link)
        }

        /// Opens every FIFO's write end once, which lets a reader blocked opening it go on.
        func releaseFIFOs(_ relatives: [String]) {
            for relative in relatives {
                let descriptor = open(seed + "/" + relative, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
                if descriptor >= 0 { close(descriptor) }
            }
        }
    }

    /// Runs `action` once, the first time the folder is about to open `relative`.
    final class Trigger: @unchecked Sendable {
        private let lock = NSLock()
        private var pending: (() -> Void)?
        private let relative: String

        init(at relative: String, _ action: @escaping () -> Void) {
            self.relative = relative
            pending = action
        }

        func opening(_ path: String) {
            guard path == relative else { return }
            lock.lock()
            let action = pending
            pending = nil
            lock.unlock()
            action?()
        }
    }

    private func read(_ folder: SeedFolder) -> Result<SeedGroup, SeedError> {
        Result { () throws(SeedError) in
            try folder.read(group: "g", maxPayloadBytes: 1 << 20, maxAssets: 10, maxAssetBytes: 1 << 20)
        }
    }

    /// A file checked as regular and then swapped for a FIFO must not make the read wait for a
    /// writer: the `--watch` thread would hang for good, and shutdown with it. Opened with
    /// `O_NONBLOCK`, the FIFO opens at once and `fstat` refuses it.
    @Test(arguments: ["payload.json", "meta.json", "assets/a.png"])
    func aFileSwappedForAFIFOJustBeforeItIsOpenedIsRefusedWithoutWaiting(_ file: String) throws {
        let scene = try Scene()
        let trigger = Trigger(at: "g/" + file) { scene.makeFIFO("g/" + file) }
        let folder = SeedFolder(path: scene.seed, beforeOpening: { trigger.opening($0) })
        let (result, onTime) = returning(within: 5, release: { scene.releaseFIFOs(["g/" + file]) }) {
            read(folder)
        }
        #expect(onTime, "the read waited on the FIFO until its write end was opened")
        guard case .failure(let error) = result else {
            Issue.record("a FIFO was read as g/\(file)")
            return
        }
        #expect(error.description == "g/\(file) is not a regular file (links are not followed)")
    }

    /// A folder exchanged for a link once it has been opened must not lead a read outside the
    /// seed folder, as a check with `lstat` followed by opens by path would (`O_NOFOLLOW` guards
    /// only a path's last component): reads go through the descriptor of the folder opened
    /// first, which still names the original.
    @Test(arguments: [
        ("g/payload.json", "g"), ("g/meta.json", "g"), ("g/assets", "g"), ("g/assets/a.png", "g"),
        ("g/assets/a.png", "g/assets"),
    ])
    func aFolderExchangedForALinkAfterItWasOpenedIsStillReadItself(_ point: String, _ swapped: String) throws {
        let scene = try Scene()
        let trigger = Trigger(at: point) { try! scene.swapForLink(swapped) }
        let group = try read(SeedFolder(path: scene.seed, beforeOpening: { trigger.opening($0) })).get()
        #expect(String(decoding: group.payload, as: UTF8.self) == #"{"from":"inside"}"#)
        #expect(group.schemaVersion == 2)
        let assets = group.assets.map { asset -> String in
            guard case .bytes(let bytes) = asset.source else { return "(not in memory)" }
            return String(decoding: bytes, as: UTF8.self)
        }
        #expect(assets == ["inside"])
        // The exchange did happen: the path now leads outside.
        let now = try String(contentsOfFile: scene.seed + "/g/payload.json", encoding: .utf8)
        #expect(now.contains(#""outside""#) == (swapped == "g"))
    }

    /// Exchanged before it is opened, the folder is a link by then and is refused as one.
    @Test(arguments: [("g", "g/ is not a folder"), ("g/assets", "g/assets is not a folder")])
    func aFolderExchangedForALinkBeforeItIsOpenedIsRefused(_ swapped: String, _ message: String) throws {
        let scene = try Scene()
        let trigger = Trigger(at: swapped) { try! scene.swapForLink(swapped) }
        let result = read(SeedFolder(path: scene.seed, beforeOpening: { trigger.opening($0) }))
        guard case .failure(let error) = result else {
            Issue.record("read through a link: \(result)")
            return
        }
        #expect(error.description == message)
    }

    /// WidgetBridge's own reader skips hidden entries, so a hidden folder is no scenario of it,
    /// although `.hidden-group` is a safe group name. Hidden entries are not worth a log line
    /// either (`.git`), and a hidden file among the assets is skipped.
    @Test func hiddenFoldersAreNoGroupsAndHiddenAssetsAreSkipped() throws {
        let scene = try Scene()
        try scene.write(scene.seed + "/.hidden-group/payload.json", "{}")
        try scene.write(scene.seed + "/.git/HEAD", "ref: refs/heads/main")
        try scene.write(scene.seed + "/g/assets/.hidden.png", "hidden")
        let folder = SeedFolder(path: scene.seed)
        #expect(try folder.groups() == ["g"])
        #expect(folder.ignoredEntries().isEmpty)
        #expect(!SeedFolder.isGroupFolder(".hidden-group"))
        #expect(SeedFolder.isGroupFolder("g.v2"))
        #expect(try read(folder).get().assets.map(\.name) == ["a.png"])
        #expect(throws: SeedError.self) {
            try folder.read(group: ".hidden-group", maxPayloadBytes: 1 << 20, maxAssets: 10, maxAssetBytes: 1 << 20)
        }
    }

    /// Links, FIFOs, missing files and limits are refused with the texts the log shows.
    @Test func linksFIFOsAndLimitsAreRefusedWithTheirMessages() throws {
        let scene = try Scene()
        let folder = SeedFolder(path: scene.seed)
        func refusal(maxPayloadBytes: Int = 1 << 20, maxAssets: Int = 10) -> String? {
            do {
                _ = try folder.read(
                    group: "g", maxPayloadBytes: maxPayloadBytes, maxAssets: maxAssets, maxAssetBytes: 1 << 20)
                return nil
            } catch { return error.description }
        }
        scene.makeFIFO("g/meta.json")
        #expect(refusal() == "g/meta.json is not a regular file (links are not followed)")
        unlink(scene.seed + "/g/meta.json")
        try FileManager.default.createSymbolicLink(
            atPath: scene.seed + "/g/assets/b.png", withDestinationPath: scene.outside + "/g/assets/a.png")
        #expect(refusal() == "g/assets/b.png is not a regular file (links are not followed)")
        unlink(scene.seed + "/g/assets/b.png")
        #expect(refusal(maxPayloadBytes: 16) == "g/payload.json has 17 bytes; the limit is 16")
        #expect(refusal(maxAssets: 0) == "g/assets holds more than 0 files (--max-parts)")
        unlink(scene.seed + "/g/payload.json")
        #expect(refusal() == "g/payload.json is missing")
        #expect(throws: SeedError.self) { try SeedFolder(path: scene.outside + "/x").groups() }
    }
}

/// With an upload folder, a seed group's assets are copied into it a piece at a time, as a
/// multipart publish's parts are, instead of being read into memory whole.
@Suite struct SeedAssetSpoolTests {
    @Test func assetsAreCopiedIntoTheSpoolAndStillBoundedByTheLimit() throws {
        let scene = try SeedFolderTests.Scene()
        let large = [UInt8]((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try Data(large).write(to: URL(fileURLWithPath: scene.seed + "/g/assets/b.jpg"))
        let area = UploadArea(root: scene.scratch.path)
        try area.prepare()
        let spool = try area.makeFolder()
        let folder = SeedFolder(path: scene.seed)
        let group = try folder.read(
            group: "g", maxPayloadBytes: 1 << 20, maxAssets: 10, maxAssetBytes: 1 << 20, spool: spool)
        #expect(group.assets.map(\.name) == ["a.png", "b.jpg"])
        for asset in group.assets {
            guard case .file(let file) = asset.source else {
                Issue.record("\(asset.name) was read into memory")
                continue
            }
            #expect(file.path.hasPrefix(spool.path + "/"))
            let expected = asset.name == "b.jpg" ? large : Array("inside".utf8)
            #expect(try Array(Data(contentsOf: URL(fileURLWithPath: file.path))) == expected)
            #expect(file.sha256 == SHA256Hash.hex(expected))
        }
        #expect(throws: SeedError.self) {
            try folder.read(group: "g", maxPayloadBytes: 1 << 20, maxAssets: 10, maxAssetBytes: 300_000, spool: spool)
        }
    }
}

/// Names and lines for the seed folder's log (`LogSafe`): nothing in them can end a line.
@Suite struct SeedLogTextTests {
    @Test func namesKeepOnlyPrintableASCIIAndEscapeTheRestAsTheAccessLogDoes() {
        #expect(LogSafe.name("evil\nfeed-server: forged") == "evil%0Afeed-server: forged")
        #expect(LogSafe.name("tab\there\r") == "tab%09here%0D")
        #expect(LogSafe.name("\u{1B}[31mred\u{7F}") == "%1B[31mred%7F")
        #expect(LogSafe.name("caf\u{E9}") == "caf%C3%A9")
        #expect(LogSafe.name("50%0A") == "50%250A", "a literal '%' cannot pass for an escape")
        #expect(LogSafe.name("bad name!") == "bad name!")
    }

    @Test func linesKeepTheirTextAndEscapeWhatBreaksOrDisguisesThem() {
        #expect(LogSafe.line("4000 \u{D7} 3000 \u{2026} ok") == "4000 \u{D7} 3000 \u{2026} ok")
        #expect(LogSafe.line("a\nb\r\u{0}") == "a%0Ab%0D%00")
        #expect(LogSafe.line("next\u{85}line\u{2028}sep\u{2029}") == "next%C2%85line%E2%80%A8sep%E2%80%A9")
        #expect(LogSafe.line("\u{9B}31m \u{202E}txt.exe") == "%C2%9B31m %E2%80%AEtxt.exe")
    }
}

/// Runs `body` on a thread of its own; when it has not returned within `seconds`, calls
/// `release` (which must make it return) and waits for it. Whether it returned on its own.
func returning<T: Sendable>(
    within seconds: Double, release: () -> Void, _ body: @escaping @Sendable () -> T
) -> (T, Bool) {
    let done = DispatchSemaphore(value: 0)
    let box = Box<T>()
    Thread {
        box.value = body()
        done.signal()
    }.start()
    if done.wait(timeout: .now() + seconds) == .success { return (box.value!, true) }
    release()
    done.wait()
    return (box.value!, false)
}

/// A value handed from one thread to another through a semaphore (which orders the accesses).
private final class Box<T>: @unchecked Sendable {
    var value: T?
}

/// `renameat2(RENAME_EXCHANGE)`: swaps two paths in one step. glibc has it; Swift's Glibc
/// module does not declare it, so it is looked up by name.
func exchange(_ first: String, _ second: String) throws {
    typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
    let exchangeFlag: UInt32 = 1 << 1
    guard let symbol = dlsym(nil, "renameat2") else { throw CocoaError(.featureUnsupported) }
    let renameat2 = unsafeBitCast(symbol, to: RenameAt2.self)
    guard renameat2(AT_FDCWD, first, AT_FDCWD, second, exchangeFlag) == 0 else {
        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
}
