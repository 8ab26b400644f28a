import CMicroHTTPD

/// One part of a `multipart/form-data` body.
struct MultipartPart: Sendable {
    /// The form field name (`name=` of Content-Disposition).
    var name: String
    /// The file name, for file parts.
    var filename: String?
    /// The part's own Content-Type, when given.
    var contentType: String?
    /// The part's bytes.
    var bytes: [UInt8]
}

/// Streams a `multipart/form-data` body through libmicrohttpd's `MHD_PostProcessor` into parts,
/// with a bound on their number. Owns the post processor (`MHD_destroy_post_processor` in deinit).
///
/// Used only from the connection's handler thread, one call at a time.
final class MultipartCollector: @unchecked Sendable {
    private var processor: OpaquePointer?
    private(set) var parts: [MultipartPart] = []
    /// Set when the body is malformed or over a limit; the request then gets a 400/413.
    private(set) var problem: Problem?
    private let maxParts: Int

    /// Creates a collector for the connection's body; nil problem-free creation needs a boundary.
    init(connection: OpaquePointer, maxParts: Int) {
        self.maxParts = maxParts
        processor = MHD_create_post_processor(connection, 64 << 10, partIterator, Unmanaged.passUnretained(self).toOpaque())
        if processor == nil {
            problem = .badRequest("malformed-multipart", "Malformed multipart body",
                                  "The multipart/form-data Content-Type needs a boundary parameter.")
        }
    }

    /// A collector with no libmicrohttpd behind it, for feeding pieces directly in tests.
    init(forTestingWithMaxParts maxParts: Int) {
        self.maxParts = maxParts
        processor = nil
    }

    /// Feeds one chunk of the body (`MHD_post_process`).
    func feed(_ data: UnsafePointer<CChar>, count: Int) {
        guard problem == nil, let processor else { return }
        if MHD_post_process(processor, data, count) != mhdYes, problem == nil {
            problem = .badRequest("malformed-multipart", "Malformed multipart body",
                                  "The multipart/form-data body could not be parsed (check the boundary and part headers).")
        }
    }

    /// Ends the body (`MHD_destroy_post_processor`, which reports a body cut short of its
    /// closing boundary) and returns the parts, or the problem with the body.
    func finish() -> Result<[MultipartPart], Problem> {
        if let processor {
            self.processor = nil
            if MHD_destroy_post_processor(processor) != mhdYes, problem == nil {
                problem = .badRequest("malformed-multipart", "Malformed multipart body",
                                      "The multipart/form-data body ended before its closing boundary.")
            }
        }
        if let problem { return .failure(problem) }
        return .success(parts)
    }

    /// Called by the iterator for each piece of a part. A piece starts a new part when it names
    /// another field or file, or restarts at offset 0 after the current part got bytes.
    /// (libmicrohttpd may announce a part with an empty piece at offset 0 and then deliver its
    /// first bytes at offset 0 again, depending on where its buffer boundaries fall.)
    func receive(name: String, filename: String?, contentType: String?, data: UnsafePointer<CChar>?, offset: UInt64, size: Int) -> Bool {
        let current = parts.last
        if current == nil || current?.name != name || current?.filename != filename || (offset == 0 && current?.bytes.isEmpty == false) {
            guard parts.count < maxParts else {
                problem = Problem(status: 413, type: "too-many-parts", title: "Too many parts",
                                  detail: "The multipart body has more than \(maxParts) parts (--max-parts).")
                return false
            }
            parts.append(MultipartPart(name: name, filename: filename, contentType: contentType, bytes: []))
        }
        if let data, size > 0 {
            parts[parts.count - 1].bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size))
        }
        return true
    }

    deinit {
        if let processor { MHD_destroy_post_processor(processor) }
    }
}

private let partIterator: MHD_PostDataIterator = { cls, _, key, filename, contentType, _, data, offset, size in
    guard let cls, let key else { return mhdNo }
    let collector = Unmanaged<MultipartCollector>.fromOpaque(cls).takeUnretainedValue()
    let accepted = collector.receive(
        name: String(cString: key), filename: filename.map { String(cString: $0) },
        contentType: contentType.map { String(cString: $0) }, data: data, offset: offset, size: size)
    return accepted ? mhdYes : mhdNo
}
