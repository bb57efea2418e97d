import CamHAL
import FoundationEssentials

/// What a verb that streams tells the user about its session, so no fault passes in silence:
/// every warning the library puts on a snapshot, once, as a line on stderr; each interruption as
/// it starts and ends (or, for a one-shot verb, when its work is done: `Interruptions`); and, for
/// the final summary, frames and drops by cause with the holes.
/// Times are seconds on CLOCK_MONOTONIC from `origin` (the verb's start, or a recording's first
/// frame, so a hole's time is its time in the file).
final class SessionReport: Sendable {
    /// When interruptions reach the user.
    enum Interruptions {
        /// Each as it starts and as it ends: a verb that streams until it is stopped.
        case live
        /// Listed by `finish(succeeded:)`: a verb that uses one frame (a photo). A hole the
        /// session had before that frame is listed; one still open when the verb succeeded is
        /// not, since it began after the last frame, so after the one the verb used (a finite
        /// source that ends after the photo's frame is no fault of the photo).
        case atTheEnd
    }

    let camera: Camera
    let verb: String
    private let interruptions: Interruptions
    private let finished = Locked(false)
    /// CLOCK_MONOTONIC seconds the reported times count from.
    let origin = Locked(Seconds.monotonicCoarse())
    private let watcher = Locked<Task<Void, Never>?>(nil)
    /// The first fault seen (an interruption, a lost frame, a stream error), for `--strict`.
    let firstFault = Locked<String?>(nil)
    private let onFault: (@Sendable (String) -> Void)?

    /// Starts watching `camera`'s snapshots (call before `camera.start()` to see them all).
    /// `onFault` is called once, with a description, at the first fault.
    init(_ camera: Camera, verb: String, interruptions: Interruptions = .live, onFault: (@Sendable (String) -> Void)? = nil) {
        self.camera = camera
        self.verb = verb
        self.interruptions = interruptions
        self.onFault = onFault
        let states = camera.stateUpdates()
        watcher.set(Task { [weak self] in
            var previous: CameraState?
            var holeOpen = false
            for await s in states {
                guard let self else { return }
                self.note(s, after: previous, holeOpen: &holeOpen)
                previous = s
            }
        })
    }

    deinit { watcher.value?.cancel() }

    /// Stops watching. With interruptions `.atTheEnd`, lists the session's holes: every one when
    /// the verb failed (they may be why), those frames came back from when it succeeded. Only
    /// the first call counts.
    func finish(succeeded: Bool = false) {
        watcher.value?.cancel()
        guard interruptions == .atTheEnd, finished.withLock({ f in defer { f = true }; return !f }) else { return }
        for i in camera.frameStatistics.interruptions {
            if let length = i.length {
                printError("camhal \(verb): interrupted: a \(Self.seconds(length)) hole from \(time(i.start))")
            } else if !succeeded {
                printError("camhal \(verb): interrupted: no frames since \(time(i.start))")
            }
        }
    }

    private func note(_ s: CameraState, after previous: CameraState?, holeOpen: inout Bool) {
        // A snapshot keeps a binding's warning (a format fallback) until the next binding: print
        // a warning when it first appears, not on every snapshot that still carries it.
        if let w = s.warning, w != previous?.warning {
            switch w {
            case .stalled(let start, let length):
                guard interruptions == .live else { break }  // the router counted it: `finish` lists it
                // An interruption seen only when frames resumed (the frames before it were still
                // arriving): reported as one, with its place in the device's time.
                printError("camhal \(verb): interrupted: a \(Self.seconds(length)) hole from \(time(start)) "
                    + "(seen in the device's frame timestamps; earlier frames were still arriving)")
                fault("an interruption at \(time(start))")
            case .framesDropped, .streamError:
                printError("camhal \(verb): warning: \(w)")
                fault("\(w)")
            default:
                printError("camhal \(verb): warning: \(w)")
            }
        }
        guard interruptions == .live else { return }
        if s.status == .interrupted, !holeOpen {
            holeOpen = true
            let at = camera.frameStatistics.interruptions.last.map { time($0.start) } ?? "?"
            printError("camhal \(verb): interrupted: no frames since \(at)")
            fault("an interruption at \(at)")
        }
        if s.isPreviewActive, holeOpen, let i = camera.frameStatistics.interruptions.last, let length = i.length {
            holeOpen = false
            printError("camhal \(verb): resumed: a \(Self.seconds(length)) hole from \(time(i.start))")
        }
    }

    private func fault(_ what: String) {
        let first = firstFault.withLock { f -> Bool in
            guard f == nil else { return false }
            f = what
            return true
        }
        if first { onFault?(what) }
    }

    /// `t` (CLOCK_MONOTONIC seconds) as seconds from the origin: "3.2 s".
    func time(_ t: Double) -> String { decimal(t - origin.value, places: 1) + " s" }

    static func seconds(_ d: Duration) -> String {
        let c = d.components
        return decimal(Double(c.seconds) + Double(c.attoseconds) / 1e18, places: 1) + " s"
    }

    /// Drops by cause: "dropped 12 (driver gap 10, error-flagged 1, broken payload 1, behind 0)".
    /// `behind` is what a consumer (the recorder) lost on its own; nil uses the session's
    /// back-pressure count.
    static func drops(_ s: Camera.FrameStatistics, behind: Int? = nil) -> String {
        let b = behind ?? s.droppedByBackpressure
        let total = s.droppedByDriver + s.droppedAsErrored + s.droppedAsBroken + b
        return "dropped \(total) (driver gap \(s.droppedByDriver), error-flagged \(s.droppedAsErrored), "
            + "broken payload \(s.droppedAsBroken), back-pressure \(b))"
    }

    /// The interruptions: "2 interruptions: at 3.1 s for 3.8 s; at 9.0 s, still going".
    func interruptions(_ s: Camera.FrameStatistics) -> String {
        guard !s.interruptions.isEmpty else { return "no interruptions" }
        let list = s.interruptions.map { i in
            "at \(time(i.start)) " + (i.length.map { "for \(Self.seconds($0))" } ?? "(frames had not resumed)")
        }
        return "\(s.interruptions.count) interruption\(s.interruptions.count == 1 ? "" : "s"): " + list.joined(separator: "; ")
    }

    /// Whether `s` (with `behind` lost by the consumer) shows any fault.
    static func isFaulty(_ s: Camera.FrameStatistics, behind: Int? = nil) -> Bool {
        !s.interruptions.isEmpty || s.droppedByDriver + s.droppedAsErrored + s.droppedAsBroken + (behind ?? s.droppedByBackpressure) > 0
    }
}
