import ConcurrencyPrimitives

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The journal's lock file and current file, kept open by one process between its appends.
///
/// Each append checks with one `lstat` per path that the descriptors still name those files
/// (another process rotated the journal, a reader cleared it, someone removed the folder) and
/// opens them again when they do not. An entry then costs `flock`, two `lstat`s, one `write` and
/// the unlock, where opening both files for every entry cost eight calls. `flock` belongs to an
/// open file, so two threads sharing the lock file's descriptor would both "hold" it: one thread
/// at a time uses the kept files, and every append waits for them and for the lock together
/// within one `lockWaitMs`, so appends behind another process's hold give up side by side.
final class JournalAppender: Sendable {
    /// A descriptor and the file it was opened on.
    private struct OpenFile {
        var descriptor: Int32
        var device: UInt64
        var inode: UInt64

        init(_ descriptor: Int32, _ info: stat) {
            self.descriptor = descriptor
            device = UInt64(truncatingIfNeeded: info.st_dev)
            inode = UInt64(truncatingIfNeeded: info.st_ino)
        }

        /// Whether `info` (an `lstat` of the path) is this very file.
        func isFile(_ info: stat) -> Bool {
            UInt64(truncatingIfNeeded: info.st_dev) == device && UInt64(truncatingIfNeeded: info.st_ino) == inode
        }
    }

    private struct Files {
        var lock: OpenFile?
        var current: OpenFile?
        /// Where this process's last line ended in `current`: while the file is still that long,
        /// its last byte is that line's newline and need not be read.
        var end: Int?
    }

    private let files = Lock(Files())

    deinit {
        files.withLock { Self.closeAll(&$0) }
    }

    /// Appends `line` (ending in a newline) to `journal`'s current file, rotating it first when
    /// the line would take it past `maxFileBytes`.
    func append(_ line: [UInt8], to journal: JournalFile) throws {
        let deadline = JournalFile.lockDeadline()
        let appended = try files.withLock(waitingUntil: deadline.wallClock) { files in
            do {
                try append(line, to: journal, until: deadline.monotonicNanos, &files)
            } catch {
                // Whatever failed, the next append starts from freshly opened files.
                Self.closeAll(&files)
                throw error
            }
        }
        guard appended != nil else {
            throw FileSystemError(operation: "flock", path: journal.lockFile, errno: EWOULDBLOCK)
        }
    }

    private func append(_ line: [UInt8], to journal: JournalFile, until deadline: Int64, _ files: inout Files) throws {
        let lock = try lockedFile(journal, until: deadline, &files)
        defer { flock(lock, LOCK_UN) }
        var (descriptor, size) = try currentFile(journal, &files)
        let rotates = size + line.count > journal.maxFileBytes && size > 0
        if rotates {
            Self.close(&files.current, journal.current)
            _ = try Syscall.run("rename", journal.current) { rename(journal.current, journal.previous) }
            (descriptor, size) = try currentFile(journal, &files)
        }
        var line = line
        // A line a crash cut short has no newline: end it, or this entry would join it.
        if size > 0, size != files.end {
            var last: UInt8 = 0x0A
            if pread(descriptor, &last, 1, off_t(size - 1)) == 1, last != 0x0A { line.insert(0x0A, at: 0) }
        }
        // One write: O_APPEND puts the whole line at the end in one step.
        let written = try line.withUnsafeBytes { buffer in
            try Syscall.run("write", journal.current) { write(descriptor, buffer.baseAddress, buffer.count) }
        }
        guard written == line.count else {
            throw FileSystemError(kind: .noSpace, operation: "write (short)", path: journal.current)
        }
        files.end = size + written
    }

    /// The lock file's descriptor, locked. Checked after locking: a lock file removed (with its
    /// folder) while this process kept it open is locked by nobody else, so it is opened again.
    private func lockedFile(_ journal: JournalFile, until deadline: Int64, _ files: inout Files) throws -> Int32 {
        for _ in 0..<2 {
            let kept = try files.lock ?? openLockFile(journal)
            files.lock = kept
            try journal.waitForLock(kept.descriptor, until: deadline)
            var info = stat()
            if lstat(journal.lockFile, &info) == 0, kept.isFile(info) { return kept.descriptor }
            Self.close(&files.lock, journal.lockFile)
        }
        throw FileSystemError(kind: .other, operation: "flock (the lock file keeps changing)", path: journal.lockFile)
    }

    private func openLockFile(_ journal: JournalFile) throws -> OpenFile {
        let descriptor = try journal.openLockFile()
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            try? Syscall.close(descriptor, journal.lockFile)
            throw FileSystemError(operation: "fstat", path: journal.lockFile, errno: code)
        }
        return OpenFile(descriptor, info)
    }

    /// The current file's descriptor and size: the one kept while the path still names it.
    private func currentFile(_ journal: JournalFile, _ files: inout Files) throws -> (Int32, Int) {
        var info = stat()
        if let kept = files.current, lstat(journal.current, &info) == 0, kept.isFile(info) {
            return (kept.descriptor, Int(info.st_size))
        }
        Self.close(&files.current, journal.current)
        let opened = try journal.openForAppend()
        files.current = OpenFile(opened.descriptor, opened.status)
        files.end = nil
        return (opened.descriptor, Int(opened.status.st_size))
    }

    private static func close(_ file: inout OpenFile?, _ path: String) {
        guard let descriptor = file?.descriptor else { return }
        try? Syscall.close(descriptor, path)
        file = nil
    }

    private static func closeAll(_ files: inout Files) {
        close(&files.lock, "journal.lock")
        close(&files.current, "journal.jsonl")
        files.end = nil
    }
}
