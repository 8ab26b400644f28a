/// Clearing a group (`DELETE /feeds/{group}`) and sweeping what DELETEs leave behind.
extension FeedPublisher {
    /// Clears the group: `generations/` is moved out of readers' sight in one step, into the
    /// server's area for deleted generations (served assets stay readable through the grace
    /// period), the pointer removed, and the group folder flushed. The group folder and its lock stay.
    func clear(precondition: WritePrecondition?) throws(PublishError) -> Generation? {
        guard fileSystem.status(layout.directory)?.kind == .directory else {
            if let precondition, !precondition.holds(for: nil) { throw .preconditionFailed(servedFingerprint: nil) }
            return nil
        }
        return try underGroupLock("clear") {
            let served = reader.read(schemaVersion: nil).served
            if let precondition, !precondition.holds(for: served) {
                throw PublishError.preconditionFailed(servedFingerprint: served?.fingerprint)
            }
            if fileSystem.status(layout.generations) != nil {
                try deleted.retire(layout, group: layout.group, now: clock.nowEpochMs())
            }
            do {
                try fileSystem.removeTree(layout.pointer)
                try fileSystem.syncDirectory(layout.directory)
            } catch let error as FileSystemError {
                throw VisibleNotDurable(underlying: error)
            }
            sweepDeletedGenerations()
            return served
        }
    }

    /// Removes what an interrupted DELETE of an earlier version left in this group, under the
    /// lock; a no-op (and no lock file written) when there is nothing to remove.
    func sweepLeftovers() throws(PublishError) {
        let entries = (try? fileSystem.listDirectory(layout.directory)) ?? []
        guard entries.contains(where: { $0.isDirectory && $0.name.hasPrefix(Self.deletedPrefix) }) else { return }
        try underGroupLock("sweep") { sweepDeletedGenerations() }
    }

    /// Folders a DELETE of an earlier version renamed `generations/` to, inside the group folder.
    static let deletedPrefix = ".deleted-generations-"

    private var deleted: DeletedGenerations {
        DeletedGenerations(fileSystem: fileSystem, root: root, gracePeriodMs: configuration.gracePeriodMs)
    }

    /// Removes what DELETEs left behind: deleted generations past the grace period (every
    /// group's), and `.deleted-generations-*` folders an earlier version left in the group folder.
    /// Readers never look at either; called holding the lock, failures retried next time.
    func sweepDeletedGenerations() {
        deleted.sweepAll(now: clock.nowEpochMs())
        deleted.dropFolderIfEmpty(group: layout.group)
        guard let entries = try? fileSystem.listDirectory(layout.directory) else { return }
        for entry in entries where entry.isDirectory && entry.name.hasPrefix(Self.deletedPrefix) {
            try? fileSystem.removeTree(layout.directory + "/" + entry.name)
        }
    }
}
