import Testing
@testable import CamHAL

/// `FrameQueueStateMachine` alone: events in, actions out, no thread and no continuation.
/// Consumers are named by strings and producers by integers, so each test reads which one an
/// action resumes or wakes.
@Suite("FrameQueue state machine")
struct FrameQueueStateMachineTests {
    typealias Machine = FrameQueueStateMachine<String, Int>

    func frame(_ n: UInt64) -> Frame {
        Frame(format: .gray8, width: 1, height: 1, planes: [], sequence: n, timestamp: Double(n))
    }

    /// The frame a take resumed its consumer with (nil if it parked or resumed with nil).
    func taken(_ action: Machine.TakeAction) -> UInt64? {
        if case .resume(_, let f, _) = action { return f?.sequence }
        return nil
    }

    func isParked(_ action: Machine.TakeAction) -> Bool {
        if case .parked = action { return true }
        return false
    }

    @Test func framesAreTakenInTheOrderTheyWerePushed() {
        var m = Machine(policy: .block(capacity: 3))
        for n in UInt64(1)...3 {
            guard case .queued(let released) = m.push(frame(n)) else { return #expect(Bool(false), "frame \(n) not queued") }
            #expect(released.isEmpty)
        }
        #expect([taken(m.take("a")), taken(m.take("a")), taken(m.take("a"))] == [1, 2, 3])
        #expect(m.counters == .init(dropped: 0, delivered: 3))
    }

    @Test func aPushGoesToTheLongestWaitingConsumer() {
        var m = Machine(policy: .keepOnlyLatest)
        #expect(isParked(m.take("first")))
        #expect(isParked(m.take("second")))
        #expect(m.waitingConsumers == 2)
        guard case .handOver(let c, let f) = m.push(frame(1)) else { return #expect(Bool(false)) }
        #expect(c == "first" && f.sequence == 1)
        guard case .handOver(let c2, _) = m.push(frame(2)) else { return #expect(Bool(false)) }
        #expect(c2 == "second")
        #expect(m.counters.delivered == 2)
    }

    @Test func keepOnlyLatestReplacesTheUnreadFrameAndCountsIt() {
        var m = Machine(policy: .keepOnlyLatest)
        _ = m.push(frame(1))
        _ = m.push(frame(2))
        guard case .queued(let released) = m.push(frame(3)) else { return #expect(Bool(false)) }
        #expect(released.map(\.sequence) == [2])
        #expect(m.buffer.map(\.sequence) == [3])
        #expect(m.counters.dropped == 2)
        #expect(taken(m.take("a")) == 3)
    }

    @Test func aFullBlockingQueueParksTheProducerUntilATakeMakesRoom() {
        var m = Machine(policy: .block(capacity: 1))
        _ = m.push(frame(1))
        guard case .full = m.push(frame(2)) else { return #expect(Bool(false), "not full") }
        guard case .wait(let id) = m.push(frame(2), blockingAs: 7) else { return #expect(Bool(false), "not parked") }
        #expect(m.producerDone(id: id, giveUp: false) == nil)
        // A later producer queues behind the parked one, never ahead of it.
        guard case .full = m.push(frame(3)) else { return #expect(Bool(false), "jumped the parked producer") }
        guard case .resume("a", let f?, let wake) = m.take("a") else { return #expect(Bool(false)) }
        #expect(f.sequence == 1 && wake == [7])
        #expect(m.producerDone(id: id, giveUp: false) == .accepted)
        #expect(m.producerDone(id: id, giveUp: false) == nil)
        #expect(taken(m.take("a")) == 2)
        #expect(m.counters == .init(dropped: 0, delivered: 2))
    }

    @Test func theBindingClosingReleasesABlockedProducerWithItsFrameDropped() {
        var m = Machine(policy: .block(capacity: 1))
        _ = m.push(frame(1))
        guard case .wait(let id) = m.push(frame(2), blockingAs: 7) else { return #expect(Bool(false)) }
        #expect(m.retireProducers() == [7])
        #expect(m.blockedProducers == 0)
        #expect(m.producerDone(id: id, giveUp: false) == .dropped(open: true))
        #expect(m.counters.dropped == 1)
        // The stream stays open: the queued frame is still there.
        #expect(taken(m.take("a")) == 1)
        #expect(m.retireProducers().isEmpty)
    }

    @Test func aProducerThatGivesUpDropsItsFrame() {
        var m = Machine(policy: .block(capacity: 1))
        _ = m.push(frame(1))
        guard case .wait(let id) = m.push(frame(2), blockingAs: 7) else { return #expect(Bool(false)) }
        #expect(m.producerDone(id: id, giveUp: true) == .dropped(open: true))
        #expect(m.counters.dropped == 1)
        guard case .resume(_, let f?, let wake) = m.take("a") else { return #expect(Bool(false)) }
        #expect(f.sequence == 1 && wake.isEmpty)
    }

    @Test func finishingWithAFailureEndsEveryoneAndKeepsTheFirstReason() {
        var m = Machine(policy: .block(capacity: 1))
        #expect(isParked(m.take("a")))
        _ = m.push(frame(1))  // handed to "a"
        _ = m.push(frame(2))
        guard case .wait(let id) = m.push(frame(3), blockingAs: 7) else { return #expect(Bool(false)) }
        let end = m.finish(reason: .disconnected(device: "cam"))
        #expect(end.released.map(\.sequence) == [2])
        #expect(end.producers == [7])
        #expect(m.producerDone(id: id, giveUp: false) == .dropped(open: false))
        #expect(m.endReason == .disconnected(device: "cam"))
        _ = m.finish(reason: .busy(device: "cam", detail: "again"))
        #expect(m.endReason == .disconnected(device: "cam"))
        guard case .rejected = m.push(frame(4)) else { return #expect(Bool(false)) }
        guard case .resume(_, nil, _) = m.take("b") else { return #expect(Bool(false)) }
    }

    @Test func finishingResumesWaitingConsumersWithNothing() {
        var m = Machine(policy: .keepOnlyLatest)
        #expect(isParked(m.take("a")))
        #expect(isParked(m.take("b")))
        let end = m.finish()
        #expect(end.consumers == ["a", "b"])
        #expect(m.endReason == nil && m.finished)
        #expect(m.waitingConsumers == 0)
    }

    @Test func anAbandonedWaitingConsumerIsResumedAndSkipped() {
        var m = Machine(policy: .keepOnlyLatest)
        let id = m.beginWait()
        #expect(isParked(m.take("timed", id: id)))
        #expect(isParked(m.take("plain")))
        #expect(m.abandon(id: id) == "timed")
        // A second abandon (the timer after a cancellation) is late and does nothing.
        #expect(m.abandon(id: id) == nil)
        guard case .handOver(let c, _) = m.push(frame(1)) else { return #expect(Bool(false)) }
        #expect(c == "plain")
        #expect(!m.finished)
    }

    @Test func aWaitAbandonedBeforeItParksResolvesWithNothingWhenItDoes() {
        var m = Machine(policy: .keepOnlyLatest)
        _ = m.push(frame(1))
        let id = m.beginWait()
        #expect(m.abandon(id: id) == nil)
        guard case .resume("c", nil, _) = m.take("c", id: id) else { return #expect(Bool(false)) }
        // The frame stays for the next consumer.
        #expect(taken(m.take("d")) == 1)
    }

    @Test func anAbandonAfterTheWaitGotAFrameDoesNothing() {
        var m = Machine(policy: .keepOnlyLatest)
        let id = m.beginWait()
        #expect(isParked(m.take("c", id: id)))
        guard case .handOver = m.push(frame(1)) else { return #expect(Bool(false)) }
        #expect(m.abandon(id: id) == nil)
        #expect(m.waitingConsumers == 0)
    }
}
