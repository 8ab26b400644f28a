/// Which `--on-publish` runs start when: per group one run at a time and at most one waiting, the
/// latest event replacing an older one that has not started (a hook that syncs a folder needs
/// only the newest state, and three quick publishes should not queue three slow syncs); at most
/// `maxRunning` groups at once, the rest started in the order they became ready.
///
/// A value without processes or threads: `PublishHook` holds it under a lock and runs what each
/// transition returns.
struct HookSchedule<Event> {
    /// How many groups' hooks may run at once.
    let maxRunning: Int
    /// Groups whose hook is running.
    private(set) var running: Set<String> = []
    /// The newest event of each group that has one waiting.
    private(set) var waiting: [String: Event] = [:]
    /// Groups with a waiting event and no running hook, oldest first, until a run slot frees.
    private(set) var ready: [String] = []
    /// Events replaced by a newer one of their group before they started.
    private(set) var coalesced = 0

    /// A schedule that runs at most `maxRunning` groups' hooks at once (at least one).
    init(maxRunning: Int) {
        self.maxRunning = max(1, maxRunning)
    }

    /// An event of `group` arrived: the run to start now, if any.
    mutating func submitted(_ event: Event, group: String) -> (group: String, event: Event)? {
        if waiting.updateValue(event, forKey: group) != nil {
            coalesced += 1
            return nil
        }
        if running.contains(group) { return nil }
        ready.append(group)
        return startNext()
    }

    /// The hook of `group` ended: the next run to start, if any (this group's waiting event, or
    /// the oldest ready group's).
    mutating func finished(group: String) -> (group: String, event: Event)? {
        guard running.remove(group) != nil else { return nil }
        if waiting[group] != nil { ready.append(group) }
        return startNext()
    }

    private mutating func startNext() -> (group: String, event: Event)? {
        guard running.count < maxRunning, !ready.isEmpty else { return nil }
        let group = ready.removeFirst()
        guard let event = waiting.removeValue(forKey: group) else { return nil }
        running.insert(group)
        return (group, event)
    }
}
