import Testing

@testable import CamHAL

/// `decimal` prints what the C library's `%.*f` prints, computed in integers where it can.
@Suite("decimal: printf's %.*f without CVarArg")
struct DecimalTests {
    /// Every printed place count on values of every magnitude, ties and their neighbours
    /// included, against `vsnprintf`. Would catch the integer path rounding a tie away from
    /// even (2.5 -> "3"), losing a carry (0.96 at 1 place -> "0.10" instead of "1.0"), dropping a
    /// zero after the point (1.05 -> "1.5"), or losing the sign of a negative that rounds to zero.
    @Test("matches vsnprintf's %.*f on a million values")
    func matchesPrintf() {
        var generator = SplitMix(seed: 0x5eed_cafe)
        var fixed: [Double] = [0, -0.0, 0.5, 1.5, 2.5, -2.5, 0.125, 0.375, 0.15, 0.25, 0.05, 1.05, 0.95, 0.96, 9.995, 99.5,
                               1e-20, 5e-19, 0x1p-64, 0x1p-63, 0x1p62, 0x1p63 - 1024, 123456789.125, -0.04, 1 / 3, 2 / 3]
        fixed += fixed.map { $0.nextUp } + fixed.map { $0.nextDown }
        var values = fixed
        for _ in 0..<60_000 {
            let bits = generator.next()
            // Magnitudes from 2^-70 to 2^70, and short decimals (x.yz5 ties) as people write them.
            let exponent = Int(bits % 141) - 70
            let mantissa = Double(generator.next() >> 11) / Double(UInt64(1) << 53)
            values.append((bits & 1 == 0 ? 1 : -1) * (1 + mantissa) * Double(sign: .plus, exponent: exponent, significand: 1))
            values.append(Double(Int64(bitPattern: generator.next()) % 2_000_000) / 1000 + 0.0005)
        }
        var mismatches: [String] = []
        for value in values {
            for places in 0...18 where mismatches.count < 10 {
                let ours = decimal(value, places: places), theirs = printfDecimal(value, places: places)
                if ours != theirs { mismatches.append("\(value) at \(places): \(ours) vs printf's \(theirs)") }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        #expect(values.count * 19 > 1_000_000)
    }

    /// What the integer path leaves to printf still prints: would catch NaN or a huge value
    /// trapping in the integer conversion.
    @Test("NaN, infinities, huge values and many places go through printf")
    func outsideTheIntegerPath() {
        #expect(decimal(.nan, places: 1) == printfDecimal(.nan, places: 1))
        #expect(decimal(-.infinity, places: 2) == "-inf")
        #expect(decimal(1e300, places: 1).hasSuffix(".0") && decimal(1e300, places: 1).count == 303)
        #expect(decimal(0.1, places: 25) == "0.1000000000000000055511151")
        #expect(decimal(1.25, places: -3) == "1")
    }
}

/// A small deterministic generator (SplitMix64), so a failure reproduces.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
