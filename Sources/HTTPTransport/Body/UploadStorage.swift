/// Where bodies that are streamed to disk go (multipart asset parts, spooled archives): the
/// application provides it, so the transport names no folder and knows no file layout.
package protocol UploadStorage: Sendable {
    /// A new, empty folder for one request's files; removed when the last reference goes.
    func makeFolder() throws(UploadStorageError) -> any UploadFolderHandle
}

/// One request's upload folder.
package protocol UploadFolderHandle: AnyObject, Sendable {
    /// Creates the next file in the folder, for writing.
    func makeFile() throws(UploadStorageError) -> any UploadFileWriter
}

/// A file written piece by piece as a body arrives.
package protocol UploadFileWriter: AnyObject {
    /// Appends bytes.
    func append(_ bytes: UnsafeRawBufferPointer) throws(UploadStorageError)
    /// Closes the file and describes it.
    func finish() throws(UploadStorageError) -> StoredUpload
}

/// A finished upload file.
package struct StoredUpload: Sendable, Equatable {
    /// Where it is.
    package let path: String
    /// Its size in bytes.
    package let byteCount: Int
    /// Lowercase hex SHA-256 of its bytes, computed while it was written.
    package let sha256: String

    /// Describes a finished file.
    package init(path: String, byteCount: Int, sha256: String) {
        self.path = path
        self.byteCount = byteCount
        self.sha256 = sha256
    }
}

/// Why an upload could not be stored, in a few words a client may read (never a path).
package struct UploadStorageError: Error, Equatable, Sendable {
    /// For example `noSpace`.
    package let reason: String

    /// An error with this reason.
    package init(reason: String) { self.reason = reason }
}
