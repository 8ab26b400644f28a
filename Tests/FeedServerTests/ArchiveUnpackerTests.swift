import FeedArchive
import FeedStore
import HTTPTransport
import Testing

@testable import FeedServerKit

/// Tars whose one asset, `assets/big.png`, declares more than the archive stores, in every form
/// libarchive expands: a 1×1 PNG stored, the rest holes that `archive_read_data` fills with zeros.
enum SparseTar: String, CaseIterable, Sendable {
    /// The measured attack, 4,096 bytes: pax GNU sparse 0.1, a map storing the PNG and ending
    /// 255 MiB later (`GNU.sparse.size=267386880`).
    case pax01
    /// Pax GNU sparse 0.0: the map as `GNU.sparse.offset`/`numbytes` pairs.
    case pax00
    /// Pax GNU sparse 1.0: the map leading the data, the real name in `GNU.sparse.name`.
    case pax10
    /// An old GNU `S` entry: the map and real size in the header itself.
    case oldGNU
    /// `GNU.sparse.size` alone, nothing stored: no map, only the size says so.
    case sizeOnly
    /// `SCHILY.realsize` 2,000 bytes, 65 stored: a trailing hole, within the body's size.
    case realSizePastData
    /// A plain ustar size field of 4,000 bytes in a 3,072-byte archive.
    case sizeFieldPastData

    static let realSize = 267_386_880
    static let payload = Array(#"{"image":"big.png"}"#.utf8)
    static let png = ArchiveTests.pngHeader(width: 1, height: 1)

    var bytes: [UInt8] {
        let png = Self.png
        var tar = HandTar()
        tar.entry("payload.json", data: Self.payload)
        switch self {
        case .pax01:
            tar.pax([("GNU.sparse.size", "\(Self.realSize)"), ("GNU.sparse.map", "0,\(png.count),\(Self.realSize),0")])
            tar.entry("assets/big.png", data: png)
        case .pax00:
            tar.pax([
                ("GNU.sparse.size", "\(Self.realSize)"), ("GNU.sparse.numblocks", "1"), ("GNU.sparse.offset", "0"),
                ("GNU.sparse.numbytes", "\(png.count)"),
            ])
            tar.entry("assets/big.png", data: png)
        case .pax10:
            tar.pax([
                ("GNU.sparse.major", "1"), ("GNU.sparse.minor", "0"), ("GNU.sparse.name", "assets/big.png"),
                ("GNU.sparse.realsize", "\(Self.realSize)"),
            ])
            let map = Array("1\n0\n\(png.count)\n".utf8)
            tar.entry("GNUSparseFile.0/big.png", data: map + [UInt8](repeating: 0, count: 512 - map.count) + png)
        case .oldGNU:
            tar.entry("assets/big.png", type: "S", data: png) { header in
                func put(_ text: String, at offset: Int) {
                    for (index, byte) in text.utf8.enumerated() { header[offset + index] = byte }
                }
                func octal(_ value: Int) -> String {
                    let digits = String(value, radix: 8)
                    return String(repeating: "0", count: 11 - digits.count) + digits
                }
                put("ustar  \0", at: 257)
                put(octal(0), at: 386)
                put(octal(png.count), at: 398)
                put(octal(Self.realSize), at: 483)
            }
        case .sizeOnly:
            tar.pax([("GNU.sparse.size", "\(Self.realSize)")])
            tar.entry("assets/big.png")
        case .realSizePastData:
            tar.pax([("SCHILY.realsize", "2000")])
            tar.entry("assets/big.png", data: png)
        case .sizeFieldPastData:
            tar.entry("assets/big.png", data: png, declaredSize: 4000)
        }
        return tar.finished
    }

    /// The refusal; `bodyBytes` is the whole archive's size.
    func expected(bodyBytes: Int) -> ArchiveError {
        switch self {
        case .pax01, .pax00, .pax10, .oldGNU, .realSizePastData: .sparse("assets/big.png")
        case .sizeOnly:
            .largerThanBody("assets/big.png", bytes: Self.payload.count + Self.realSize, bodyBytes: bodyBytes)
        case .sizeFieldPastData:
            .largerThanBody("assets/big.png", bytes: Self.payload.count + 4000, bodyBytes: bodyBytes)
        }
    }
}

/// The unpacker's refusals as the route answers them, where a server cannot easily be made to fail
/// or what it wrote cannot be counted exactly.
@Suite struct ArchiveUnpackerTests {
    /// An upload folder on a full disk.
    final class FullFolder: UploadFolderHandle {
        func makeFile() throws(UploadStorageError) -> any UploadFileWriter {
            throw UploadStorageError(reason: "noSpace")
        }
    }

    /// Counts what an unpack writes: files made, bytes appended.
    final class CountingSpool: AssetSpool {
        var files = 0
        var bytes = 0

        func makeFile() -> any AssetSpoolFile {
            files += 1
            return File(self)
        }

        final class File: AssetSpoolFile {
            let spool: CountingSpool
            init(_ spool: CountingSpool) { self.spool = spool }
            func append(_ piece: UnsafeRawBufferPointer) { spool.bytes += piece.count }
            func finish() -> AssetSource { .bytes([]) }
        }
    }

    @Test func anAssetTheUploadFolderCannotTakeIs507WithTheFoldersReason() throws {
        var tar = HandTar()
        tar.entry("payload.json", data: Array("{}".utf8))
        tar.entry("assets/a.png", data: [1, 2, 3])
        let limits = ArchiveLimits(maxEntries: 4, maxBytes: 4096, maxPayloadBytes: 1024)
        #expect(throws: ArchiveError.storageFailed(reason: "noSpace")) {
            let spool = UploadFolderSpool(folder: FullFolder())
            _ = try ArchiveUnpacker.unpack(TarReader(bytes: tar.finished), limits: limits, assets: spool)
        }
        let problem = Problem(ArchiveError.storageFailed(reason: "noSpace"))
        #expect(problem.status == 507)
        #expect(problem.detail.contains("(noSpace)"))
    }

    /// An archive unpacks to no more than its own bytes: a sparse entry is refused from its header
    /// (a 400 naming it) before a file is made, and data declared or read past the archive's size
    /// is refused before a byte past what is stored is written, within limits far above it.
    @Test(arguments: SparseTar.allCases)
    func anArchiveNeverUnpacksToMoreThanItHolds(_ shape: SparseTar) throws {
        let tar = shape.bytes
        if shape == .pax01 { #expect(tar.count == 4096) }
        let limits = ArchiveLimits(maxEntries: 4, maxBytes: 1 << 30, maxPayloadBytes: 1024)
        let spool = CountingSpool()
        #expect(throws: shape.expected(bodyBytes: tar.count)) {
            _ = try ArchiveUnpacker.unpack(TarReader(bytes: tar), limits: limits, assets: spool)
        }
        if shape == .realSizePastData {
            // Its hole shows only once its stored bytes are read: those, and nothing past them.
            #expect(spool.bytes <= SparseTar.png.count)
        } else {
            #expect(spool.files == 0 && spool.bytes == 0, "\(spool.files) files, \(spool.bytes) bytes")
        }
        let problem = Problem(shape.expected(bodyBytes: tar.count))
        #expect(problem.status == 400)
        #expect(problem.detail.contains("'assets/big.png'"), "\(problem.detail)")
    }
}
