import CamHAL
import CamHALBench
import CamHALV4L2

// camhal-bench-v4l2: camhal-bench's measured child for the v4l2 backend, built as a V4L2 app
// would be: CamHAL and CamHALV4L2 alone, on FoundationEssentials. What its start-up costs is what
// a V4L2 app's start-up costs; camhal-bench runs it (unless --full-child) and passes the flags.
ChildMain.run(tool: "camhal-bench-v4l2", backend: "v4l2") { BackendRegistry([V4L2Backend()]) }
