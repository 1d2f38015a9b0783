import ISOBMFF

/// `TagFile.edit` with a closure: the form whose closure throws nothing throws a plain
/// ``RemuxError``; the form whose closure throws gives that error back unchanged
/// (``TagFile/EditError``), so that typed throws need not turn a caller's error into ours.
extension TagFile {
    /// Changes the tags of the file at `path` with `change` and writes them (unless
    /// `dryRun`, or nothing changed).
    ///
    /// A `change` that throws picks the other form, whose error is an ``EditError``: it gives
    /// the closure's error back unchanged.
    @discardableResult
    public static func edit(_ path: String, dryRun: Bool = false,
                            _ change: (inout ItemList) -> Void) throws(RemuxError) -> TagWriteResult {
        try naming(path) { try edit(path, dryRun: dryRun, stoppingAfterWrite: nil, change) }
    }

    /// Changes the tags of the file at `path` with `change`, which may throw errors of its own,
    /// and writes them (unless `dryRun`, or nothing changed).
    ///
    /// What `change` throws ends the edit, nothing written, and is thrown unchanged as
    /// ``EditError/change(_:)``; the edit's own failure is ``EditError/edit(_:)``. (A
    /// `change` that throws nothing picks the form that throws a plain ``RemuxError``.)
    ///
    /// ```swift
    /// do {
    ///     try TagFile.edit("song.m4a") { tags in
    ///         tags.set(.text(["Blue in Green"]), for: try TagKey.parse("title"))
    ///     }
    /// } catch .change(let error) {
    ///     print("not a key: \(error)")   // the TagError TagKey.parse threw
    /// } catch .edit(let error) {
    ///     print(error.code, error)      // a RemuxError
    /// }
    /// ```
    @discardableResult
    public static func edit<Failure: Error>(_ path: String, dryRun: Bool = false,
                                            _ change: (inout ItemList) throws(Failure) -> Void)
        throws(EditError<Failure>) -> TagWriteResult {
        var thrown: Failure?
        do {
            return try naming(path) {
                try edit(path, dryRun: dryRun, stoppingAfterWrite: nil) { (tags: inout ItemList) throws in
                    do throws(Failure) {
                        try change(&tags)
                    } catch {
                        thrown = error
                        throw ChangeFailed()
                    }
                }
            }
        } catch {
            if let thrown { throw .change(thrown) }
            throw .edit(error)
        }
    }

    /// The `async` form of ``edit(_:applying:dryRun:rewritingLinkedFiles:)-3tyg1``: the same edit,
    /// its file I/O on a thread of its own, not on the cooperative pool.
    ///
    /// A task cancelled before the edit starts throws ``RemuxError/Code/cancelled`` with the
    /// file untouched. Once the edit has started it finishes: an in-place edit is crash-safe
    /// write by write and a rewrite is published whole, so cancelling never leaves the file
    /// half-edited. (In top-level code Swift picks the synchronous form; call it from a
    /// `Task` or an `async` function.)
    @discardableResult
    public static func edit(_ path: String, applying changes: TagChanges, dryRun: Bool = false,
                            rewritingLinkedFiles: Bool = true) async throws(RemuxError) -> TagWriteResult {
        try await onOwnThread { isCancelled throws(RemuxError) in
            if isCancelled() { throw RemuxError.cancelled }
            return try edit(path, applying: changes, dryRun: dryRun, rewritingLinkedFiles: rewritingLinkedFiles)
        }
    }

    /// Why an edit whose closure can throw failed: the edit's own error, or the closure's.
    public enum EditError<Failure: Error>: Error {
        /// The edit failed (the file is left as it was, unless the error says otherwise).
        case edit(RemuxError)
        /// The closure threw this, unchanged; nothing was written.
        case change(Failure)
    }

    /// Stands for the caller's error on its way out of the `edit` whose closure throws.
    struct ChangeFailed: Error {}
}
