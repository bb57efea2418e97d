import CamHAL

/// The range a numeric option accepts, as its error message states it: `[lower, upper]`, or
/// `(lower, upper]` when `lowerIncluded` is false (a duration that must be positive).
struct NumericRange: Sendable, CustomStringConvertible {
    let lower: Double
    let upper: Double
    var lowerIncluded = true
    /// The unit named after the range (`seconds`), or empty.
    var unit = ""

    func contains(_ value: Double) -> Bool {
        (lowerIncluded ? value >= lower : value > lower) && value <= upper
    }

    var description: String {
        let bounds = lowerIncluded ? "\(Self.format(lower))...\(Self.format(upper))" : "greater than \(Self.format(lower)), at most \(Self.format(upper))"
        return unit.isEmpty ? bounds : "\(bounds) \(unit)"
    }

    /// `1e9` rather than `1000000000.0`; `100` rather than `100.0`.
    static func format(_ v: Double) -> String {
        guard v == v.rounded(), abs(v) < 1e18 else { return "\(v)" }
        var mantissa = Int(v), exponent = 0
        while mantissa != 0, mantissa % 10 == 0 {
            mantissa /= 10
            exponent += 1
        }
        return exponent >= 6 ? "\(mantissa)e\(exponent)" : String(Int(v))
    }

    /// CamHAL's `Seconds.maximum` (about 31 years, the longest wait it schedules), restated here
    /// because the fuzz package compiles this file outside CamHAL's package (a test checks they agree).
    static let maximumSeconds: Double = 1e9

    /// A span of time in seconds: 0 (or more than 0) to `maximumSeconds`.
    static func seconds(positive: Bool = false) -> NumericRange {
        NumericRange(lower: 0, upper: maximumSeconds, lowerIncluded: !positive, unit: "seconds")
    }
}

/// The CLI's one reader of numbers (every numeric option of every verb goes through it): decimal
/// only (`12`, `-3`, `0.5`, `2.5e3`; no hex, `inf`, `nan` or digit separators), checked against the
/// option's range. Errors are `UsageError`s naming the option, the value as typed and the range.
enum NumericOption {
    /// A decimal number: an optional sign, digits with an optional fraction, an optional exponent.
    static func isDecimal(_ text: String) -> Bool {
        var s = Substring(text)
        if let c = s.first, c == "+" || c == "-" { s = s.dropFirst() }
        let mantissaEnd = s.firstIndex { $0 == "e" || $0 == "E" } ?? s.endIndex
        let mantissa = s[..<mantissaEnd]
        let parts = mantissa.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.allSatisfy({ $0.allSatisfy(\.isASCIIDigit) }), parts.contains(where: { !$0.isEmpty }) else { return false }
        guard mantissaEnd < s.endIndex else { return true }
        var exponent = s[s.index(after: mantissaEnd)...]
        if let c = exponent.first, c == "+" || c == "-" { exponent = exponent.dropFirst() }
        return !exponent.isEmpty && exponent.allSatisfy(\.isASCIIDigit)
    }

    /// `text` as a number in `range`, or a `UsageError` naming `option`, `text` and the range.
    static func number(_ text: String, option: String, in range: NumericRange) throws -> Double {
        guard isDecimal(text), let v = Double(text) else {
            throw UsageError("option --\(option): '\(text)' is not a decimal number (range \(range))")
        }
        guard v.isFinite, range.contains(v) else { throw UsageError("option --\(option): '\(text)' is out of range (\(range))") }
        // A span under a nanosecond is zero once it is a Duration (the library then refused
        // "0.0 seconds", a value nobody typed).
        if range.unit == "seconds", !range.lowerIncluded, v < 1e-9 {
            throw UsageError("option --\(option): '\(text)' is out of range (at least 1e-9 seconds: a shorter span is no time)")
        }
        return v
    }

    /// `text` as an integer in `range`, or a `UsageError` naming `option`, `text` and the range.
    /// An integer too large for `Int` is out of range, not "not an integer".
    static func integer(_ text: String, option: String, in range: ClosedRange<Int>) throws -> Int {
        let digits = text.first == "+" || text.first == "-" ? text.dropFirst() : Substring(text)
        let bounds = range.upperBound == Int.max ? "at least \(range.lowerBound)" : "\(range.lowerBound)...\(range.upperBound)"
        guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit) else {
            throw UsageError("option --\(option): '\(text)' is not a decimal integer (range \(bounds))")
        }
        guard let v = Int(text), range.contains(v) else {
            throw UsageError("option --\(option): '\(text)' is out of range (\(bounds))")
        }
        return v
    }

    /// The sides `WIDTHxHEIGHT` options accept: what V4L2 (32-bit) and every image format here can carry.
    static let sideRange = 1...65535

    /// `text` as `WIDTHxHEIGHT` with decimal sides in `sideRange`, or a `UsageError` naming it.
    static func size(_ text: String, option: String) throws -> Size {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }) else {
            throw UsageError("option --\(option): '\(text)' is not WIDTHxHEIGHT (e.g. 640x480)")
        }
        guard let w = Int(parts[0]), let h = Int(parts[1]), sideRange.contains(w), sideRange.contains(h) else {
            throw UsageError("option --\(option): '\(text)' is out of range (each side \(sideRange.lowerBound)...\(sideRange.upperBound))")
        }
        return Size(width: w, height: h)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

extension Arguments {
    /// A number option in `range`, or nil when absent; a `UsageError` naming the value as typed otherwise.
    func number(_ name: String, in range: NumericRange) throws -> Double? {
        try self[name].map { try NumericOption.number($0, option: name, in: range) }
    }

    /// An integer option in `range`, or nil when absent; a `UsageError` naming the value as typed otherwise.
    func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        try self[name].map { try NumericOption.integer($0, option: name, in: range) }
    }

    /// A `WIDTHxHEIGHT` option (each side 1...65535), or nil when absent.
    func size(_ name: String) throws -> Size? {
        try self[name].map { try NumericOption.size($0, option: name) }
    }
}
