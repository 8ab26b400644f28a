import ConcurrencyPrimitives
import FeedImaging
import FeedStore
import HTTPTransport

/// A multipart publish's image parts, handed to the image prefetcher as each one is stored,
/// so decoding starts while the rest of the body arrives.
final class UploadPrefetch: MultipartPartObserver {
    /// The images queued so far; the pack takes over its thread.
    let batch: ImagePrefetchBatch
    private let gate = Lock(PrefetchGate())

    init(batch: ImagePrefetchBatch) { self.batch = batch }

    func partCompleted(_ part: MultipartPart) {
        // Named as `AssetUpload.prepare` names it.
        let name = part.filename ?? part.name
        switch gate.withLock({ $0.admit(field: part.name, name: name) }) {
        case .decode: if let file = part.file { batch.add(name: name, source: .file(file.uploadedFile)) }
        case .refuse: batch.cancel()
        case .wait: break
        }
    }

    /// The request is done (answered, refused or abandoned): images not begun are dropped.
    deinit { batch.cancel() }
}

/// Which parts of a publish are decoded ahead: only images after the `payload` part, and none
/// once a part shows that `AssetUpload.prepare` will refuse the publish (a second payload, an
/// unsafe or repeated name). A publish refused for its parts costs no decoding. A value, so its
/// transitions are tested without a server.
struct PrefetchGate {
    private var payloadSeen = false
    private var names = Set<String>()
    private var refused = false

    /// What to do with a completed part.
    enum Step: Equatable {
        /// Decode it ahead.
        case decode
        /// Not this one (the payload, or an image before it, left to the pack).
        case wait
        /// The publish will be refused: drop what is queued, decode nothing more.
        case refuse
    }

    /// The step for the part of form field `field`, named `name`.
    mutating func admit(field: String, name: String) -> Step {
        guard !refused else { return .wait }
        if field == "payload" {
            refused = payloadSeen
            payloadSeen = true
            return refused ? .refuse : .wait
        }
        guard SafeName.problem(with: name) == nil, names.insert(name).inserted else {
            refused = true
            return .refuse
        }
        return payloadSeen ? .decode : .wait
    }
}
