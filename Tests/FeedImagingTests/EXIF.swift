/// Builds a real EXIF APP1 segment (big-endian TIFF) with an orientation and a GPS latitude,
/// and splices it into a JPEG, the way a phone camera writes them.
enum EXIF {
    static func inserting(orientation: UInt16, latitude: (UInt32, UInt32, UInt32), into jpeg: [UInt8]) -> [UInt8] {
        var tiff: [UInt8] = Array("MM".utf8) + be16(42) + be32(8)
        // IFD0 at 8: Orientation, GPS IFD pointer.
        tiff += be16(2)
        tiff += be16(0x0112) + be16(3) + be32(1) + be16(orientation) + be16(0)
        tiff += be16(0x8825) + be16(4) + be32(1) + be32(38)
        tiff += be32(0)
        // GPS IFD at 38: GPSLatitudeRef "N", GPSLatitude (3 rationals at 68).
        tiff += be16(2)
        tiff += be16(0x0001) + be16(2) + be32(2) + [UInt8(ascii: "N"), 0, 0, 0]
        tiff += be16(0x0002) + be16(5) + be32(3) + be32(68)
        tiff += be32(0)
        tiff += be32(latitude.0) + be32(1) + be32(latitude.1) + be32(1) + be32(latitude.2) + be32(1)
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let segment: [UInt8] = [0xFF, 0xE1] + be16(UInt16(payload.count + 2)) + payload
        // After SOI and, when present, the JFIF APP0 segment.
        var insertAt = 2
        if jpeg[2] == 0xFF, jpeg[3] == 0xE0 { insertAt = 4 + Int(jpeg[4]) << 8 + Int(jpeg[5]) }
        return Array(jpeg[..<insertAt]) + segment + Array(jpeg[insertAt...])
    }

    private static func be16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
    private static func be32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}
