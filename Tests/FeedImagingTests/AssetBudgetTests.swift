import FeedStore
import Testing

/// The budget's policy with a fake encoder whose output size is set per image.
@Suite struct AssetBudgetTests {
    /// Encodes to `bytesAt512 × (dimension / 512)²` bytes (JPEG also scales with quality / 80),
    /// or fails for sources marked as broken.
    final class FakeEncoder: ImageEncoding, @unchecked Sendable {
        var calls: [(String, Int, Int)] = []

        final class Renderer: ImageRendering {
            let size: Int
            let tag: String
            let owner: FakeEncoder
            init(size: Int, tag: String, owner: FakeEncoder) {
                self.size = size
                self.tag = tag
                self.owner = owner
            }
            func render(maxDimension: Int, quality: Int) throws(AssetEncodingError) -> EncodedImage {
                owner.calls.append((tag, maxDimension, quality))
                let scale = Double(maxDimension * maxDimension) / Double(512 * 512) * Double(quality) / 80
                return EncodedImage(
                    bytes: [UInt8](repeating: 1, count: Int(Double(size) * scale)), width: maxDimension,
                    height: maxDimension * 3 / 4)
            }
        }

        func renderer(for source: AssetSource, format: ImageFormat) throws(AssetEncodingError) -> any ImageRendering {
            if case .bytes(let bytes) = source, bytes == Array("no threads".utf8) {
                throw AssetEncodingError("decode failed: unable to create thread", isServerFault: true)
            }
            guard case .bytes(let bytes) = source, bytes.count == MemoryLayout<Int>.size else {
                throw AssetEncodingError("cannot be decoded: broken")
            }
            let size = bytes.withUnsafeBytes { $0.load(as: Int.self) }
            return Renderer(size: size, tag: "\(size)", owner: self)
        }

        func dimensions(of source: AssetSource) -> (width: Int, height: Int)? { nil }
    }

    private func source(encodingTo bytes: Int) -> [UInt8] {
        withUnsafeBytes(of: bytes) { Array($0) }
    }

    @Test func fiveTwoMebibyteImagesIntoEightMebibytes() {
        let mib = 1 << 20
        let candidates = (1...5).map { AssetBudget.Candidate(name: "p\($0).jpg", source: source(encodingTo: 2 * mib)) }
        let result = AssetBudget().pack(candidates, encoder: FakeEncoder())
        #expect(result.packed.map(\.name) == ["p1.jpg", "p2.jpg", "p3.jpg", "p4.jpg"])
        #expect(result.totalBytes == 8 * mib)
        #expect(result.skipped.map(\.name) == ["p5.jpg"])
        #expect(result.skipped.first?.reason.contains("bytes left of the generation budget") == true)
    }

    @Test func anOversizedImageStepsQualityThenSize() {
        let encoder = FakeEncoder()
        let mib = 1 << 20
        // 5 MiB at 512 px / q80 is still 2.5 MiB at q40; at 384 px (×0.5625) q50 gives 1.76 MiB.
        let result = AssetBudget().pack([.init(name: "big.jpg", source: source(encodingTo: 5 * mib))], encoder: encoder)
        #expect(result.packed.first?.image.width == 384)
        #expect(
            encoder.calls.map { "\($0.1)@\($0.2)" } == [
                "512@80", "512@70", "512@60", "512@50", "512@40", "384@80", "384@70", "384@60", "384@50",
            ])
    }

    @Test func pngOnlyStepsSizeAndStopsAt128() {
        let encoder = FakeEncoder()
        let result = AssetBudget().pack(
            [.init(name: "huge.png", source: source(encodingTo: 1 << 30))], encoder: encoder)
        #expect(result.packed.isEmpty)
        #expect(encoder.calls.map(\.1) == [512, 384, 288, 216, 162, 128])
        #expect(result.skipped.first?.reason.contains("even at 128 px") == true)
    }

    @Test func aFailingCandidateIsSkippedAndTheRestGoOn() {
        let broken: [UInt8] = [0, 1, 2]
        let result = AssetBudget().pack(
            [
                .init(name: "a.jpg", source: source(encodingTo: 1000)),
                .init(name: "bad.jpg", source: broken),
                .init(name: "c.png", source: source(encodingTo: 1000)),
                .init(name: "d.webp", source: source(encodingTo: 1000)),
            ], encoder: FakeEncoder())
        #expect(result.packed.map(\.name) == ["a.jpg", "c.png"])
        #expect(result.skipped.map(\.name) == ["bad.jpg", "d.webp"])
        #expect(result.skipped[0].reason == "cannot be decoded: broken")
    }

    @Test func decodedMemoryBudget() {
        // Each image is 512 × 384 × 4 = 786,432 decoded bytes at full size.
        let budget = AssetBudget(maxDecodedBytes: 1_000_000)
        let result = budget.pack(
            [
                .init(name: "a.jpg", source: source(encodingTo: 100)),
                .init(name: "b.jpg", source: source(encodingTo: 100)),
            ],
            encoder: FakeEncoder())
        #expect(result.packed.count == 2)
        #expect(result.packed[1].image.width < 512, "the second image shrinks to fit the decoded budget")
        #expect(result.totalDecodedBytes <= 1_000_000)
    }

    @Test func dimensionSteps() {
        #expect(AssetBudget().dimensionSteps == [512, 384, 288, 216, 162, 128])
        #expect(AssetBudget(maxDimension: 100).dimensionSteps == [100])
        #expect(AssetBudget().qualitySteps(for: .jpeg) == [80, 70, 60, 50, 40])
        #expect(AssetBudget().qualitySteps(for: .png) == [80])
    }

    @Test func aServerFaultIsReportedApartFromImagesThatAreBad() {
        let budget = AssetBudget()
        let candidates = [
            AssetBudget.Candidate(name: "bad.jpg", source: Array("broken".utf8)),
            AssetBudget.Candidate(name: "later.jpg", source: Array("no threads".utf8)),
        ]
        for result in [
            budget.pack(candidates, encoder: FakeEncoder()), budget.packRaw(candidates, encoder: FakeEncoder()),
        ] {
            #expect(result.skipped.count == 2)
            #expect(result.serverFault == "decode failed: unable to create thread")
        }
        let onlyBad = budget.pack(Array(candidates.prefix(1)), encoder: FakeEncoder())
        #expect(onlyBad.serverFault == nil, "a bad image is the client's, skipped as before")
    }
}
