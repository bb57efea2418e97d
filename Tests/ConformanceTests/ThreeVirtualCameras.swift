@_spi(Testing) @_spi(Backend) import CamHAL
import CamHALConformance
@_spi(Testing) @_spi(Backend) import CamHALVirtual
import Testing

/// Three virtual cameras behind one backend: an instance of the virtual camera has two devices,
/// so a second instance lends its `virtual-back`, listed as `virtual-back-2`. Each instance is its
/// own world (its own busy state and faults), as two webcams are.
final class ThreeVirtualCameras: CameraBackend, TestHooks {
    let identifier = "virtual"
    let first = VirtualBackend(), second = VirtualBackend()
    static let lent = "virtual-back", renamed = "virtual-back-2"

    func availability() -> BackendAvailability { .available }

    func devices() throws(CameraError) -> [DeviceDescriptor] {
        let lent = try second.devices().filter { $0.id == Self.lent }.map { d -> DeviceDescriptor in
            var d = d
            d.id = Self.renamed
            d.name += " (a second instance)"
            return d
        }
        return try first.devices() + lent
    }

    func bind(_ request: BindRequest, sink: DriverSink) throws(CameraError) -> any DriverBinding {
        guard request.device.id == Self.renamed else { return try first.bind(request, sink: sink) }
        var r = request
        r.device.id = Self.lent
        return try second.bind(r, sink: sink)
    }

    func inject(_ fault: InjectedFault, deviceID: String) {
        if deviceID == Self.renamed { second.inject(fault, deviceID: Self.lent) } else { first.inject(fault, deviceID: deviceID) }
    }

    func lastFocusPoint(deviceID: String) -> NormalizedPoint? {
        deviceID == Self.renamed ? second.lastFocusPoint(deviceID: Self.lent) : first.lastFocusPoint(deviceID: deviceID)
    }
}
