#if canImport(CryptoKit)
import CryptoKit
#else
import CLibCrypto
#endif

/// SHA-256 digests: OpenSSL's libcrypto on Linux, CryptoKit where it exists.
public enum SHA256Hash {
    /// The 32-byte SHA-256 digest of `bytes`.
    public static func digest<Bytes: Collection>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var hasher = SHA256Hasher()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The lowercase hex SHA-256 of `bytes`.
    public static func hex<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        HexEncoding.lowercase(digest(bytes))
    }

    /// Whether `text` has the shape of `hex`'s output: 64 lowercase hex digits.
    public static func isHex(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}

/// Incremental SHA-256 (for hashing the fingerprint text piece by piece).
public struct SHA256Hasher: ~Copyable {
    #if canImport(CryptoKit)
    private var state = CryptoKit.SHA256()
    #else
    private let context = EVPDigestContext()
    #endif

    /// Starts a new digest.
    public init() {}

    /// Feeds bytes into the digest.
    public mutating func update<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            feed(UnsafeRawBufferPointer(buffer))
        }
        if done == nil {
            Array(bytes).withUnsafeBytes { feed($0) }
        }
    }

    /// Finishes the digest and returns its 32 bytes.
    public mutating func finalize() -> [UInt8] {
        #if canImport(CryptoKit)
        return Array(state.finalize())
        #else
        return context.finalize()
        #endif
    }

    private mutating func feed(_ buffer: UnsafeRawBufferPointer) {
        #if canImport(CryptoKit)
        state.update(bufferPointer: buffer)
        #else
        context.update(buffer)
        #endif
    }
}

#if !canImport(CryptoKit)
/// Owns one OpenSSL `EVP_MD_CTX` set up for SHA-256 (`EVP_MD_CTX_new`, freed in deinit).
final class EVPDigestContext {
    private let context: OpaquePointer

    /// SHA-256 from the default provider, fetched once: `EVP_sha256()` would be fetched again on
    /// every init, under OpenSSL's method-store lock. OpenSSL is first told not to clean up at
    /// exit: its `atexit` handler frees the library's state while other threads may still hash,
    /// and deletes the per-thread keys, so the error state of a thread ending at that moment is
    /// never freed (LeakSanitizer saw it). What is left at exit stays referenced and is unmapped
    /// with the process. A fetched method is immutable and shared across threads by design.
    nonisolated(unsafe) private static let sha256: OpaquePointer? = {
        _ = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
        return EVP_MD_fetch(nil, "SHA256", nil)
    }()

    init() {
        let method = Self.sha256 ?? EVP_sha256()  // first: OpenSSL initialised before any other call
        // Allocation failure here means the process is out of memory; there is no recovery.
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new returned NULL") }
        self.context = context
        guard EVP_DigestInit_ex(context, method, nil) == 1 else {
            fatalError("EVP_DigestInit_ex(SHA-256) failed")
        }
    }

    /// Wraps `EVP_DigestUpdate`.
    func update(_ buffer: UnsafeRawBufferPointer) {
        guard buffer.count > 0 else { return }
        EVP_DigestUpdate(context, buffer.baseAddress, buffer.count)
    }

    /// Wraps `EVP_DigestFinal_ex`.
    func finalize() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return Array(digest.prefix(Int(length)))
    }

    deinit { EVP_MD_CTX_free(context) }
}
#endif

/// Lowercase hexadecimal text for bytes.
public enum HexEncoding {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as lowercase hex, two characters per byte.
    public static func lowercase(_ bytes: [UInt8]) -> String {
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
