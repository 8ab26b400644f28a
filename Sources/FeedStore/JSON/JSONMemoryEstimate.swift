/// About how much memory publishing a JSON payload takes at its peak, known before parsing it.
///
/// Measured on 16 MiB payloads (bench/attacks.py, and an outside review's shapes): text-heavy
/// JSON peaks at three times its size (the bytes, their parsed form, the feed written from it);
/// each value adds its node to the parsed form, so value-dense JSON (`[[0],[0],…]`) peaks at six.
public enum JSONMemoryEstimate {
    /// What each byte costs whatever its shape.
    public static let bytesPerByte = 3
    /// What each structural character (`[`, `{`, `,`, `:`: about one per value) adds.
    public static let bytesPerValue = 6

    /// The peak estimate for publishing `payload`: `bytesPerByte` per byte plus `bytesPerValue`
    /// per structural character (those inside strings counted too, which only overestimates).
    public static func peakBytes(of payload: [UInt8]) -> Int {
        let structural = payload.withUnsafeBufferPointer(ByteScan.countStructural(in:))
        // Both terms are bounded by the payload's size (an array's), times a small constant.
        return payload.count &* bytesPerByte &+ structural &* bytesPerValue
    }
}
