import CMicroHTTPD
import FeedStore

/// One part of a `multipart/form-data` body.
struct MultipartPart: Sendable {
    /// The form field name (`name=` of Content-Disposition).
    var name: String
    /// The file name, for file parts.
    var filename: String?
    /// The part's own Content-Type, when given.
    var contentType: String?
    /// The part's bytes, when kept in memory (the payload, or every part without an upload folder).
    var bytes: [UInt8]
    /// The file the part was streamed to (asset parts).
    var file: UploadedFile?

    /// The part's content wherever it is.
    var source: AssetSource { file.map { .file($0) } ?? .bytes(bytes) }
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
    /// Most bytes kept in memory by all such parts together (the payload), in bytes.
    private let maxMemoryPartBytes: Int
    /// Bytes kept in memory so far.
    private var memoryBytes = 0
    /// Where asset parts are streamed; nil keeps every part in memory.
    private let makeFolder: (() throws -> UploadFolder)?
    /// The request's upload folder, made when the first asset part starts; it lives as long
    /// as the request that holds it.
    private(set) var folder: UploadFolder?
    private var openFile: StreamingFile?

    /// Creates a collector for the connection's body (a boundary is needed); asset parts go to
    /// files in a folder from `makeFolder`, the `payload` part stays in memory (at most
    /// `maxMemoryPartBytes`).
    init(connection: OpaquePointer, maxParts: Int, maxMemoryPartBytes: Int = .max, makeFolder: (() throws -> UploadFolder)? = nil) {
        self.maxParts = maxParts
        self.maxMemoryPartBytes = maxMemoryPartBytes
        self.makeFolder = makeFolder
        processor = MHD_create_post_processor(connection, 64 << 10, partIterator, Unmanaged.passUnretained(self).toOpaque())
        if processor == nil {
            problem = .badRequest("malformed-multipart", "Malformed multipart body",
                                  "The multipart/form-data Content-Type needs a boundary parameter.")
        }
    }

    /// A collector with no libmicrohttpd behind it, for feeding pieces directly in tests.
    init(forTestingWithMaxParts maxParts: Int, makeFolder: (() throws -> UploadFolder)? = nil) {
        self.maxParts = maxParts
        maxMemoryPartBytes = .max
        self.makeFolder = makeFolder
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
        if problem == nil { closeOpenFile() }
        if let problem { return .failure(problem) }
        return .success(parts)
    }

    /// Called by the iterator for each piece of a part. A piece starts a new part when it names
    /// another field or file, or restarts at offset 0 after the current part got bytes.
    /// (libmicrohttpd may announce a part with an empty piece at offset 0 and then deliver its
    /// first bytes at offset 0 again, depending on where its buffer boundaries fall.)
    func receive(name: String, filename: String?, contentType: String?, data: UnsafePointer<CChar>?, offset: UInt64, size: Int) -> Bool {
        let current = parts.last
        let currentHasContent = current?.bytes.isEmpty == false || (openFile?.byteCount ?? 0) > 0
        if current == nil || current?.name != name || current?.filename != filename || (offset == 0 && currentHasContent) {
            guard parts.count < maxParts else {
                problem = Problem(status: 413, type: "too-many-parts", title: "Too many parts",
                                  detail: "The multipart body has more than \(maxParts) parts (--max-parts).")
                return false
            }
            closeOpenFile()
            guard problem == nil else { return false }
            parts.append(MultipartPart(name: name, filename: filename, contentType: contentType, bytes: []))
            if name != "payload", let makeFolder { startFile(makeFolder) }
            guard problem == nil else { return false }
        }
        if let data, size > 0 { return append(UnsafeRawBufferPointer(start: data, count: size)) }
        return true
    }

    /// Streams an asset part to a new file in the request's folder.
    private func startFile(_ makeFolder: () throws -> UploadFolder) {
        do {
            if folder == nil { folder = try makeFolder() }
            openFile = try folder?.makeFile()
        } catch {
            problem = Problem(status: 507, type: "insufficient-storage", title: "Upload could not be stored",
                              detail: "The upload could not be written to the server's upload folder (\((error as? FileSystemError)?.kind ?? .other)); nothing was published.")
        }
    }

    private func append(_ piece: UnsafeRawBufferPointer) -> Bool {
        if let openFile {
            do { try openFile.append(piece) } catch {
                problem = Problem(status: 507, type: "insufficient-storage", title: "Upload could not be stored",
                                  detail: "The upload could not be written to the server's upload folder (\((error as? FileSystemError)?.kind ?? .other)); nothing was published.")
                return false
            }
            return true
        }
        // Together, not each: repeated payload parts would otherwise each hold up to the limit
        // until the handler refused the second.
        guard memoryBytes + piece.count <= maxMemoryPartBytes else {
            problem = PublishProblems.payloadTooLarge("The payload part is larger than \(maxMemoryPartBytes) bytes (--max-payload-bytes; parts kept in memory count together).")
            return false
        }
        memoryBytes += piece.count
        parts[parts.count - 1].bytes.append(contentsOf: piece)
        return true
    }

    /// Finishes the file of the part before, recording it in that part.
    private func closeOpenFile() {
        guard let file = openFile else { return }
        openFile = nil
        do { parts[parts.count - 1].file = try file.finish() } catch {
            problem = Problem(status: 507, type: "insufficient-storage", title: "Upload could not be stored",
                              detail: "The upload could not be written to the server's upload folder; nothing was published.")
        }
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
