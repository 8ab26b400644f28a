import FeedImaging
import FeedImagingTesting
import FeedStore
import Foundation
import Testing

/// An image kept as it is (`?images=raw`, an as-is archive) stays the upload file it arrived in:
/// copied into the generation a piece at a time, never read into memory whole, and stored and
/// fingerprinted exactly as the same bytes sent in memory are.
@Suite struct RawUploadTests {
    @Test func aRawUploadFileIsCopiedAsItIsAndFingerprintedAsItsBytesAre() throws {
        let root = FileManager.default.temporaryDirectory.path + "/rawupload-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let jpeg = try TestImages.jpeg(width: 300, height: 200)
        let area = UploadArea(root: root)
        try area.prepare()
        let folder = try area.makeFolder()
        let upload = try folder.makeFile()
        try jpeg.withUnsafeBytes { try upload.append($0) }
        let file = try upload.finish()

        let encoder = try VipsImageEncoder()
        let packed = try #require(
            AssetBudget().packRaw([.init(name: "p.jpg", source: .file(file))], encoder: encoder).packed.first)
        #expect(packed.image.file == file && packed.image.bytes.isEmpty, "kept as the file, not read")
        #expect(packed.image.byteCount == jpeg.count && packed.image.width == 300 && packed.image.height == 200)

        let store = FeedStore(root: root + "/data")
        let fromFile = try store.publish(
            group: "file", payloadJSON: Array("[1]".utf8),
            assets: [AssetInput(name: "p.jpg", file: file, width: 300, height: 200)])
        let fromBytes = try store.publish(
            group: "bytes", payloadJSON: Array("[1]".utf8),
            assets: [AssetInput(name: "p.jpg", bytes: jpeg, width: 300, height: 200)])
        guard case .published(let id, let fingerprint, let assetBytes) = fromFile,
            case .published(_, let sameFingerprint, _) = fromBytes
        else {
            Issue.record("both publish: \(fromFile), \(fromBytes)")
            return
        }
        #expect(fingerprint == sameFingerprint)
        #expect(assetBytes == jpeg.count)
        let stored = try Data(contentsOf: URL(fileURLWithPath: "\(root)/data/file/generations/\(id)/assets/p.jpg"))
        #expect(Array(stored) == jpeg)
    }
}
