import Testing

@testable import FeedServerKit

/// `HookSchedule` without processes: every transition, with events as plain strings.
@Suite struct HookScheduleTests {
    /// A run to start, as "group:event".
    private func started(_ run: (group: String, event: String)?) -> String? {
        run.map { "\($0.group):\($0.event)" }
    }

    @Test func aGroupsFirstEventStartsAtOnce() {
        var schedule = HookSchedule<String>(maxRunning: 2)
        #expect(started(schedule.submitted("a1", group: "a")) == "a:a1")
        #expect(schedule.running == ["a"] && schedule.waiting.isEmpty && schedule.ready.isEmpty)
    }

    @Test func whileAGroupRunsOnlyItsLatestEventWaitsAndStartsWhenItEnds() {
        var schedule = HookSchedule<String>(maxRunning: 2)
        _ = schedule.submitted("a1", group: "a")
        #expect(schedule.submitted("a2", group: "a") == nil)
        #expect(schedule.submitted("a3", group: "a") == nil)
        #expect(schedule.submitted("a4", group: "a") == nil)
        #expect(schedule.waiting == ["a": "a4"] && schedule.coalesced == 2)
        #expect(schedule.ready.isEmpty, "a running group's waiting event needs no slot yet")
        #expect(started(schedule.finished(group: "a")) == "a:a4")
        #expect(schedule.running == ["a"] && schedule.waiting.isEmpty)
        #expect(schedule.finished(group: "a") == nil)
        #expect(schedule.running.isEmpty)
    }

    @Test func groupsBeyondTheLimitStartInTheOrderTheyBecameReady() {
        var schedule = HookSchedule<String>(maxRunning: 2)
        _ = schedule.submitted("a1", group: "a")
        _ = schedule.submitted("b1", group: "b")
        #expect(schedule.submitted("c1", group: "c") == nil)
        #expect(schedule.submitted("d1", group: "d") == nil)
        #expect(schedule.submitted("c2", group: "c") == nil, "replaces c1 and keeps c's place")
        #expect(schedule.ready == ["c", "d"] && schedule.coalesced == 1)
        #expect(schedule.submitted("a2", group: "a") == nil)
        #expect(started(schedule.finished(group: "b")) == "c:c2")
        #expect(started(schedule.finished(group: "a")) == "d:d1", "a's new event queues behind d")
        #expect(schedule.ready == ["a"])
        #expect(started(schedule.finished(group: "c")) == "a:a2")
        #expect(schedule.finished(group: "d") == nil)
        #expect(schedule.finished(group: "a") == nil)
        #expect(schedule.running.isEmpty && schedule.waiting.isEmpty && schedule.ready.isEmpty)
    }

    @Test func theEndOfAGroupThatIsNotRunningChangesNothing() {
        var schedule = HookSchedule<String>(maxRunning: 1)
        _ = schedule.submitted("a1", group: "a")
        _ = schedule.submitted("b1", group: "b")
        #expect(schedule.finished(group: "b") == nil, "b waits for a slot; it has not run")
        #expect(schedule.running == ["a"] && schedule.ready == ["b"])
    }

    @Test func aLimitBelowOneStillRunsOneAtATime() {
        var schedule = HookSchedule<String>(maxRunning: 0)
        #expect(schedule.submitted("a1", group: "a") != nil)
        #expect(schedule.submitted("b1", group: "b") == nil)
    }
}
