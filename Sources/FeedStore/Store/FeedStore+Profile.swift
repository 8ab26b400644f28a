/// The group's widget profile, `profile.json` in its folder: written under the group's lock,
/// flushed before the rename that makes it visible, like the pointer.
extension FeedStore {
    /// The group's profile; nil when it has none. Throws when `profile.json` cannot be read or
    /// is not a valid profile (a hand-made file), naming the problem with a root-relative path.
    public func profile(group: String) throws(ProfileError) -> WidgetProfile? {
        guard SafeName.isGroupName(group) else { return nil }
        let layout = GroupLayout(root: root, group: group)
        // Taken before the read: a replacement after it is seen by the next call.
        let status = fileSystem.status(layout.profile)
        if let status, let known = profileMemo.value(layout.profile, status: status) { return known }
        let bytes: [UInt8]
        do { bytes = try fileSystem.readFile(layout.profile, limit: WidgetProfile.maxBytes) } catch {
            let failure = error as? FileSystemError
            if failure?.kind == .notFound { return nil }
            throw ProfileError(
                "", "\(group)/profile.json cannot be read: \(failure?.relativized(to: root).description ?? "\(error)")."
            )
        }
        let profile: WidgetProfile
        do { profile = try WidgetProfile(json: bytes) } catch {
            throw ProfileError(error.member, "\(group)/profile.json is not a valid profile: \(error.detail)")
        }
        if let status { profileMemo.remember(profile, layout.profile, status: status) }
        return profile
    }

    /// Stores `profile` as the group's (the group folder is made when missing: a profile may come
    /// before the first publish); true when the group had none.
    @discardableResult
    public func storeProfile(_ profile: WidgetProfile, group: String) throws(PublishError) -> Bool {
        let layout = try profileLayout(group)
        return try profilePublisher(layout).underGroupLock("profile") {
            let existed = fileSystem.status(layout.profile) != nil
            try fileSystem.removeTree(layout.profileTemporary)
            do {
                try fileSystem.writeFileDurably(layout.profileTemporary, contents: profile.fileBytes)
                try fileSystem.rename(layout.profileTemporary, to: layout.profile)
            } catch {
                try? fileSystem.removeTree(layout.profileTemporary)
                throw error
            }
            try fileSystem.syncDirectory(layout.directory)
            return !existed
        }
    }

    /// Removes the group's profile; false when it had none (nothing is created).
    @discardableResult
    public func removeProfile(group: String) throws(PublishError) -> Bool {
        let layout = try profileLayout(group)
        guard fileSystem.status(layout.profile) != nil else { return false }
        return try profilePublisher(layout).underGroupLock("profile") {
            guard fileSystem.status(layout.profile) != nil else { return false }
            try fileSystem.removeTree(layout.profile)
            try fileSystem.syncDirectory(layout.directory)
            return true
        }
    }

    private func profileLayout(_ group: String) throws(PublishError) -> GroupLayout {
        if let reason = SafeName.groupProblem(with: group) { throw .invalidGroupName(group, reason: reason) }
        return GroupLayout(root: root, group: group)
    }

    private func profilePublisher(_ layout: GroupLayout) -> FeedPublisher {
        FeedPublisher(
            fileSystem: fileSystem, root: root, layout: layout, configuration: configuration, clock: clock,
            schedule: retention)
    }
}
