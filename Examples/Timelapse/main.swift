// timelapse DIR [SHOTS] [INTERVAL] [BACKEND DEVICE]: SHOTS photos (default 10), one every INTERVAL
// seconds (default 5), as DIR/shot-0001.jpg... from the default camera or the one named
// (`timelapse /tmp/tl 3 1 virtual virtual-back` runs without hardware). Make a video of them with
// `ffmpeg -framerate 10 -i DIR/shot-%04d.jpg timelapse.mp4`.
import CamHAL
import CamHALBackends
import CamHALMedia
import Foundation

let args = Array(CommandLine.arguments.dropFirst())
guard (1...5).contains(args.count), args.count != 4,
    let shots = args.count > 1 ? Int(args[1]) : 10, shots > 0,
    let interval = args.count > 2 ? Int(args[2]) : 5, interval >= 0
else {
    print("usage: timelapse DIR [SHOTS] [INTERVAL] [BACKEND DEVICE]")
    exit(2)
}
let folder = URL(fileURLWithPath: args[0], isDirectory: true)
do {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let registry = Backends.registry()
    let camera = args.count == 5 ? try registry.open(backend: args[3], device: args[4]) : try registry.open()
    camera.start()
    for shot in 1...shots {
        let url = folder.appendingPathComponent("shot-" + String(format: "%04d", shot) + ".jpg")
        let photo = try await camera.capturePhoto(to: url, settings: PhotoSettings(quality: 85))
        print("\(url.path): \(photo.width)x\(photo.height), frame #\(photo.metadata.sequence)")
        if shot < shots { try await Task.sleep(for: .seconds(interval)) }
    }
    await camera.stop()
} catch {
    print("timelapse: \(error)")
    exit(1)
}
