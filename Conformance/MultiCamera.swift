@_spi(Testing) import CamHAL
import FoundationEssentials
import Glibc

/// Several cameras at once (J1-J4): two or more devices of one backend streaming in one process,
/// each session independent of the others, all on one clock. They need another device
/// (`ConformanceContext.otherDevices`: `camhal conformance` takes the backend's other devices that
/// can stream beside the one tested, or `--second-device ID[,ID...]`); with one device each check
/// skips saying so. With three or more they all stream at once: one session stopped, unplugged
/// or failed must leave every other one streaming.
let multiCameraArea = Area(name: "Several cameras at once", checks: [
    // J1: two or more devices stream at once, and each session is independent: starting the
    // others and stopping the second leave the device under test running, and every device left
    // streaming runs on, with no gap longer than five frame intervals. Catches: one delivery
    // thread or lock shared by every session, so stopping one stalls or restarts the others (a
    // gap of a second, or a starting snapshot on a session left running); with three devices, a
    // fix that protects the first session alone (the third stalls when the second stops).
    Check("J1", "two or more devices stream at once; stopping one leaves the others streaming") { ctx in
        let others = ctx.otherDevices
        guard !others.isEmpty else { return .skip(needsTwoDevices) }
        let a = ctx.openCamera(), bs = others.map { ctx.openCamera($0) }
        let recA = StateRecorder(a), recBs = bs.map { StateRecorder($0) }
        let framesA = FrameArrivals(a), framesBs = bs.map { FrameArrivals($0) }
        try await ctx.startAndWaitForPreview(a, recorder: recA)
        let mark = recA.all.count, from = framesA.count
        var marksB: [(state: Int, frame: Int)] = []
        for (i, b) in bs.enumerated() {
            try await startOther(ctx, b, i, recorder: recBs[i])
            marksB.append((recBs[i].all.count, framesBs[i].count))
        }
        try await expectFrames(ctx, framesA, 10, after: from, "the device under test while \(othersName(bs.count)) streamed")
        for i in bs.indices {
            try await expectFrames(ctx, framesBs[i], 10, after: 0, "\(otherName(i)) beside the device under test")
        }
        let atStop = framesA.count, atStopB = framesBs.map(\.count)
        await bs[0].stop()
        try await expectFrames(ctx, framesA, 30, after: atStop, "the device under test after the second device stopped")
        for i in bs.indices.dropFirst() {
            try await expectFrames(ctx, framesBs[i], 30, after: atStopB[i], "\(otherName(i)) after the second device stopped")
        }
        try expectUndisturbed(ctx, recA, after: mark, framesA, from: from,
                              bs.count == 1 ? "starting and stopping the second device" : "starting \(othersName(bs.count)) and stopping the second")
        for i in bs.indices.dropFirst() {
            try expectUndisturbed(ctx, recBs[i], after: marksB[i].state, framesBs[i], from: marksB[i].frame,
                                  "starting the devices after it and stopping the second device", who: otherName(i))
        }
        return .ok
    },
    // J2: the device under test opened a second time in this process, while the first session
    // and the other devices stream: at once a typed busy error that names this process as the
    // holder, or, on a shared source (`isExclusive == false`, R4), a second session with frames of
    // its own; never a hang; the other sessions keep streaming. Catches: a second open that
    // blocks on the driver, a bare "device or resource busy" that leaves the user guessing who
    // holds the camera, or a failed open that stops the first session or another device.
    Check("J2", "the same device opened twice: busy naming this process, or shared; others unaffected") { ctx in
        let others = ctx.otherDevices
        guard !others.isEmpty else { return .skip(needsTwoDevices) }
        let a = ctx.openCamera(), bs = others.map { ctx.openCamera($0) }
        let recA = StateRecorder(a)
        let framesA = FrameArrivals(a), framesBs = bs.map { FrameArrivals($0) }
        for (i, b) in bs.enumerated() { try await startOther(ctx, b, i) }
        try await ctx.startAndWaitForPreview(a, recorder: recA)
        let mark = recA.all.count, fromA = framesA.count, fromBs = framesBs.map(\.count)
        let again = ctx.openCamera()
        let rec = StateRecorder(again)
        let t0 = ContinuousClock.now
        again.start()
        guard let s = await rec.wait(timeout: ctx.timeout(.seconds(3)), { $0.status == .error || $0.isPreviewActive }) else {
            throw CheckFailure(reason: "the second open neither failed nor ran within \(String.num(Seconds.of(ctx.timeout(.seconds(3))))) s: \(again.currentState)")
        }
        let took = ContinuousClock.now - t0
        if ctx.device.isExclusive {
            guard case .busy(_, let detail)? = s.error else {
                throw CheckFailure(reason: "an exclusive device opened twice: expected busy, got \(s)")
            }
            try expect(took < max(.seconds(1), ctx.timeout(.seconds(0.5))), "busy took \(String.num(Seconds.of(took))) s")
            try expect(detail.contains("this process") || detail.contains("\(getpid())"),
                       "busy does not name the holder (this process, pid \(getpid())): \(detail)")
        } else {
            try expect(s.isPreviewActive, "a shared device opened twice failed: \(s)")
            let framesAgain = FrameArrivals(again)
            try await expectFrames(ctx, framesAgain, 5, after: 0, "the second session on the shared device")
        }
        try await expectFrames(ctx, framesA, 10, after: fromA, "the first session after the second open")
        for i in bs.indices {
            try await expectFrames(ctx, framesBs[i], 10, after: fromBs[i], "\(otherName(i)) after the device under test was opened twice")
        }
        try expectUndisturbed(ctx, recA, after: mark, framesA, from: fromA, "opening the device a second time")
        return .ok
    },
    // J3: the frames of every device are stamped on one monotonic clock (CLOCK_MONOTONIC, which
    // `FrameSynchronizer` pairs them on): each frame's timestamp lies within a bound of its
    // arrival (capture to delivery; a driver may also stamp a frame's nominal time, up to a frame
    // interval after it is delivered: vivid does), so frames arriving together have timestamps
    // within that bound of each other. Catches: one backend or device stamping wall-clock time,
    // or a pipeline's running time from zero, so frames of two cameras can never be paired.
    Check("J3", "frames of every device are stamped on one monotonic clock") { ctx in
        let others = ctx.otherDevices
        guard !others.isEmpty else { return .skip(needsTwoDevices) }
        let a = ctx.openCamera(), bs = others.map { ctx.openCamera($0) }
        let framesA = FrameArrivals(a), framesBs = bs.map { FrameArrivals($0) }
        try await ctx.startAndWaitForPreview(a)
        for (i, b) in bs.enumerated() { try await startOther(ctx, b, i) }
        let fromA = framesA.count, fromBs = framesBs.map(\.count)
        try await expectFrames(ctx, framesA, 20, after: fromA, "the device under test")
        for i in bs.indices { try await expectFrames(ctx, framesBs[i], 20, after: fromBs[i], otherName(i)) }
        // Capture to delivery: frame intervals and the driver's queue, stretched on a slow machine.
        // Any other clock is off by far more: wall-clock time by decades, a running time from
        // zero by the machine's uptime.
        let bound = 0.5 * ctx.timeScale
        var medians: [(name: String, median: Double)] = []
        let all = [("device under test", framesA, fromA)] + bs.indices.map { (String(otherName($0).dropFirst(4)), framesBs[$0], fromBs[$0]) }
        for (name, frames, from) in all {
            let lags = frames.all.dropFirst(from).map { $0.arrival - $0.timestamp }.sorted()
            let median = lags[lags.count / 2]
            try expect(lags.first! >= -bound, "\(name): a frame stamped \(String.num(-lags.first!)) s after it arrived (CLOCK_MONOTONIC; bound \(String.num(bound)) s): not on the monotonic clock")
            try expect(lags.last! <= bound, "\(name): a frame stamped \(String.num(lags.last!)) s before it arrived (bound \(String.num(bound)) s): not on the monotonic clock, or delivered late")
            medians.append((name, median))
        }
        let low = medians.min { $0.median < $1.median }!, high = medians.max { $0.median < $1.median }!
        try expect(high.median - low.median <= bound,
                   "the devices' timestamps differ by \(String.num(high.median - low.median)) s for frames arriving together (\(low.name) and \(high.name))")
        return .ok
    },
    // J4: one of the streaming devices unplugged: its session fails with `disconnected` (S7) and
    // every other one (the device under test, and with three or more devices the rest) keeps
    // streaming, undisturbed. Runs where another device can be unplugged from a test (the virtual
    // camera's hooks, an emulated webcam's control socket): the first of them that can is.
    // Catches: one device's disconnect tearing down a shared watcher or delivery thread, so the
    // cameras still plugged in stop too.
    Check("J4", "one device unplugged: the others keep streaming") { ctx in
        let others = ctx.otherDevices
        guard !others.isEmpty else { return .skip(needsTwoDevices) }
        guard let (k, faults) = ctx.otherInjector(for: .unplug, .replug) else {
            return .skip("no way to unplug another device from a test (the virtual camera's hooks and an emulated webcam's socket can)")
        }
        let a = ctx.openCamera(), bs = others.map { ctx.openCamera($0) }
        let recA = StateRecorder(a), recBs = bs.map { StateRecorder($0) }
        let framesA = FrameArrivals(a), framesBs = bs.map { FrameArrivals($0) }
        try await ctx.startAndWaitForPreview(a, recorder: recA)
        for (i, b) in bs.enumerated() { try await startOther(ctx, b, i, recorder: recBs[i]) }
        let mark = recA.all.count, from = framesA.count
        let marksB = recBs.map { $0.all.count }, fromBs = framesBs.map(\.count)
        let unplugged = otherName(k)
        try await faults.inject(.unplug)
        guard let failed = await recBs[k].wait(timeout: ctx.timeout(.seconds(5)), after: marksB[k], { $0.status == .error }) else {
            throw CheckFailure(reason: "the unplugged \(unplugged.dropFirst(4))'s session did not fail: \(bs[k].currentState)")
        }
        guard case .disconnected? = failed.error else {
            throw CheckFailure(reason: "the unplugged \(unplugged.dropFirst(4)) failed with \(String(describing: failed.error)), not disconnected")
        }
        let atUnplug = framesA.count, atUnplugB = framesBs.map(\.count)
        try await expectFrames(ctx, framesA, 30, after: atUnplug, "the device under test after \(unplugged) was unplugged")
        for i in bs.indices where i != k {
            try await expectFrames(ctx, framesBs[i], 30, after: atUnplugB[i], "\(otherName(i)) after \(unplugged) was unplugged")
        }
        try expectUndisturbed(ctx, recA, after: mark, framesA, from: from, "unplugging \(unplugged)")
        for i in bs.indices where i != k {
            try expectUndisturbed(ctx, recBs[i], after: marksB[i], framesBs[i], from: fromBs[i], "unplugging \(unplugged)", who: otherName(i))
        }
        return .ok
    },
])

/// How the checks of several cameras at once name the `i`th of the other devices (0: the
/// second device in all, 1: the third...).
func otherName(_ i: Int) -> String {
    let ordinals = ["second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"]
    return "the \(i < ordinals.count ? ordinals[i] : "\(i + 2)th") device"
}

/// The other devices, `count` of them, in a message.
func othersName(_ count: Int) -> String {
    count == 1 ? "the second device" : "the \(count) other devices"
}

/// Why a check of several cameras at once did not run.
let needsTwoDevices = "needs two devices (camhal conformance takes the backend's other devices, or --second-device ID[,ID...]; this run has none)"

/// Every frame of a session: its timestamp and its arrival on CLOCK_MONOTONIC, taken on the
/// backend's delivery thread (the session's frame handler), so no consumer's pace shows in them.
final class FrameArrivals: Sendable {
    private let log = Locked([(timestamp: Double, arrival: Double)]())

    /// Starts recording `camera`'s frames (its frame handler).
    init(_ camera: Camera) {
        let log = self.log
        camera.setFrameHandler { f in
            let arrival = Seconds.monotonic()
            log.withLock { $0.append((f.timestamp, arrival)) }
        }
    }

    /// Frames recorded so far.
    var count: Int { log.withLock { $0.count } }
    /// Every frame recorded so far, in arrival order.
    var all: [(timestamp: Double, arrival: Double)] { log.value }
}

/// Starts the session on the `index`th other device (0: the second device) and waits for its
/// first frame, saying which device failed when it does not start.
func startOther(_ ctx: ConformanceContext, _ camera: Camera, _ index: Int, recorder: StateRecorder? = nil) async throws {
    do {
        try await ctx.startAndWaitForPreview(camera, recorder: recorder)
    } catch let failure as CheckFailure {
        throw CheckFailure(reason: "\(otherName(index)) (\(camera.device.id)): \(failure.reason)", file: failure.file, line: failure.line)
    }
}

/// Waits until `frames` holds `count` frames after the first `after`; fails naming `what`.
func expectFrames(_ ctx: ConformanceContext, _ frames: FrameArrivals, _ count: Int, after: Int, _ what: String,
                  file: String = #fileID, line: Int = #line) async throws {
    let timeout = ctx.timeout(.seconds(10))
    let arrived = await waitUntil(timeout: timeout) { frames.count >= after + count }
    try expect(arrived, "\(what): \(frames.count - after) of \(count) frames within \(String.num(Seconds.of(timeout))) s", file: file, line: line)
}

/// The session recorded by `recorder` (on `who`) stayed running from snapshot `mark` on, and its
/// frames from index `from` on have no gap longer than a few frame intervals (five, or 0.2 s,
/// whichever is longer, stretched by the time scale): `event` did not disturb it.
func expectUndisturbed(_ ctx: ConformanceContext, _ recorder: StateRecorder, after mark: Int, _ frames: FrameArrivals, from: Int,
                       _ event: String, who: String = "the device under test", file: String = #fileID, line: Int = #line) throws {
    if let s = recorder.all.dropFirst(mark).first(where: { $0.status != .running }) {
        throw CheckFailure(reason: "\(event) disturbed \(who): \(s)", file: file, line: line)
    }
    let times = frames.all.dropFirst(max(0, from - 1)).map(\.timestamp)
    let gaps = zip(times, times.dropFirst()).map { $1 - $0 }
    guard let largest = gaps.max() else { return }
    let interval = gaps.sorted()[gaps.count / 2]
    let bound = max(5 * interval, 0.2) * ctx.timeScale
    try expect(largest <= bound, "\(event): \(who) had a gap of \(String.num(largest)) s between frames (interval \(String.num(interval)) s, bound \(String.num(bound)) s)",
               file: file, line: line)
}
