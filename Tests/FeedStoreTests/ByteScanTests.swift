import Testing

@testable import FeedStore

/// `ByteScan` answers as the plain collection methods it stands in for, at every position.
@Suite struct ByteScanTests {
    /// Byte strings of every length up to 40 from a small alphabet, so hits land everywhere.
    static func samples(of alphabet: [UInt8], seed: UInt64) -> [[UInt8]] {
        var generator = SeededGenerator(seed: seed)
        var samples: [[UInt8]] = [[]]
        for length in 1...40 {
            for _ in 0..<60 {
                samples.append((0..<length).map { _ in alphabet.randomElement(using: &generator) ?? 0 })
            }
        }
        return samples
    }

    /// The bytes the single-byte scans look for, their neighbours, and bytes past ASCII.
    static let byteAlphabet: [UInt8] = [0x00, 0x23, 0x2F, 0x3F, 0x5C, 0x61, 0x7F, 0x80, 0xC3, 0xFF]

    @Test func scansMatchThePlainDefinitions() {
        for sample in Self.samples(of: Self.byteAlphabet, seed: 7) {
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

    /// The bytes the word-at-a-time scans treat specially: those next to a borrow's edge (0x00,
    /// 0x1F, 0x20, 0x21, 0x7F, 0x80), the quote and backslash, the structural characters and
    /// their neighbours.
    static let wordAlphabet: [UInt8] = [
        0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x2B, 0x2C, 0x2D, 0x3A, 0x3B, 0x5A, 0x5B, 0x5C, 0x5D,
        0x61, 0x7A, 0x7B, 0x7C, 0x7F, 0x80, 0xA2, 0xAC, 0xDC, 0xFF,
    ]

    @Test func wordScansMatchThePlainDefinitions() {
        for sample in Self.samples(of: Self.wordAlphabet, seed: 11) {
            sample.withUnsafeBufferPointer { bytes in
                for start in 0...sample.count {
                    let expected = sample[start...].firstIndex { !ByteScan.isPlain($0) } ?? sample.count
                    #expect(ByteScan.plainStringRunEnd(in: bytes, from: start) == expected, "\(sample) from \(start)")
                }
                let structural = sample.filter { [0x2C, 0x3A, 0x5B, 0x7B].contains($0) }.count
                #expect(ByteScan.countStructural(in: bytes) == structural, "\(sample)")
            }
        }
    }

    /// Every byte value, alone among plain bytes at every place of two words and a tail.
    @Test func everyByteIsJudgedAtEveryPlace() {
        for value in UInt8.min...UInt8.max {
            for place in 0..<19 {
                var sample = [UInt8](repeating: UInt8(ascii: "a"), count: 19)
                sample[place] = value
                sample.withUnsafeBufferPointer { bytes in
                    let plain = value >= 0x20 && value < 0x80 && value != 0x22 && value != 0x5C
                    #expect(
                        ByteScan.plainStringRunEnd(in: bytes, from: 0) == (plain ? 19 : place), "\(value) at \(place)")
                    let structural = [0x2C, 0x3A, 0x5B, 0x7B].contains(value) ? 1 : 0
                    #expect(ByteScan.countStructural(in: bytes) == structural, "\(value) at \(place)")
                }
            }
        }
    }

    /// A byte is found in a word wherever it is, and only then.
    @Test func aWordHoldsAByteWhereverItIs() {
        for value in UInt8.min...UInt8.max {
            for place in 0..<8 {
                let word = UInt64(0x6161_6161_6161_6161) & ~(UInt64(0xFF) << (8 * place)) | UInt64(value) << (8 * place)
                #expect(ByteScan.hasByte(0x2E, in: word) == (value == 0x2E), "\(value) at \(place)")
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
        #expect(ByteScan.plainStringRunEnd(in: empty, from: 0) == 0)
        #expect(ByteScan.countStructural(in: empty) == 0)
    }
}
