import CMicroHTTPD

/// One part of a `multipart/form-data` body.
package struct MultipartPart: Sendable {
    /// The form field name (`name=` of Content-Disposition).
    package var name: String
    /// The file name, for file parts.
    package var filename: String?
    /// The part's own Content-Type, when given.
    package var contentType: String?
    /// The part's bytes, when kept in memory (the payload, or every part without an upload folder).
    package var bytes: [UInt8]
    /// The file the part was streamed to (asset parts).
    package var file: StoredUpload?

    /// A part (tests and fuzz targets build them directly).
    package init(
        name: String, filename: String? = nil, contentType: String? = nil, bytes: [UInt8] = [],
        file: StoredUpload? = nil
    ) {
        self.name = name
        self.filename = filename
        self.contentType = contentType
        self.bytes = bytes
        self.file = file
    }
}

/// Streams a `multipart/form-data` body through libmicrohttpd's `MHD_PostProcessor` into parts,
/// with a bound on their number. Owns the post processor (`MHD_destroy_post_processor` in deinit).
///
/// Used only from the connection's handler thread, one call at a time.
package final class MultipartCollector: @unchecked Sendable {
    private var processor: OpaquePointer?
    package private(set) var parts: [MultipartPart] = []
    /// Set when the body is malformed or over a limit; the request is then refused with it.
    package private(set) var refusal: TransportRefusal?
    private let maxParts: Int
    /// Most bytes kept in memory by all such parts together (the payload), in bytes.
    private let maxMemoryPartBytes: Int
    /// Bytes kept in memory so far.
    private var memoryBytes = 0
    /// The daemon's budget of body bytes in memory, which parts kept in memory count against as
    /// they arrive (nil: none).
    private let memoryBudget: InflightBudget?
    /// Bytes of `memoryBudget` this collector holds, given back in deinit unless taken.
    private var memoryReserved = 0
    /// Where asset parts are streamed; nil keeps every part in memory.
    private let storage: (any UploadStorage)?
    /// The request's upload folder, made when the first asset part starts; it lives as long
    /// as the request that holds it.
    package private(set) var folder: (any UploadFolderHandle)?
    private var openFile: (any UploadFileWriter)?
    /// Bytes in `openFile` so far (0 when no file is open: they are the current part's only).
    private var openFileBytes = 0
    /// Told of each part as it completes; handed to the request with the parts.
    package let observer: (any MultipartPartObserver)?

    /// Creates a collector for the connection's body (a boundary is needed); asset parts go to
    /// files in a folder of `storage`, the `payload` part stays in memory (all such parts together
    /// at most `maxMemoryPartBytes`). Without storage every part stays in memory. `observer` hears
    /// of each part as it completes.
    package init(
        connection: OpaquePointer, maxParts: Int, maxMemoryPartBytes: Int = .max, memoryBudget: InflightBudget? = nil,
        storage: (any UploadStorage)? = nil, observer: (any MultipartPartObserver)? = nil
    ) {
        self.maxParts = maxParts
        self.maxMemoryPartBytes = maxMemoryPartBytes
        self.memoryBudget = memoryBudget
        self.storage = storage
        self.observer = observer
        processor = MHD_create_post_processor(
            connection, 64 << 10, partIterator, Unmanaged.passUnretained(self).toOpaque())
        if processor == nil { refusal = .malformedMultipart(.noBoundary) }
    }

    /// A collector with no libmicrohttpd behind it, for feeding pieces directly in tests.
    package init(
        forTestingWithMaxParts maxParts: Int, memoryBudget: InflightBudget? = nil, storage: (any UploadStorage)? = nil,
        observer: (any MultipartPartObserver)? = nil
    ) {
        self.maxParts = maxParts
        maxMemoryPartBytes = .max
        self.memoryBudget = memoryBudget
        self.storage = storage
        self.observer = observer
        processor = nil
    }

    /// Feeds one chunk of the body (`MHD_post_process`).
    package func feed(_ data: UnsafePointer<CChar>, count: Int) {
        guard refusal == nil, let processor else { return }
        if MHD_post_process(processor, data, count) != mhdYes, refusal == nil {
            refusal = .malformedMultipart(.unparsable)
        }
    }

    /// Ends the body (`MHD_destroy_post_processor`, which reports a body cut short of its
    /// closing boundary) and returns the parts, or throws what is wrong with the body.
    package func finish() throws(TransportRefusal) -> [MultipartPart] {
        if let processor {
            self.processor = nil
            if MHD_destroy_post_processor(processor) != mhdYes, refusal == nil {
                refusal = .malformedMultipart(.unterminated)
            }
        }
        if refusal == nil { closeOpenFile() }
        if let refusal { throw refusal }
        return parts
    }

    /// Called by the iterator for each piece of a part. A piece starts a new part when it names
    /// another field or file, or restarts at offset 0 after the current part got bytes.
    /// (libmicrohttpd may announce a part with an empty piece at offset 0 and then deliver its
    /// first bytes at offset 0 again, depending on where its buffer boundaries fall.)
    package func receive(
        name: String, filename: String?, contentType: String?, data: UnsafePointer<CChar>?, offset: UInt64, size: Int
    ) -> Bool {
        let current = parts.last
        let currentHasContent = current?.bytes.isEmpty == false || openFileBytes > 0
        if current == nil || current?.name != name || current?.filename != filename
            || (offset == 0 && currentHasContent)
        {
            guard parts.count < maxParts else {
                refusal = .tooManyParts(maxParts)
                return false
            }
            completePart()
            guard refusal == nil else { return false }
            parts.append(MultipartPart(name: name, filename: filename, contentType: contentType, bytes: []))
            if name != "payload", let storage { startFile(storage) }
            guard refusal == nil else { return false }
        }
        if let data, size > 0 { return append(UnsafeRawBufferPointer(start: data, count: size)) }
        return true
    }

    /// Streams an asset part to a new file in the request's folder.
    private func startFile(_ storage: any UploadStorage) {
        do throws(UploadStorageError) {
            let folder: any UploadFolderHandle
            if let existing = self.folder { folder = existing } else { folder = try storage.makeFolder() }
            self.folder = folder
            openFile = try folder.makeFile()
            openFileBytes = 0
        } catch {
            refusal = .uploadNotStored(reason: error.reason)
        }
    }

    private func append(_ piece: UnsafeRawBufferPointer) -> Bool {
        if let openFile {
            do throws(UploadStorageError) { try openFile.append(piece) } catch {
                refusal = .uploadNotStored(reason: error.reason)
                return false
            }
            openFileBytes += piece.count
            return true
        }
        // Together, not each: repeated payload parts would otherwise each hold up to the limit
        // until the handler refused the second.
        guard memoryBytes + piece.count <= maxMemoryPartBytes else {
            refusal = .memoryPartsTooLarge(limit: maxMemoryPartBytes)
            return false
        }
        if let memoryBudget {
            let cost = TransportSettings.memoryCost(ofBodyBytes: piece.count)
            guard memoryBudget.reserve(cost) else {
                refusal = .memoryLimit(memoryBudget.limit)
                return false
            }
            memoryReserved += cost
        }
        memoryBytes += piece.count
        parts[parts.count - 1].bytes.append(contentsOf: piece)
        return true
    }

    /// Ends the part before another starts: finishes its file, if it has one, and tells the
    /// observer.
    private func completePart() {
        closeOpenFile()
        guard refusal == nil, let observer, let part = parts.last else { return }
        observer.partCompleted(part)
    }

    /// Finishes the file of the part before, recording it in that part.
    private func closeOpenFile() {
        guard let file = openFile else { return }
        openFile = nil
        openFileBytes = 0
        do throws(UploadStorageError) { parts[parts.count - 1].file = try file.finish() } catch {
            refusal = .uploadNotStored(reason: error.reason)
        }
    }

    /// Hands the memory budget this collector holds to the caller, who gives it back once the
    /// parts are no longer held.
    package func takeMemoryReservation() -> Int {
        defer { memoryReserved = 0 }
        return memoryReserved
    }

    deinit {
        memoryBudget?.release(memoryReserved)
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
