// Text and output helpers the core, the backends and the camhal tool share, on Glibc alone, in
// place of Foundation's String(format:), trimmingCharacters, padding and FileHandle: linking them
// loads no full Foundation and no ICU (each adds to an app's start-up).
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `0x` and `value`'s two's-complement bits in lower-case hex, zero-padded to `digits` (what
/// `%#.8x` / `0x%08llx` print). (Free functions, not extensions: an extension of a standard
/// protocol shows in the public API listing even when its members are package-only.)
package func hex(_ value: some BinaryInteger, digits: Int) -> String {
    let s = String(UInt64(truncatingIfNeeded: value), radix: 16)
    return "0x" + String(repeating: "0", count: max(0, digits - s.count)) + s
}

/// `value` with `places` digits after the point, rounded as printf rounds (`%.1f`: the exact
/// binary value to the nearest, ties to even, so 0.15 is "0.1"), always with a `.` whatever
/// locale a C library set: what `String(format: "%.1f", value)` printed, without full Foundation
/// (and ICU) behind it.
///
/// Computed in integers for the values CamHAL prints (finite, below 2^63, at most 18 places):
/// `vsnprintf` through `withVaList` costs the process about 250,000 instructions per call the
/// first few times, in the Swift runtime's protocol-conformance scans behind `CVarArg`.
package func decimal(_ value: Double, places: Int) -> String {
    let places = min(max(places, 0), 30)
    guard value.isFinite, value.magnitude < 0x1p63, places <= 18 else { return printfDecimal(value, places: places) }
    let magnitude = value.magnitude
    var whole = UInt64(magnitude)  // exact: the magnitude is below 2^63
    let fraction = magnitude - Double(whole)  // exact: a double's fractional part is a double
    var scale: UInt64 = 1
    for _ in 0..<places { scale *= 10 }
    var digits: UInt64 = 0
    // fraction = m / 2^k exactly; below 2^-64 it rounds to 0 at 18 places or fewer.
    if fraction >= 0x1p-64 {
        let m = UInt128(fraction.significandBitPattern) | (UInt128(1) << 52)
        let k = 52 - Int(fraction.exponent)  // 53...116
        let product = m * UInt128(scale)  // below 2^113
        let quotient = product >> k
        let remainder = product & ((UInt128(1) << k) - 1)
        let half = UInt128(1) << (k - 1)
        digits = UInt64(quotient)
        let lastDigit = places > 0 ? digits : whole  // a tie goes to the even one
        if remainder > half || (remainder == half && lastDigit & 1 == 1) { digits += 1 }
        if digits == scale {
            digits = 0
            whole += 1
        }
    }
    var text = value.sign == .minus ? "-" : ""
    text += String(whole)
    guard places > 0 else { return text }
    let fractionText = String(digits)
    return text + "." + String(repeating: "0", count: places - fractionText.count) + fractionText
}

/// `decimal` through the C library's `%.*f`: for what the integer path does not cover (NaN,
/// infinities, 2^63 and above, more than 18 places), and the reference its tests compare with.
package func printfDecimal(_ value: Double, places: Int) -> String {
    let places = Int32(min(max(places, 0), 30))
    let previous = uselocale(cLocale)
    defer { uselocale(previous) }
    // %f of the largest Double is 309 digits; a sign, a point and the places besides.
    var buffer = [CChar](repeating: 0, count: 320 + Int(places))
    let count = withVaList([places, value]) { vsnprintf(&buffer, buffer.count, "%.*f", $0) }
    return String(decoding: buffer.prefix(max(0, min(Int(count), buffer.count - 1))).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The C locale (every category), for `decimal`'s `uselocale`: created once, never freed.
// nonisolated(unsafe): a locale object is immutable once made, and uselocale only reads it.
private nonisolated(unsafe) let cLocale = newlocale(0, "C", nil)

/// `parts` with `separator` between them, as `parts.joined(separator:)` gives them. For text made
/// on the way to a device's first frame (discovery's device details): the standard library's
/// `joined(separator:)` is unspecialized generic code whose first use in a process looks up
/// Array's `Collection` conformance at run time, a scan of every conformance record loaded
/// (190,000 instructions on the V4L2 open path, counted with callgrind). This is a loop.
package func joinedText(_ parts: [String], separator: String) -> String {
    var text = parts.first ?? ""
    for part in parts.dropFirst() {
        text += separator
        text += part
    }
    return text
}

/// `text` without leading and trailing spaces and tabs (`trimmingCharacters(in: .whitespaces)`).
package func trimmingSpaces(_ text: some StringProtocol) -> String {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
    guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else { return "" }
    return String(text[first...last])
}

/// `text` without leading and trailing Unicode whitespace and line breaks (what
/// `trimmingCharacters(in: .whitespacesAndNewlines)` trims: the White_Space property).
package func trimmingWhitespace(_ text: some StringProtocol) -> String {
    guard let first = text.firstIndex(where: { !$0.isWhitespace }), let last = text.lastIndex(where: { !$0.isWhitespace }) else { return "" }
    return String(text[first...last])
}

/// `text` cut or padded with spaces on the right to `width` characters, for a column (what
/// `padding(toLength: width, withPad: " ", startingAt: 0)` does).
package func padded(_ text: some StringProtocol, to width: Int) -> String {
    text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
}

/// Writes all of `bytes` to `descriptor`, again after a short write or an interrupted one (what
/// FileHandle's `write` does); false when the descriptor refused them (a closed pipe).
@discardableResult
package func writeAll(_ descriptor: Int32, _ bytes: some Collection<UInt8>) -> Bool {
    Array(bytes).withUnsafeBytes { raw in
        guard let base = raw.baseAddress else { return true }
        var offset = 0
        while offset < raw.count {
            let n = write(descriptor, base + offset, raw.count - offset)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }
}

/// Writes `line` and a line break to standard error, unbuffered.
package func printError(_ line: String) {
    writeAll(2, Array((line + "\n").utf8))
}
