#if Media
import CamHAL
import CamHALMedia
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `camhal preview`: the live picture in a window (`PreviewWindow`), the state as a status line
/// (on stdout, and over the picture), keys for zoom, lens, torch and focus, a click to focus.
enum PreviewCommand {
    static let verb = Verb(
        name: "preview", summary: "show the live picture in a window; keys for zoom, lens, torch, focus",
        usage: """
            usage: camhal preview [--backend B] [--device ID | --source S] [--format FOURCC] [--size WxH] [--seconds N] [--no-overlay]
            \(MediaSupport.sourceUsage)
              --seconds N        close after N seconds, 0...1e9 (default: until q, Escape, Ctrl-C or the
                                 window closes)
              --no-overlay       no status text over the picture (the status line still goes to stdout)
            Keys in the window: + or = zoom in x2, - zoom out /2, 0 zoom 1x, l next lens (automatic, then
            each lens pinned in turn), t torch on/off, c continuous autofocus, q or Escape quit; a mouse
            click focuses on that point. Needs an X display (DISPLAY) and GStreamer's ximagesink
            (Debian: gstreamer1.0-x). Prints 'preview WxH' once the window shows frames, then
            'status lens ID (automatic|pinned) zoom Zx focus MODE torch on|off fps N drops N' whenever
            the picture's settings change (the counters at most once a second). Warnings, and each
            interruption as it starts and ends, go to stderr.
            Exit status 0 when closed (q, Escape, Ctrl-C, SIGTERM, the window, --seconds), 1 when the
            device fails.
            """,
        run: run)

    /// Why the preview ended.
    enum End: Sendable {
        case quit
        case failed(any Error)
    }

    static func run(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, options: MediaSupport.sourceOptions.union(["seconds"]), booleans: ["no-overlay"])
        let seconds = try a.number("seconds", in: .seconds())
        // Every value first (a bad --size, --format or --backend is exit 2 with or without a
        // display), then the display, before the camera starts.
        let camera = try MediaSupport.open(a)
        if let why = PreviewWindow.unavailableReason() { throw CameraError.unsupported("preview window: \(why)") }
        let states = camera.stateUpdates()
        let frames = camera.frames(policy: .keepOnlyLatest)
        // Warnings once each, and every interruption as it starts and ends, on stderr as the other
        // streaming verbs print them: a frozen picture says why, and when it came back.
        let report = SessionReport(camera, verb: "preview")
        defer { report.finish() }
        camera.start()
        let window: PreviewWindow
        do {
            try await MediaSupport.waitUntilStreaming(camera)
            let format = camera.streamFormat
            let first = camera.currentState
            window = try PreviewWindow(size: format.map { Size(width: $0.width, height: $0.height) } ?? Size(width: 640, height: 480),
                                       overlay: !a.has("no-overlay"))
            printNow("preview \(window.size) from \(camera.device.backend):\(camera.device.id) (\(first.activeLens?.id ?? "-"))")
        } catch {
            frames.cancel()
            await camera.stop()
            throw error
        }
        let controls = Controls(camera: camera)
        let status = StatusLine(camera: camera, window: window, controls: controls)
        let end = await withTaskGroup(of: End.self) { group in
            group.addTask {
                do {
                    for try await frame in frames {
                        window.show(frame)
                        status.shown(frame.metadata)
                    }
                } catch {
                    return .failed(error)
                }
                return camera.currentState.error.map { .failed($0) } ?? .failed(CameraError.streamFailed("\(camera.device.id): the frame stream ended"))
            }
            group.addTask {
                for await s in states {
                    if s.status == .error { return .failed(s.error ?? CameraError.streamFailed("\(camera.device.id) failed")) }
                    status.state(s)
                }
                return .quit
            }
            group.addTask {
                for await event in window.events {
                    switch event {
                    case .closed(let error): return error.map { .failed($0) } ?? .quit
                    case .key(let key): if controls.key(key) == .quit { return .quit }
                    case .click(_, let point): controls.focus(at: point)
                    }
                }
                return .quit
            }
            group.addTask {
                let (signals, continuation) = AsyncStream<Int32>.makeStream()
                let restore = CLI.onStopSignals { continuation.yield($0) }
                defer { restore() }
                for await signal in signals {
                    printNow("preview: \(signal == SIGINT ? "SIGINT" : "SIGTERM"), closing")
                    return .quit
                }
                return .quit
            }
            if let seconds {
                group.addTask {
                    try? await Seconds.sleep(seconds)
                    return .quit
                }
            }
            let end = await group.next() ?? .quit
            group.cancelAll()
            frames.cancel()
            window.close()
            return end
        }
        await camera.stop()
        if case .failed(let error) = end { throw error }
        return 0
    }

    /// What the keys and clicks do to the camera.
    final class Controls: Sendable {
        let camera: Camera
        /// The lens selection the keys asked for last (the camera does not say which it has).
        let selection = Locked(LensSelection.automatic)

        init(camera: Camera) { self.camera = camera }

        enum Outcome { case handled, ignored, quit }

        /// Acts on an X keysym name (as `PreviewWindow.Event.key` gives it).
        @discardableResult
        func key(_ key: String) -> Outcome {
            let s = camera.currentState
            switch key {
            case "q", "Q", "Escape":
                return .quit
            case "plus", "equal", "KP_Add":
                camera.setZoomRatio(min(s.zoomRatio * 2, s.maxZoomRatio))
            case "minus", "underscore", "KP_Subtract":
                camera.setZoomRatio(max(s.zoomRatio / 2, s.minZoomRatio))
            case "0", "KP_0":
                camera.setZoomRatio(min(max(1, s.minZoomRatio), s.maxZoomRatio))
            case "l", "L":
                let selection = selection.withLock { current in
                    current = nextLens(after: current)
                    return current
                }
                camera.setLensSelection(selection)
                printNow("lens \(selection)")
            case "t", "T":
                camera.setTorch(!s.isTorchEnabled)
            case "c", "C":
                camera.setFocusMode(.continuous)
            default:
                return .ignored
            }
            return .handled
        }

        /// The lens selection after the current one: automatic, then each pinnable lens of the
        /// device in turn, then automatic again.
        func nextLens(after current: LensSelection) -> LensSelection {
            let lenses = camera.device.lenses.filter(\.isPinnable)
            guard let pinned = current.pinnedLens, let i = lenses.firstIndex(where: { $0.id == pinned.id }) else {
                return lenses.first.map { .pinned($0) } ?? .automatic
            }
            return i + 1 < lenses.count ? .pinned(lenses[i + 1]) : .automatic
        }

        func focus(at point: NormalizedPoint) {
            guard camera.device.supportsFocusPoint else {
                printNow("focus: \(camera.device.id) has no focus point control")
                return
            }
            camera.setFocusPoint(point)
            printNow("focus point \(decimal(point.x, places: 2)),\(decimal(point.y, places: 2))")
        }
    }

    /// The status line: what the shown picture was taken with (its frame metadata), the session's
    /// frame rate, and the frames lost on the way (driver, back-pressure, the window). Printed
    /// when the settings change, counters at most once a second; also drawn over the picture.
    final class StatusLine: Sendable {
        private struct Values: Equatable {
            var hasFrame = false
            var lens = "-"
            var pinned = false
            var zoom = 1.0
            var focus = "-"
            var torch = false
            var fps = 0.0
            var drops = 0
        }
        private let camera: Camera
        private let window: PreviewWindow
        private let controls: Controls
        private let last = Locked<(values: Values?, printed: ContinuousClock.Instant?)>((nil, nil))
        private let current = Locked(Values())

        init(camera: Camera, window: PreviewWindow, controls: Controls) {
            self.camera = camera
            self.window = window
            self.controls = controls
        }

        func shown(_ m: FrameMetadata) {
            // Pinned when the picture comes from the lens the keys pinned (a pin the camera could
            // not honour falls back to automatic, L2).
            let pinned = controls.selection.value.pinnedLens.map { $0.id == m.lens?.id } ?? false
            let stats = camera.frameStatistics
            current.withLock {
                $0.hasFrame = true
                $0.lens = m.lens?.id ?? "-"
                $0.pinned = pinned
                $0.zoom = m.zoomRatio
                $0.focus = m.focusMode?.description ?? "-"
                $0.torch = m.isTorchEnabled
                $0.drops = stats.dropped + window.framesDropped
            }
            publish()
        }

        func state(_ s: CameraState) {
            current.withLock { $0.fps = s.frameRate }
            publish()
        }

        private func publish() {
            let v = current.value
            guard v.hasFrame else { return }  // nothing to describe before the first frame
            let now = ContinuousClock.now
            let due = last.withLock { l -> Bool in
                guard l.values != v else { return false }
                var settings = v, previous = l.values ?? Values()
                (settings.fps, settings.drops, previous.fps, previous.drops) = (0, 0, 0, 0)
                guard l.values == nil || settings != previous || l.printed.map({ now - $0 >= .seconds(1) }) ?? true else { return false }
                l = (v, now)
                return true
            }
            guard due else { return }
            let text = "lens \(v.lens) (\(v.pinned ? "pinned" : "automatic")) zoom \(ZoomMath.format(v.zoom))x focus \(v.focus) "
                + "torch \(v.torch ? "on" : "off") fps \(ZoomMath.format(v.fps)) drops \(v.drops)"
            printNow("status \(text)")
            window.setOverlayText(text)
        }
    }
}
#endif
