import FeedStore

/// Where the unpacker writes an archive's assets as their data is read, so the caller decides
/// whether a large archive is held in memory or streamed to its own files.
package protocol AssetSpool {
    /// A new, empty file for one asset.
    func makeFile() throws(AssetSpoolError) -> any AssetSpoolFile
}

/// One asset's file, written piece by piece.
package protocol AssetSpoolFile: AnyObject {
    /// Appends bytes.
    func append(_ bytes: UnsafeRawBufferPointer) throws(AssetSpoolError)
    /// Ends the file; the asset as the publisher takes it.
    func finish() throws(AssetSpoolError) -> AssetSource
}

/// Why an asset could not be written, in a few words a client may read (never a path).
package struct AssetSpoolError: Error, Equatable, Sendable {
    /// For example `noSpace`.
    package let reason: String

    /// An error with this reason.
    package init(reason: String) { self.reason = reason }
}

/// Assets kept in memory (the archive's byte limit bounds them); for tests and fuzzing.
package struct MemoryAssetSpool: AssetSpool {
    /// A spool keeping every asset's bytes.
    package init() {}

    /// A new buffer.
    package func makeFile() -> any AssetSpoolFile { Buffer() }

    private final class Buffer: AssetSpoolFile {
        var bytes: [UInt8] = []
        func append(_ piece: UnsafeRawBufferPointer) { bytes.append(contentsOf: piece) }
        func finish() -> AssetSource { .bytes(bytes) }
    }
}
