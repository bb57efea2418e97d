// two-camera-viewer BACKEND:DEVICE BACKEND:DEVICE [SECONDS]: streams two cameras at once and prints
// one status line per camera and second (frames, lens, zoom, status) for SECONDS (default 10).
// `two-camera-viewer virtual:virtual-back virtual:virtual-front 2` runs without hardware;
// `camhal probe` lists the devices.
import CamHAL
import CamHALBackends
import Foundation

let args = Array(CommandLine.arguments.dropFirst())
let names = args.prefix(2).map { $0.split(separator: ":", maxSplits: 1).map(String.init) }
guard args.count == 2 || args.count == 3, names.allSatisfy({ $0.count == 2 }),
    let seconds = args.count == 3 ? Int(args[2]) : 10, seconds > 0
else {
    print("usage: two-camera-viewer BACKEND:DEVICE BACKEND:DEVICE [SECONDS]")
    exit(2)
}

/// Streams `camera` for `seconds`, printing a line a second; returns the frames it saw, or throws
/// the error that ended the session.
func view(_ camera: Camera, label: String, seconds: Int) async throws(CameraError) -> Int {
    var frames = 0, lastSecond = 0
    let start = ContinuousClock.now
    camera.start()
    let stream = camera.frames()
    for try await frame in stream {
        frames += 1
        let second = Int((ContinuousClock.now - start).components.seconds)
        if second > lastSecond {
            let state = camera.currentState
            print("\(label) \(second) s: \(frames) frames, \(frame.width)x\(frame.height), "
                + "lens \(state.activeLens?.id ?? "-"), zoom \(state.zoomRatio), \(state.status)")
            lastSecond = second
        }
        if second >= seconds { break }
    }
    await camera.stop()
    return frames
}

do {
    let registry = Backends.registry()
    let cameras = try names.map { try registry.open(backend: $0[0], device: $0[1]) }
    let labels = Array(args.prefix(2)), limit = seconds
    let counts = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
        for (i, camera) in cameras.enumerated() {
            group.addTask { (i, try await view(camera, label: labels[i], seconds: limit)) }
        }
        var counts = [0, 0]
        for try await (i, n) in group { counts[i] = n }
        return counts
    }
    print("done: \(counts[0]) and \(counts[1]) frames")
} catch {
    print("two-camera-viewer: \(error)")
    exit(1)
}
