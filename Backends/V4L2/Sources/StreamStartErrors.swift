import CamHAL
import Glibc

extension V4L2Errno {
    /// The typed error for a refused VIDIOC_STREAMON on `node` of `device`, streaming `requested`
    /// chosen among `offered`: ENOSPC (uvcvideo passes the USB core's "not enough bandwidth" up
    /// from the alternate-setting change) becomes `insufficientBandwidth` with the offered formats
    /// that need less; EPIPE a media-pipeline mismatch; anything else as `cameraError` maps it
    /// (busy naming the holders, disconnected...). `descriptor` is the caller's own descriptor of
    /// the node, left out of a busy error's holders.
    package func streamOnError(
        device: String, node: String, descriptor: Int32?, requested: StreamFormat, offered: [FormatDescription], field: UInt32
    ) -> CameraError {
        switch code {
        case ENOSPC:
            return .insufficientBandwidth(
                device: "\(device) (\(node))", requested: requested,
                alternatives: Bandwidth.alternatives(to: requested, among: offered))
        case EPIPE:
            return .configurationFailed(
                "\(device) (\(node)): STREAMON refused (EPIPE): the media pipeline's formats do not match the capture format \(requested.pixelFormat) \(requested.width)x\(requested.height) field \(field)")
        default:
            return cameraError(device: "\(device) (\(node))", node: node, descriptor: descriptor)
        }
    }
}
