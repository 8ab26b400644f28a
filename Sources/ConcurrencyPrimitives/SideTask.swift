/// The life of a `SideTask`: whoever claims it first runs it, once; its owner takes the value.
/// A value type, so the transitions are tested without threads.
public struct SideTaskState<Value: Sendable>: Sendable {
    /// What a join has to do.
    public enum JoinAction: Sendable {
        /// Nobody started the work: the owner runs it itself.
        case runHere
        /// A pool thread runs it: wait for `finish`.
        case wait
        /// It is done.
        case take(Value)
    }

    /// Whether someone runs, or ran, the work.
    public private(set) var claimed = false
    /// Whether the owner gave the work up before anyone claimed it.
    public private(set) var abandoned = false
    /// The value, once finished.
    public private(set) var value: Value?

    /// A task nobody has started.
    public init() {}

    /// For a pool thread: true when it should run the work (nobody has claimed it).
    public mutating func claim() -> Bool {
        guard !claimed else { return false }
        claimed = true
        return true
    }

    /// The work's value, from whoever ran it.
    public mutating func finish(_ value: Value) {
        self.value = value
    }

    /// For the owner that no longer wants the value: true when nobody had claimed the work (it
    /// is now claimed, and never runs).
    public mutating func abandon() -> Bool {
        guard claim() else { return false }
        abandoned = true
        return true
    }

    /// For the owner: run the work here (claiming it), wait, or take the value. Never after
    /// `abandon` gave the work up: there is no value to wait for.
    public mutating func join() -> JoinAction {
        precondition(!abandoned, "a SideTask is joined after its owner abandoned it")
        if let value { return .take(value) }
        return claim() ? .runHere : .wait
    }
}

/// Pure work offered to a `WorkPool` while its owner does something else (a publish's lint while
/// its files are flushed); `join` returns the value, running the work itself when no pool thread
/// got to it first, so a busy or stopped pool costs only the time the work takes.
public final class SideTask<Value: Sendable>: @unchecked Sendable {
    private let lock = ConditionLock()
    // Guarded by `lock`. The work is dropped once claimed, so a job the pool runs late keeps
    // nothing the work captured alive.
    private var state = SideTaskState<Value>()
    private var work: (@Sendable () -> Value)?

    /// Work that `join` returns the value of.
    public init(_ work: @escaping @Sendable () -> Value) {
        self.work = work
    }

    /// Offers the work to `pool`: one of its threads runs it if it gets there before `join`.
    public func offer(to pool: WorkPool) {
        _ = pool.submit { [self] in
            guard let work = lock.withLock({ state.claim() ? takeWork() : nil }) else { return }
            let value = work()
            lock.withLock { state.finish(value) }
            // After the mutex is let go, as in `WorkPool.submit`: a woken owner takes it at once.
            lock.broadcast()
        }
    }

    /// The value: taken when done, computed here when nobody started, else waited for (the
    /// work is running on another thread and ends by itself). Any number of threads may join.
    public func join() -> Value {
        let (action, work) = lock.withLock { () -> (SideTaskState<Value>.JoinAction, (@Sendable () -> Value)?) in
            let action = state.join()
            if case .runHere = action { return (action, takeWork()) }
            return (action, nil)
        }
        switch action {
        case .take(let value): return value
        case .runHere:
            guard let work else { preconditionFailure("a claimed task's work is taken once") }
            let value = work()
            lock.withLock { state.finish(value) }
            // Another joiner may be waiting for the work this one ran.
            lock.broadcast()
            return value
        case .wait:
            return lock.withLock {
                while true {
                    if let value = state.value { return value }
                    lock.wait()
                }
            }
        }
    }

    /// Gives the work up when nobody started it (an owner whose own step failed): a pool thread
    /// that comes to it later does nothing, and what the work captured is let go now. The owner
    /// does not `join` after this (a programming error, which traps rather than waits forever).
    public func abandon() {
        let work = lock.withLock { state.abandon() ? takeWork() : nil }
        _ = work  // released outside the lock
    }

    /// Takes the work out; call holding `lock`, once, after a successful claim.
    private func takeWork() -> (@Sendable () -> Value)? {
        defer { work = nil }
        return work
    }
}
