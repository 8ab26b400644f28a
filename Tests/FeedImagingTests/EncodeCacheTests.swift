import ConcurrencyPrimitives
import FeedStore
import Testing

@testable import FeedImaging

/// The encode cache's claims: one thread encodes a key, the others wait for its result or, when
/// they do not wait, are told it is busy.
@Suite struct EncodeCacheTests {
    private let key = EncodeCache.Key(sourceHash: "abc", format: .jpeg, maxDimension: 512, quality: 80)
    private let image = EncodedImage(bytes: [1, 2, 3], width: 4, height: 3)

    private func isClaimed(_ claim: EncodeCache.Claim) -> Bool {
        if case .claimed = claim { return true }
        return false
    }

    @Test func theFirstClaimEncodesAndOthersAreBusyUntilItIsFilled() {
        let cache = EncodeCache(capacityBytes: 1 << 20)
        #expect(isClaimed(cache.claim(key)))
        if case .busy = cache.claim(key, waiting: false) {} else { Issue.record("a second claim is busy") }
        cache.fill(key, with: image)
        guard case .cached(let cached) = cache.claim(key, waiting: false) else {
            Issue.record("filled")
            return
        }
        #expect(cached == image && cache.misses == 1 && cache.hits == 1)
    }

    @Test func aFailedEncodeLetsTheNextClaimTry() {
        let cache = EncodeCache(capacityBytes: 1 << 20)
        #expect(isClaimed(cache.claim(key)))
        cache.fill(key, with: nil)
        #expect(isClaimed(cache.claim(key, waiting: false)))
        #expect(!cache.contains(key))
    }

    @Test func aWaitingClaimGetsTheOtherThreadsImage() throws {
        let cache = EncodeCache(capacityBytes: 1 << 20)
        #expect(isClaimed(cache.claim(key)))
        let got = Box()
        let key = self.key
        let waiter = try JoinableThread {
            if case .cached(let image) = cache.claim(key) { got.image = image }
        }
        // Whether the waiter claims before or after this fill, it ends with the cached image.
        cache.fill(key, with: image)
        waiter.join()
        #expect(got.image == image)
        #expect(cache.misses == 1, "encoded once")
    }

    @Test func aWaitIsBoundedAfterWhichTheWaiterEncodesItself() {
        let cache = EncodeCache(capacityBytes: 1 << 20, maxWaitNanos: 20_000_000)
        #expect(isClaimed(cache.claim(key)))
        let started = MonotonicClock.nanos()
        #expect(isClaimed(cache.claim(key)), "the holder never filled: the waiter gives up and encodes")
        #expect(MonotonicClock.nanos() - started >= 20_000_000)
        cache.fill(key, with: image)
        cache.fill(key, with: image)
        #expect(cache.contains(key))
    }
}

/// What a waiting thread got, read after it is joined.
private final class Box: @unchecked Sendable {
    var image: EncodedImage?
}
