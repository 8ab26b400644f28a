/// Where each file of one group lives under the store's root (format v1 layout).
public struct GroupLayout: Sendable {
    /// The group's name.
    public let group: String
    /// The group's folder.
    public let directory: String
    /// `generations/`, or where a DELETE moved it (`DeletedGenerations`).
    public let generations: String
    /// The path of `generations` below the root, one name each (for `FileSystem.openBeneath`).
    public let generationsBelowRoot: [String]

    /// The layout of group `name` under `root`.
    public init(root: String, group name: String) {
        group = name
        directory = Self.join(root, name)
        generations = directory + "/generations"
        generationsBelowRoot = [name, "generations"]
    }

    /// The layout of generations kept elsewhere below `root` (`components`, one name each): only
    /// the generation paths mean anything; the group's own files stay in `directory`.
    init(root: String, group name: String, generationsAt components: [String]) {
        group = name
        directory = Self.join(root, name)
        generations = components.reduce(root.hasSuffix("/") ? String(root.dropLast()) : root) { $0 + "/" + $1 }
        generationsBelowRoot = components
    }

    private static func join(_ root: String, _ name: String) -> String {
        root.hasSuffix("/") ? root + name : root + "/" + name
    }

    /// `current.json`, the pointer.
    public var pointer: String { directory + "/current.json" }
    /// Temporary file written and flushed before it is renamed over the pointer.
    public var pointerTemporary: String { directory + "/current.json.tmp" }
    /// `profile.json`, the group's widget profile (WidgetBridge's readers ignore it).
    public var profile: String { directory + "/profile.json" }
    /// Temporary file written and flushed before it is renamed over the profile.
    public var profileTemporary: String { directory + "/profile.json.tmp" }
    /// The advisory lock file that serialises publishers (readers ignore it).
    public var lockFile: String { directory + "/publish.lock" }

    /// `generations/<id>`.
    public func generation(_ id: String) -> String { generations + "/" + id }
    /// `generations/<id>.tmp`, a write in progress.
    public func temporaryGeneration(_ id: String) -> String { generation(id) + GenerationID.temporarySuffix }
    /// `generations/<id>/feed.json`.
    public func envelope(_ id: String) -> String { generation(id) + "/feed.json" }
    /// `generations/<id>/assets`.
    public func assets(_ id: String) -> String { generation(id) + "/assets" }
    /// `generations/<id>/assets/<name>`.
    public func asset(_ id: String, _ name: String) -> String { assets(id) + "/" + name }
}
