import ConcurrencyPrimitives
import FeedImagingTesting
import FeedStore
import Foundation
import Testing

@testable import FeedImaging

/// Images encoded while their upload arrives, on real files and threads: each is encoded once,
/// whether by the prefetch or the pack that takes its thread over, to the same bytes.
@Suite struct ImagePrefetchTests {
    static let photos = (0..<4).map { try! TestImages.jpeg(width: 1600 + 100 * $0, height: 1200) }

    /// The photos as upload files, in a folder that lives as long as the handle returned.
    private func stored(in root: String) throws -> (UploadFolder, [AssetBudget.Candidate]) {
        let area = UploadArea(root: root)
        try area.prepare()
        let folder = try area.makeFolder()
        let candidates = try Self.photos.enumerated().map { index, bytes in
            let upload = try folder.makeFile()
            try bytes.withUnsafeBytes { try upload.append($0) }
            return AssetBudget.Candidate(name: "p\(index).jpg", source: .file(try upload.finish()))
        }
        return (folder, candidates)
    }

    private func withUploads(_ body: (UploadFolder, [AssetBudget.Candidate]) throws -> Void) throws {
        let root = FileManager.default.temporaryDirectory.path + "/prefetch-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (folder, candidates) = try stored(in: root)
        try withExtendedLifetime(folder) { try body(folder, candidates) }
    }

    private func waitUntil(_ condition: () -> Bool) {
        let deadline = MonotonicClock.nanos() + 20_000_000_000
        while !condition(), MonotonicClock.nanos() < deadline { usleep(2_000) }
    }

    /// A new encoder's prefetcher with `maxThreads`, and a batch holding every candidate.
    private func queued(
        _ candidates: [AssetBudget.Candidate], maxThreads: Int
    ) throws -> (VipsImageEncoder, ImagePrefetcher, ImagePrefetchBatch) {
        let encoder = try VipsImageEncoder()
        let prefetcher = ImagePrefetcher(encoder: encoder, maxThreads: maxThreads)
        let batch = prefetcher.batch(budget: AssetBudget())
        for candidate in candidates { batch.add(name: candidate.name, source: candidate.source) }
        return (encoder, prefetcher, batch)
    }

    /// What a pack without any prefetch makes of the same files.
    private func reference(_ candidates: [AssetBudget.Candidate]) throws -> AssetBudget.Result {
        try VipsImageEncoder().pack(candidates, budget: AssetBudget(), threads: 2)
    }

    @Test func imagesEncodedAheadAreWhatThePackStoresWithoutEncodingThemAgain() throws {
        try withUploads { _, candidates in
            let (encoder, prefetcher, batch) = try queued(candidates, maxThreads: 1)
            waitUntil { encoder.encodes == candidates.count && prefetcher.freeThreadCount == 1 }
            #expect(encoder.encodes == candidates.count, "each image encoded ahead, once")
            #expect(prefetcher.freeThreadCount == 1, "the thread is given back once the queue is empty")
            let packed = encoder.pack(candidates, budget: AssetBudget(), threads: 2, prefetch: batch)
            #expect(encoder.encodes == candidates.count, "the pack read them from the cache")
            #expect(packed == (try reference(candidates)))
        }
    }

    @Test func aPackTakesOverTheRunningPrefetchThreadAndEncodesEachImageOnce() throws {
        try withUploads { _, candidates in
            let (encoder, prefetcher, batch) = try queued(candidates, maxThreads: 1)
            // At once: the prefetch thread is still on its first image.
            let packed = encoder.pack(candidates, budget: AssetBudget(), threads: 2, prefetch: batch)
            #expect(encoder.encodes == candidates.count, "no image encoded twice")
            #expect(packed == (try reference(candidates)))
            waitUntil { prefetcher.freeThreadCount == 1 }
            #expect(prefetcher.freeThreadCount == 1, "the lent thread is given back")
        }
    }

    @Test func aCancelledBatchEncodesNoMoreThanTheImageItHadBegun() throws {
        try withUploads { _, candidates in
            let (encoder, prefetcher, batch) = try queued(candidates, maxThreads: 1)
            // A preempted test thread may cancel after the first image or two: what counts is
            // that nothing begins after the cancel.
            let begun = encoder.encodes
            batch.cancel()
            waitUntil { prefetcher.freeThreadCount == 1 }
            #expect(prefetcher.freeThreadCount == 1)
            #expect(encoder.encodes <= begun + 1, "\(encoder.encodes) encoded, \(begun) before the cancel")
            batch.add(name: candidates[0].name, source: candidates[0].source)
            #expect(prefetcher.freeThreadCount == 1, "a cancelled batch starts nothing")
        }
    }

    @Test func withNoFreeThreadTheImagesAreLeftToThePack() throws {
        try withUploads { _, candidates in
            let (encoder, prefetcher, batch) = try queued(candidates, maxThreads: 0)
            #expect(encoder.encodes == 0)
            let packed = encoder.pack(candidates, budget: AssetBudget(), threads: 2, prefetch: batch)
            #expect(packed.packed.count == candidates.count && encoder.encodes == candidates.count)
        }
    }

    @Test func nothingIsPrefetchedWhileAPackRuns() throws {
        try withUploads { _, candidates in
            let encoder = try VipsImageEncoder()
            let prefetcher = ImagePrefetcher(encoder: encoder, maxThreads: 1)
            let big = (0..<6).map { try! TestImages.jpeg(width: 3000, height: 2000 + $0) }
            let packing = try JoinableThread {
                _ = encoder.pack(
                    big.map { .init(name: "b.jpg", source: .bytes($0)) }, budget: AssetBudget(), threads: 2)
            }
            waitUntil { encoder.isPacking }
            let batch = prefetcher.batch(budget: AssetBudget())
            batch.add(name: candidates[0].name, source: candidates[0].source)
            let freeAfterAdd = prefetcher.freeThreadCount
            let stillPacking = encoder.isPacking
            packing.join()
            #expect(stillPacking, "the pack of six 6-megapixel photos outlasts an add")
            #expect(freeAfterAdd == 1, "no prefetch thread started beside the pack")
            #expect(encoder.encodes == big.count, "and nothing but the pack's images encoded")
        }
    }
}
