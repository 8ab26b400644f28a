import FeedStore
import HTTPTransport
import Synchronization

/// Counts the bytes of every rendered feed body alive in the process, in the read cache or not.
///
/// An answer being sent keeps its render alive after the cache let it go: a client that stops
/// reading holds it until its connection times out. The ledger lets the cache refuse a new render
/// while such renders already hold its limit, instead of growing with every stalled reader.
final class RenderLedger: Sendable {
    private let bytes = Atomic<Int>(0)

    /// Bytes of render bodies alive now.
    var liveBytes: Int { bytes.load(ordering: .relaxed) }

    /// Counts `count` more bytes (a render made, or a reservation for one about to be made).
    func add(_ count: Int) { bytes.add(count, ordering: .relaxed) }

    /// Gives back `count` bytes (a render freed, or a reservation corrected).
    func release(_ count: Int) { bytes.subtract(count, ordering: .relaxed) }
}

/// A render the cache no longer keeps but an answer in flight may still hold, found again by its
/// identity so a second reader of the same generation shares its body instead of rendering a copy.
struct ReleasedRender: Sendable {
    let identity: RenderedGeneration.Identity
    let assets: [String: AssetInfo]
    let payloadRange: Range<Int>
    /// The body, while some answer still holds it.
    weak var body: SharedBody?
}
