/// Told of a multipart body's parts as they finish arriving, before the body ends: what the
/// application can start on while the rest of the body is still on its way. It lives as long as
/// the request (`HTTPRequest.partObserver`): released when the request is answered, refused or
/// abandoned, which is how it learns that no more parts come.
///
/// Called on the connection's thread: an observer hands work elsewhere and returns at once.
package protocol MultipartPartObserver: AnyObject, Sendable {
    /// A part is complete: in memory (`bytes`) or streamed to its `file`. The body's last part is
    /// not announced: the body's end follows it at once.
    func partCompleted(_ part: MultipartPart)
}
