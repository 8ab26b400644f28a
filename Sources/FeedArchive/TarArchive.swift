import CArchive
import FeedStore

#if canImport(Glibc)
import Glibc
#endif

/// Why libarchive could not read or write a tar.
package struct TarError: Error, CustomStringConvertible {
    /// libarchive's message (it names entries, never server paths).
    package let description: String

    package init(_ description: String) { self.description = description }

    /// The current error of `handle`, or `fallback`.
    init(_ handle: OpaquePointer, _ fallback: String) {
        description = archive_error_string(handle).map { String(cString: $0) } ?? fallback
    }
}

/// Why an entry's data was not read whole.
package enum TarDataError: Error {
    /// libarchive could not read it.
    case unreadable(TarError)
    /// The data skips ahead of the bytes the archive stores for it: a sparse map's hole, or a
    /// size (`GNU.sparse.size`, `SCHILY.realsize`, a GNU header's real size) past the stored
    /// data. libarchive's `archive_read_data` would fill either with zeros the body never held.
    case hole
    /// More than the reader's limit came, over every entry; `reached` is the total it would be.
    case overLimit(reached: Int)
    /// The piece function's own error.
    case output(any Error)
}

/// Reads a tar (ustar, pax, GNU; uncompressed or gzip-compressed) entry by entry. Owns the libarchive read
/// handle (`archive_read_new` in init, `archive_read_free` in deinit) and, for a file, its
/// descriptor (opened here, closed in deinit). Files are read through their descriptor, not by
/// name, so libarchive's messages (which may reach a problem's detail) never name a server path.
package final class TarReader {
    /// What an entry is; only regular files and folders are ever unpacked.
    package enum Kind: Equatable { case regular, directory, symbolicLink, hardLink, other }

    /// One entry's header.
    package struct Entry {
        /// The path as stored (nil when it is not UTF-8).
        package var path: String?
        package var kind: Kind
        /// The declared size of its data (for a sparse entry, the size with its holes).
        package var size: Int
        /// Whether libarchive found a sparse map (GNU old, pax 0.0, 0.1 or 1.0, Solaris) with a
        /// data block; a map of holes alone shows only as a `size` past the stored data.
        package var isSparse: Bool
    }

    private let handle: OpaquePointer
    /// The bytes read from memory, kept alive as long as libarchive may read them.
    private let memory: [UInt8]?
    /// The file's descriptor (-1 for memory).
    private let descriptor: Int32
    /// Data bytes read so far, over every entry.
    package private(set) var dataBytes = 0
    /// The whole archive's size (the file's, or the bytes in memory): what the body brought,
    /// which no honest uncompressed tar unpacks past, since it stores every byte of every entry.
    package let archiveBytes: Int
    /// Whether the tar came gzip-compressed (it may then honestly unpack past `archiveBytes`).
    package private(set) var isCompressed = false

    /// A reader over an uploaded file.
    package convenience init(path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { throw TarError("the uploaded archive cannot be opened (errno \(errno))") }
        try self.init(memory: nil, descriptor: descriptor)
    }

    /// A reader over bytes in memory.
    package convenience init(bytes: [UInt8]) throws {
        try self.init(memory: bytes, descriptor: -1)
    }

    private init(memory: [UInt8]?, descriptor: Int32) throws {
        guard let handle = archive_read_new() else {
            if descriptor >= 0 { close(descriptor) }
            throw TarError("libarchive could not allocate a reader")
        }
        self.handle = handle
        self.memory = memory
        self.descriptor = descriptor
        if let memory {
            archiveBytes = memory.count
        } else {
            var status = stat()
            guard fstat(descriptor, &status) == 0 else {
                let failure = errno
                archive_read_free(handle)
                close(descriptor)
                throw TarError("the uploaded archive cannot be measured (errno \(failure))")
            }
            archiveBytes = Int(status.st_size)
        }
        archive_read_support_format_tar(handle)
        // gzip only through libarchive's own zlib: without it, libarchive would run `gzip -d`.
        if archive_zlib_version() != nil { archive_read_support_filter_gzip(handle) }
        let status: Int32
        if let memory {
            status = memory.withUnsafeBytes { archive_read_open_memory(handle, $0.baseAddress, $0.count) }
        } else {
            status = archive_read_open_fd(handle, descriptor, 64 << 10)
        }
        guard status == ARCHIVE_OK else { throw TarError(handle, "the archive cannot be opened") }
        isCompressed = archive_filter_code(handle, 0) != ARCHIVE_FILTER_NONE
    }

    deinit {
        archive_read_free(handle)
        if descriptor >= 0 { close(descriptor) }
    }

    /// The next entry's header, or nil at the end of the archive.
    package func next() throws(TarError) -> Entry? {
        var entry: OpaquePointer?
        let status = archive_read_next_header(handle, &entry)
        if status == ARCHIVE_EOF { return nil }
        guard status >= ARCHIVE_WARN, let entry else { throw TarError(handle, "the archive is malformed") }
        let kind: Kind
        if archive_entry_hardlink(entry) != nil {
            kind = .hardLink
        } else if CArchive_entry_is_symlink(entry) != 0 {
            kind = .symbolicLink
        } else if CArchive_entry_is_directory(entry) != 0 {
            kind = .directory
        } else if CArchive_entry_is_regular(entry) != 0 {
            kind = .regular
        } else {
            kind = .other
        }
        let size = archive_entry_size_is_set(entry) != 0 ? Int(clamping: archive_entry_size(entry)) : 0
        let path = archive_entry_pathname(entry).flatMap { String(validatingCString: $0) }
        let isSparse = archive_entry_sparse_count(entry) > 0
        return Entry(path: path, kind: kind, size: max(0, size), isSparse: isSparse)
    }

    /// Reads the current entry's data in pieces, as stored: blocks straight from libarchive
    /// (`archive_read_data_block`), never the zeros `archive_read_data` makes of a hole, which
    /// is refused (`.hole`) before a byte past it is passed on. Stops with `.overLimit` once more
    /// than `limit` bytes came (over all entries), whatever the header declared.
    package func readData(
        limit: Int, _ piece: (UnsafeRawBufferPointer) throws -> Void
    ) throws(TarDataError) {
        // Where the next stored byte belongs in the entry; a block anywhere else skips a hole.
        var expected: Int64 = 0
        while true {
            var block: UnsafeRawPointer?
            var count = 0
            var offset: la_int64_t = 0
            let status = archive_read_data_block(handle, &block, &count, &offset)
            if status == ARCHIVE_EOF {
                // The end's offset is the entry's size: past the bytes stored, a trailing hole.
                guard offset <= expected else { throw .hole }
                return
            }
            guard status == ARCHIVE_OK || status == ARCHIVE_WARN else {
                throw .unreadable(TarError(handle, "an entry's data cannot be read"))
            }
            guard offset == expected else { throw .hole }
            let (total, overflow) = dataBytes.addingReportingOverflow(count)
            guard !overflow, total <= limit else { throw .overLimit(reached: overflow ? .max : total) }
            dataBytes = total
            expected += la_int64_t(count)
            guard count > 0, let block else { continue }
            do { try piece(UnsafeRawBufferPointer(start: block, count: count)) } catch { throw .output(error) }
        }
    }
}

/// Writes a pax-restricted tar (plain ustar whenever names allow) to an output function, block
/// by block as libarchive hands them over. Owns the libarchive write handle (`archive_write_new`
/// in init, `archive_write_free` in deinit).
package final class TarWriter {
    /// libarchive's client data: the output and the first error it threw.
    private final class Sink {
        let output: (UnsafeRawBufferPointer) throws -> Void
        var failure: (any Error)?
        init(_ output: @escaping (UnsafeRawBufferPointer) throws -> Void) { self.output = output }
    }

    private let handle: OpaquePointer
    private let sink: Sink
    private let modificationSeconds: Int

    /// A writer whose entries all carry `modificationSeconds` (so an export is a pure function
    /// of the generation), writing through `output`.
    package init(modificationSeconds: Int, output: @escaping (UnsafeRawBufferPointer) throws -> Void) throws {
        guard let handle = archive_write_new() else { throw TarError("libarchive could not allocate a writer") }
        self.handle = handle
        sink = Sink(output)
        self.modificationSeconds = modificationSeconds
        archive_write_set_format_pax_restricted(handle)
        archive_write_set_bytes_in_last_block(handle, 1)
        let status = archive_write_open2(
            handle, Unmanaged.passUnretained(sink).toOpaque(), nil,
            { _, context, buffer, length in
                guard let context, let buffer else { return -1 }
                let sink = Unmanaged<Sink>.fromOpaque(context).takeUnretainedValue()
                do {
                    try sink.output(UnsafeRawBufferPointer(start: buffer, count: length))
                } catch {
                    sink.failure = sink.failure ?? error
                    return -1
                }
                return la_ssize_t(length)
            }, nil, nil)
        guard status == ARCHIVE_OK else { throw TarError(handle, "the archive cannot be started") }
    }

    deinit { archive_write_free(handle) }

    /// A whole archive in memory (tests and the fuzz target).
    package static func bytes(modificationSeconds: Int, _ build: (TarWriter) throws -> Void) throws -> [UInt8] {
        final class Buffer { var bytes: [UInt8] = [] }
        let buffer = Buffer()
        let writer = try TarWriter(modificationSeconds: modificationSeconds) { buffer.bytes.append(contentsOf: $0) }
        try build(writer)
        try writer.finish()
        return buffer.bytes
    }

    /// Adds a folder entry.
    package func addDirectory(_ path: String) throws {
        try add(path, size: 0, directory: true) { _ in }
    }

    /// Adds a regular file with these bytes.
    package func addFile(_ path: String, _ bytes: [UInt8]) throws {
        try addFile(path, size: bytes.count) { emit in try bytes.withUnsafeBytes(emit) }
    }

    /// Adds a regular file of `size` bytes, which `contents` passes, in pieces, to the function
    /// it is given; fewer or more bytes than `size` are an error.
    package func addFile(
        _ path: String, size: Int, contents: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void
    ) throws {
        try add(path, size: size, directory: false) { emitted in
            var total = 0
            try contents { piece in
                total += piece.count
                guard total <= size else { throw TarError("'\(path)' grew while it was archived") }
                var written = 0
                while written < piece.count {
                    guard let base = piece.baseAddress else { return }
                    let count = archive_write_data(handle, base + written, piece.count - written)
                    guard count > 0 else { throw failure("an entry's data cannot be written") }
                    written += count
                }
            }
            guard total == size else { throw TarError("'\(path)' shrank while it was archived") }
        }
    }

    private func add(_ path: String, size: Int, directory: Bool, data: (Int) throws -> Void) throws {
        guard let entry = archive_entry_new() else { throw TarError("libarchive could not allocate an entry") }
        defer { archive_entry_free(entry) }
        archive_entry_set_pathname(entry, path)
        if directory { CArchive_entry_set_directory(entry) } else { CArchive_entry_set_regular(entry) }
        archive_entry_set_size(entry, la_int64_t(size))
        archive_entry_set_mtime(entry, time_t(modificationSeconds), 0)
        guard archive_write_header(handle, entry) == ARCHIVE_OK else {
            throw failure("an entry header cannot be written")
        }
        try data(size)
    }

    /// The output's own error when it failed, libarchive's otherwise.
    private func failure(_ fallback: String) -> any Error {
        sink.failure ?? TarError(handle, fallback)
    }

    /// Ends the archive (the last block is written).
    package func finish() throws {
        guard archive_write_close(handle) == ARCHIVE_OK else { throw failure("the archive cannot be finished") }
    }
}
