import Testing

@testable import FeedStore

/// `ByteScan` answers as the plain collection methods it stands in for, at every position.
@Suite struct ByteScanTests {
    /// Byte strings of every length up to 40 from a small alphabet (so hits land everywhere),
    /// plus bytes past ASCII.
    static func samples() -> [[UInt8]] {
        var generator = SeededGenerator(seed: 7)
        let alphabet: [UInt8] = [0x00, 0x23, 0x2F, 0x3F, 0x5C, 0x61, 0x7F, 0x80, 0xC3, 0xFF]
        var samples: [[UInt8]] = [[]]
        for length in 1...40 {
            for _ in 0..<50 {
                samples.append((0..<length).map { _ in alphabet.randomElement(using: &generator) ?? 0 })
            }
        }
        return samples
    }

    @Test func scansMatchThePlainDefinitions() {
        for sample in Self.samples() {
            sample.withUnsafeBufferPointer { bytes in
                for byte: UInt8 in [0x00, 0x23, 0x2F, 0x5C] {
                    #expect(ByteScan.contains(byte, in: bytes) == sample.contains(byte), "\(sample)")
                    #expect(ByteScan.lastOffset(of: byte, in: bytes) == sample.lastIndex(of: byte), "\(sample)")
                }
                let first = sample.firstIndex { $0 == 0x3F || $0 == 0x23 }
                #expect(ByteScan.firstOffset(of: 0x3F, or: 0x23, in: bytes) == first, "\(sample)")
                #expect(ByteScan.isASCII(bytes) == sample.allSatisfy { $0 < 0x80 }, "\(sample)")
            }
        }
    }

    /// A buffer without storage is empty to every scan.
    @Test func anEmptyBufferHoldsNothing() {
        let empty = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
        #expect(!ByteScan.contains(0, in: empty))
        #expect(ByteScan.firstOffset(of: 0x3F, or: 0x23, in: empty) == nil)
        #expect(ByteScan.lastOffset(of: 0, in: empty) == nil)
        #expect(ByteScan.isASCII(empty))
    }
}
