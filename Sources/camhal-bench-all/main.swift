import CamHAL
import CamHALBackends
import CamHALBench

// camhal-bench-all: the same measured child as camhal-bench-v4l2, built as an app with the
// default traits is: CamHAL and CamHALBackends (every backend the build's traits enable), and
// nothing else. `camhal-bench --startup` compares the two, so the difference is what linking
// every backend costs an app at start-up, not what camhal-bench itself links.
ChildMain.run(tool: "camhal-bench-all", backend: nil) { Backends.registry() }
