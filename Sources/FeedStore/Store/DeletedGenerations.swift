/// Generations a DELETE took out of a group, kept in the server's own area of the root
/// (`.feed-server-deleted/<group>/<epochMs>/`, the group's whole `generations/` folder as it was)
/// through the grace period, so a widget still showing one gets its images; removed after it.
///
/// WidgetBridge's readers never look there: they read `<root>/<group>/`, and the area's name is no
/// group name. Nothing of a DELETE stays in the group folder.
struct DeletedGenerations {
    /// The area's folder under the root.
    static let folderName = ".feed-server-deleted"

    let fileSystem: any FileSystem
    let root: String
    let gracePeriodMs: Int64

    private var area: String { (root.hasSuffix("/") ? root : root + "/") + Self.folderName }
    private func groupFolder(_ group: String) -> String { area + "/" + group }

    /// Moves `layout.generations` into the area, stamped `now` (or the next free millisecond),
    /// flushing every folder it created and the move's destination. The caller flushes the group
    /// folder, the move's source.
    func retire(_ layout: GroupLayout, group: String, now: Int64) throws {
        if try fileSystem.ensureDirectory(area) { try fileSystem.syncDirectory(root) }
        if try fileSystem.ensureDirectory(groupFolder(group)) { try fileSystem.syncDirectory(area) }
        var stamp = now
        while fileSystem.status(groupFolder(group) + "/" + String(stamp)) != nil, stamp < now + 1000 { stamp += 1 }
        try fileSystem.rename(layout.generations, to: groupFolder(group) + "/" + String(stamp))
        try fileSystem.syncDirectory(groupFolder(group))
    }

    /// The layout whose generations hold `generationId` among the group's deletions still within
    /// the grace period, newest first; nil when none does. Deletions past it that the look finds
    /// are removed on the way, so an idle server does not keep them.
    func layout(holding generationId: String, group: String, now: Int64) -> GroupLayout? {
        removeExpired(group: group, now: now)
        for stamp in stamps(group).filter({ now - $0 < gracePeriodMs }).sorted(by: >) {
            let layout = GroupLayout(
                root: root, group: group, generationsAt: [Self.folderName, group, String(stamp)])
            if fileSystem.status(layout.generation(generationId))?.kind == .directory { return layout }
        }
        return nil
    }

    /// Removes every group's deletions past the grace period. Safe without any lock: a DELETE
    /// moves a folder only under a fresh stamp, which is not past it.
    func sweepAll(now: Int64) {
        for entry in (try? fileSystem.listDirectory(area)) ?? [] where entry.isDirectory {
            removeExpired(group: entry.name, now: now)
        }
    }

    /// Removes the group's folder in the area once it holds nothing: under the group's lock, so no
    /// DELETE of the group is between making it and moving a folder into it.
    func dropFolderIfEmpty(group: String) {
        if (try? fileSystem.listDirectory(groupFolder(group)))?.isEmpty == true {
            try? fileSystem.removeTree(groupFolder(group))
        }
    }

    private func removeExpired(group: String, now: Int64) {
        for stamp in stamps(group) where now - stamp >= gracePeriodMs {
            try? fileSystem.removeTree(groupFolder(group) + "/" + String(stamp))
        }
    }

    private func stamps(_ group: String) -> [Int64] {
        ((try? fileSystem.listDirectory(groupFolder(group))) ?? []).filter(\.isDirectory).compactMap { Int64($0.name) }
    }
}
