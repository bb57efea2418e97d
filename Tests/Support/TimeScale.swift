import Foundation

/// How much slower than a real machine the tests run: `CAMHAL_TIME_SCALE` (a decimal number, at
/// least 1; 1 when unset). The VM scripts set it as they set the conformance suite's time scale,
/// since a guest under software emulation on a shared 2-core host runs one to two orders of
/// magnitude slower than the host: a promise such as "within a second" is checked as "within a
/// second times the scale" there, and the measured time is printed either way. A value that is
/// not a number of at least 1 stops the run with its name, rather than being read as 1.
public let testTimeScale: Double = {
    guard let text = ProcessInfo.processInfo.environment["CAMHAL_TIME_SCALE"] else { return 1 }
    guard let value = Double(text), value.isFinite, value >= 1, text.allSatisfy({ $0.isNumber || $0 == "." }) else {
        fatalError("CAMHAL_TIME_SCALE=\(text): want a decimal number of at least 1")
    }
    return value
}()
