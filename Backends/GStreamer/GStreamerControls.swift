#if GStreamer
@_spi(Backend) import CamHAL
@_spi(Backend) import CamHALV4L2

/// Raw device controls through GStreamer (X1): a device that v4l2src streams from a V4L2 node has
/// that node's controls, read and set on the node itself (V4L2 lets a second descriptor do so while
/// v4l2src streams); the test source, network and file sources and libcamerasrc devices have none
/// (an empty list, not an error).
@_spi(Backend)
extension GStreamerBackend: DeviceControlBackend {
    @_spi(Backend)
    public func controlDriver(for device: DeviceDescriptor) throws(CameraError) -> any DeviceControlDriver {
        guard device.details["gst.provider"] != "libcameraprovider",
              let node = device.details["device.path"] ?? device.details["api.v4l2.path"], node.hasPrefix("/dev/video")
        else { return NoDeviceControls() }
        return V4L2Backend.controlDriver(node: node, device: device)
    }
}
#endif
