import FeedImaging
import FeedStore
import HTTPTransport

/// A multipart publish's image parts, handed to the image prefetcher as each one is stored,
/// so decoding starts while the rest of the body arrives.
final class UploadPrefetch: MultipartPartObserver {
    /// The images queued so far; the pack takes over its thread.
    let batch: ImagePrefetchBatch

    private init(batch: ImagePrefetchBatch) { self.batch = batch }

    /// An observer for the publish `head` asks for (nil: its images are kept raw, or its query is
    /// refused later anyway).
    static func observer(for head: HTTPRequest, prefetcher: ImagePrefetcher) -> UploadPrefetch? {
        guard let options = try? AssetUpload.options(from: head.query), !options.raw else { return nil }
        return UploadPrefetch(batch: prefetcher.batch(budget: options.budget))
    }

    func partStored(_ part: MultipartPart, in folder: any UploadFolderHandle) {
        // Named as `AssetUpload.prepare` names it; a name it refuses is not worth a decode.
        guard part.name != "payload", let file = part.file else { return }
        let name = part.filename ?? part.name
        guard SafeName.problem(with: name) == nil else { return }
        batch.add(name: name, source: .file(file.uploadedFile), owner: folder)
    }

    /// The request is done (answered, refused or abandoned): images not begun are dropped.
    deinit { batch.cancel() }
}
