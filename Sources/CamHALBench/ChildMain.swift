import CamHAL
import Dispatch
import Glibc

/// The `main` of the measured children built with a chosen set of backends (`camhal-bench-v4l2`,
/// `camhal-bench-all`): parse the child's options, open through `registry`, exit with the
/// child's status. Their start-up is what an app linking just those backends pays, so nothing
/// else is linked here (no full Foundation).
package enum ChildMain {
    /// - Parameters:
    ///   - tool: the executable's name, for its error lines.
    ///   - backend: the one `--backend` it serves, or nil for any its registry has.
    ///   - registry: the backends this executable links.
    package static func run(tool: String, backend: String?, registry: @escaping @Sendable () -> BackendRegistry) -> Never {
        let options: Options
        do {
            options = try Options(Array(CommandLine.arguments.dropFirst()))
        } catch {
            printError("\(tool): \(error)")
            exit(2)
        }
        guard options.child, backend == nil || options.backend == backend else {
            printError("\(tool): run by camhal-bench (--child\(backend.map { " --backend \($0)" } ?? "")), not by hand")
            exit(2)
        }
        // As in camhal-bench: the work runs in a detached task while the main thread waits
        // (valgrind cannot follow a main thread parked in dispatch_main).
        let status = Locked<Int32>(1)
        let done = DispatchSemaphore(value: 0)
        Task.detached { [options] in
            do {
                status.set(try await Child.run(options) { o, configuration in try Child.open(registry(), o, configuration) })
            } catch {
                printError("\(tool): \(error)")
            }
            done.signal()
        }
        done.wait()
        exit(status.value)
    }
}
