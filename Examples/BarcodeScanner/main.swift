// barcode-scanner [BACKEND DEVICE] [SECONDS]: prints each barcode the camera sees, once, for
// SECONDS (default 30). Without BACKEND DEVICE it opens the default camera; `camhal probe` lists
// the others (`barcode-scanner virtual virtual-back 2` runs without hardware).
import CamHAL
import CamHALBackends
import CamHALMedia
import Foundation

let args = Array(CommandLine.arguments.dropFirst())
let seconds = args.count == 1 || args.count == 3 ? Int(args.last!) : 30
guard let seconds, seconds > 0 else {
    print("usage: barcode-scanner [BACKEND DEVICE] [SECONDS]")
    exit(2)
}
do {
    let registry = Backends.registry()
    let camera = args.count >= 2 ? try registry.open(backend: args[0], device: args[1]) : try registry.open()
    print("scanning with \(camera.device.name) for \(seconds) s")
    let scanner = BarcodeScanner(formats: [.qrCode, .ean13, .code128])
    var seen: Set<String> = []
    let end = ContinuousClock.now + .seconds(seconds)
    camera.start()
    let frames = camera.frames()                  // the newest frame each time: scanning never stalls the camera
    for try await frame in frames {
        for code in try scanner.scan(frame) where seen.insert("\(code.format) \(code.value)").inserted {
            print("\(code.format): \(code.value)")
        }
        if ContinuousClock.now >= end { break }
    }
    await camera.stop()
    print("\(seen.count) code(s)")
} catch {
    print("barcode-scanner: \(error)")
    exit(1)
}
