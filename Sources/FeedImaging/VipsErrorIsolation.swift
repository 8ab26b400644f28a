import CVips
import FeedStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Gives each failing libvips call its own error text.
///
/// libvips 8.14 keeps one error buffer for the whole process (`vips_error_buffer`), so when two
/// threads fail at once each would read the other's message, or both concatenated. Calls run in
/// parallel holding a shared lock; a call that fails is run once more holding the lock
/// exclusively, with the buffer emptied first, so the text read afterwards is that call's alone.
/// Failures are rare and decoding is deterministic, so the cost is one re-run per failure.
enum VipsErrorIsolation {
    private static let gate = ReadWriteLock()

    /// Runs `attempt` (nil means libvips failed) and returns its result, or throws
    /// "`action` failed: <this call's libvips text>".
    static func run<T>(_ action: String, _ attempt: () -> T?) throws(AssetEncodingError) -> T {
        if let result = gate.shared(attempt) { return result }
        let retried: Result<T, AssetEncodingError> = gate.exclusive {
            CVips_clear_error()
            if let result = attempt() { return .success(result) }  // it worked the second time
            return .failure(AssetEncodingError("\(action) failed: \(takeError())"))
        }
        return try retried.get()
    }

    /// Runs a call whose failure needs no text (header probes): only keeps the buffer from
    /// being read while a failure is being diagnosed.
    static func runQuietly<T>(_ attempt: () -> T) -> T { gate.shared(attempt) }

    /// libvips' error buffer as text, cleared; call only holding the gate exclusively.
    private static func takeError() -> String {
        guard let text = CVips_take_error() else { return "unknown libvips error" }
        defer { CVips_free_string(text) }
        let message = String(cString: text)
        return message.isEmpty ? "unknown libvips error" : message
    }
}

/// Owns one `pthread_rwlock_t` (initialised in init, destroyed in deinit).
final class ReadWriteLock: @unchecked Sendable {
    // pthread locks must not move: the lock lives in its own allocation.
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)

    init() {
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        #if canImport(Glibc)
        // glibc prefers readers by default: a failing call could then wait for an exclusive turn
        // for as long as other images keep decoding. No caller takes the lock recursively.
        pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        #endif
        pthread_rwlock_init(lock, &attributes)
        pthread_rwlockattr_destroy(&attributes)
    }

    /// Runs `body` holding the lock shared (`pthread_rwlock_rdlock`).
    func shared<T>(_ body: () throws -> T) rethrows -> T {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    /// Runs `body` holding the lock exclusively (`pthread_rwlock_wrlock`).
    func exclusive<T>(_ body: () throws -> T) rethrows -> T {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }
}
