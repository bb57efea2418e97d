import CamHAL
import Foundation
import Testing

/// An error an app shows the usual way says what went wrong.
@Suite struct CameraErrorMessageTests {
    /// `localizedDescription`, `String(describing:)` and interpolation all give the message the
    /// error already has. Would catch: the bridge's "The operation could not be completed.
    /// (CamHAL.CameraError error 7.)" coming back when the LocalizedError conformance is lost.
    @Test func localizedDescriptionIsTheMessage() {
        let errors: [CameraError] = [
            .permissionDenied(device: "/dev/video0", remedy: "add the user to the video group"),
            .invalidArgument(name: "zoom", value: "-1", reason: "must be positive"),
            .timeout("the first frame"),
            .noCamera(lookedAt: ["v4l2: no device"]),
        ]
        for error in errors {
            let any: any Error = error
            #expect(any.localizedDescription == error.description)
            #expect(!any.localizedDescription.contains("error "), "\(any.localizedDescription)")
            #expect(String(describing: any) == error.description)
            #expect((any as? LocalizedError)?.errorDescription == error.description)
        }
        #expect(CameraError.timeout("the first frame").localizedDescription == "timed out: the first frame")
    }
}
