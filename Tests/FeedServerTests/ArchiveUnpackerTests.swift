import FeedArchive
import FeedStore
import HTTPTransport
import Testing

@testable import FeedServerKit

/// The unpacker's refusals as the route answers them, where a server cannot easily be made to fail.
@Suite struct ArchiveUnpackerTests {
    /// An upload folder on a full disk.
    final class FullFolder: UploadFolderHandle {
        func makeFile() throws(UploadStorageError) -> any UploadFileWriter {
            throw UploadStorageError(reason: "noSpace")
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
}
