import CamHAL
import Dispatch
import Glibc

// Kept out of CLI.swift: the fuzz package links CLI.swift and sees only CamHAL's public API
// (`Locked` is package).
extension CLI {
    /// Makes Ctrl-C (SIGINT) and SIGTERM call `handler` with the signal's number (on a global
    /// queue) instead of ending the process, for verbs that must stop a camera or finish a file
    /// first. The returned closure gives both signals back their default action.
    static func onStopSignals(_ handler: @escaping @Sendable (Int32) -> Void) -> @Sendable () -> Void {
        let sources = Locked([SIGINT, SIGTERM].map { sig -> DispatchSourceSignal in
            signal(sig, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { handler(sig) }
            s.resume()
            return s
        })
        return {
            for s in sources.value { s.cancel() }
            signal(SIGINT, SIG_DFL)
            signal(SIGTERM, SIG_DFL)
        }
    }
}
