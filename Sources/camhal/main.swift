import CamHAL
import CamHALBackends
import CamHALVirtual
import Foundation

let reg = Backends.registry()
let cam = try reg.open(backend: "virtual", device: "virtual-back")
let task = Task {
    for await s in cam.stateUpdates() { print(s) }
}
cam.setZoomRatio(2)
cam.start()
let frames = cam.frames()
var n = 0
for await f in frames {
    let p = f.planes[0].bytes
    let row = f.visibleRect.y * f.planes[0].bytesPerRow
    let l = SceneRenderer.worldX(luma: p[row + f.visibleRect.x * 2 + 16 * 2])
    let r = SceneRenderer.worldX(luma: p[row + (f.visibleRect.x + f.visibleRect.width - 1) * 2])
    print(f, "x", l, r, f.fieldOfView)
    n += 1
    if n == 5 { cam.setZoomRatio(0.5) }
    if n == 10 { cam.rampZoomRatio(4, durationMs: 300) }
    if n == 30 { break }
}
await cam.stop()
print("stopped", cam.currentState)
