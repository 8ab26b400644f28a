import FeedImaging
import FeedImagingTesting
import FeedStore
import Foundation
import Testing

/// A cut-off image is an error, not a picture padded with grey, whether it arrived in memory (a
/// seed folder, the offline publisher) or streamed to an upload file (a multipart publish).
@Suite struct TruncatedUploadTests {
    let encoder = try! VipsImageEncoder()

    /// `bytes` as an upload file, in a folder that lives as long as the handle returned with it.
    private func stored(_ bytes: [UInt8], in root: String) throws -> (UploadFolder, UploadedFile) {
        let area = UploadArea(root: root)
        try area.prepare()
        let folder = try area.makeFolder()
        let upload = try folder.makeFile()
        try bytes.withUnsafeBytes { try upload.append($0) }
        return (folder, try upload.finish())
    }

    @Test(arguments: ["cut.jpg", "cut.png"])
    func aTruncatedImageIsSkippedFromAFileAsFromMemory(_ name: String) throws {
        let root = FileManager.default.temporaryDirectory.path + "/truncated-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let whole =
            name.hasSuffix(".jpg")
            ? try TestImages.jpeg(width: 1200, height: 900) : try TestImages.png(width: 1200, height: 900)
        let cut = Array(whole.prefix(whole.count / 2))
        let fromMemory = AssetBudget().pack([.init(name: name, source: .bytes(cut))], encoder: encoder)
        let (folder, file) = try stored(cut, in: root)
        defer { withExtendedLifetime(folder) {} }
        #expect(Vips.header(of: .file(file)) != nil, "the header is whole: only the pixels are cut")
        let fromFile = AssetBudget().pack([.init(name: name, source: .file(file))], encoder: encoder)
        #expect(fromMemory.packed.isEmpty && fromMemory.skipped.count == 1, "\(fromMemory.skipped)")
        #expect(fromFile.packed.isEmpty && fromFile.skipped.count == 1, "\(fromFile.packed.map(\.name))")
        #expect(fromFile.skipped.first?.reason == fromMemory.skipped.first?.reason)
    }
}
