import FeedStore

/// Streams a request body that a route reads as one file (an `application/x-tar` archive) into
/// the upload area as it arrives, instead of keeping it in memory.
///
/// Used only from the connection's handler thread, one call at a time.
final class BodySpool: @unchecked Sendable {
    /// Media types whose bodies are spooled.
    static let mediaTypes: Set<String> = ["application/x-tar"]

    /// The request's upload folder; it lives as long as the request that holds it.
    let folder: UploadFolder
    private var file: StreamingFile?
    /// Set when the body could not be written; the request then gets a 507.
    private(set) var problem: Problem?

    /// A spool in a new folder of `area`.
    init(area: UploadArea) throws {
        folder = try area.makeFolder()
        file = try folder.makeFile()
    }

    /// Appends one chunk of the body.
    func feed(_ data: UnsafePointer<CChar>, count: Int) {
        guard problem == nil, let file else { return }
        do {
            try file.append(UnsafeRawBufferPointer(start: data, count: count))
        } catch {
            self.file = nil
            problem = Self.storageProblem(error)
        }
    }

    /// Ends the body: the file it was written to, or the problem.
    func finish() -> Result<UploadedFile, Problem> {
        if let problem { return .failure(problem) }
        guard let file else { return .failure(Self.storageProblem(FileSystemError(kind: .other, operation: "close", path: "upload"))) }
        self.file = nil
        do { return .success(try file.finish()) } catch { return .failure(Self.storageProblem(error)) }
    }

    /// The 507 for an upload that could not be stored.
    static func storageProblem(_ error: any Error) -> Problem {
        Problem(status: 507, type: "insufficient-storage", title: "Upload could not be stored",
                detail: "The upload could not be written to the server's upload folder (\((error as? FileSystemError)?.kind ?? .other)); nothing was published.")
    }
}
