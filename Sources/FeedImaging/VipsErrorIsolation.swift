import CVips
import ConcurrencyPrimitives
import FeedStore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Gives each failing libvips call its own error text.
///
/// libvips 8.14 keeps one error buffer for the whole process (`vips_error_buffer`), so when two
/// threads fail at once each would read the other's message, or both concatenated. Calls run in
/// parallel holding a shared lock; a call that fails is run again holding the lock exclusively,
/// with the buffer emptied first, so the text read afterwards is that call's alone, unless a
/// header probe (which does not wait for the lock) ran meanwhile: then it is run once more, at
/// most three times in all, and the last text is kept. Failures are rare and decoding is
/// deterministic, so the cost is one re-run per failure, three at most.
enum VipsErrorIsolation {
    private static let gate = ReadWriteLock()

    /// Runs `attempt` (nil means libvips failed) and returns its result, or throws
    /// "`action` failed: <libvips' text>" (this call's, unless probes ran beside all three runs).
    static func run<T>(_ action: String, _ attempt: () -> T?) throws(AssetEncodingError) -> T {
        if let result = gate.shared(attempt) { return result }
        let retried: Result<T, AssetEncodingError> = gate.exclusive {
            var text = ""
            // A header probe that did not wait for the gate may add its own text meanwhile: the
            // diagnosis runs again (at most three times in all) until no probe ran beside it.
            for _ in 0..<3 {
                let started = unguardedProbesStarted.load(ordering: .sequentiallyConsistent)
                let running = unguardedProbesRunning.load(ordering: .sequentiallyConsistent)
                CVips_clear_error()
                if let result = attempt() { return .success(result) }  // it worked the second time
                text = takeError()
                let alone = running == 0 && unguardedProbesStarted.load(ordering: .sequentiallyConsistent) == started
                if alone { break }
            }
            return .failure(AssetEncodingError("\(action) failed: \(text)", isServerFault: isServerFault(text)))
        }
        return try retried.get()
    }

    /// Runs a call whose failure needs no text: only keeps the buffer from being read while a
    /// failure is being diagnosed.
    static func runQuietly<T>(_ attempt: () -> T) -> T { gate.shared(attempt) }

    /// Runs a header probe, keeping the buffer from being read meanwhile when that needs no
    /// wait. A failure being diagnosed holds the gate for a whole decode on a lowered image
    /// thread; a probe from a publish or a read does not wait for it. A probe meanwhile may add
    /// its text to that diagnosis's, or empty the buffer (a lookup of a buffer's format does), so
    /// the diagnosis is made again, at most three times; file names are cut to their last
    /// component, so even a text kept then names no server path.
    static func runProbe<T>(_ attempt: () -> T) -> T {
        if let result = gate.sharedIfFree(attempt) { return result }
        // Counted running before started, and read by a diagnosis in the other order, so a probe
        // that may write into the buffer during a diagnosis is always seen by it.
        unguardedProbesRunning.add(1, ordering: .sequentiallyConsistent)
        unguardedProbesStarted.add(1, ordering: .sequentiallyConsistent)
        defer { unguardedProbesRunning.subtract(1, ordering: .sequentiallyConsistent) }
        return attempt()
    }

    /// Header probes that ran without the gate, ever.
    private static let unguardedProbesStarted = Atomic<Int>(0)
    /// Header probes running without the gate now.
    private static let unguardedProbesRunning = Atomic<Int>(0)

    /// Whether libvips' text says the process ran out of threads or memory (libvips 8.14 words
    /// from `vips_g_thread_new`, GLib's `g_thread_try_new`, `vips_tracked_malloc` and its calloc,
    /// libjpeg's "Insufficient memory", libwebp's `VP8_STATUS_OUT_OF_MEMORY`), not that the image
    /// is bad.
    static func isServerFault(_ text: String) -> Bool {
        let lower = text.lowercased()
        let phrases = [
            "unable to create thread", "error creating thread", "out of memory", "insufficient memory",
            "unable to calloc", "unable to allocate", "out_of_memory",
        ]
        return phrases.contains { lower.contains($0) }
    }

    /// libvips' error buffer as text, cleared; call only holding the gate exclusively.
    private static func takeError() -> String {
        guard let text = CVips_take_error() else { return "unknown libvips error" }
        defer { CVips_free_string(text) }
        let message = withoutFolders(String(cString: text))
        return message.isEmpty ? "unknown libvips error" : message
    }

    /// `text` with each quoted absolute path (libvips names a file it cannot load) cut to its
    /// last component: an upload's spool path is the server's, not the client's.
    static func withoutFolders(_ text: String) -> String {
        var pieces = text.split(separator: "\"", omittingEmptySubsequences: false)
        // Odd pieces are quoted (the last one too when its quote is not closed).
        for index in pieces.indices where index % 2 == 1 && pieces[index].first == "/" {
            pieces[index] = pieces[index].split(separator: "/").last ?? ""
        }
        return pieces.joined(separator: "\"")
    }
}
