#if GStreamer
/// The subset of gst-launch syntax CamHAL hands to GStreamer's parser: a linear chain of
/// `element property=value ...` and caps (`video/x-raw,width=(int)640`) separated by `!`.
///
/// GStreamer 1.22's parser dereferences NULL or recurses without bound on several malformed
/// descriptions (element references, groups, quotes inside words: four such crashes were found by
/// Fuzz/FuzzSourceDescription, each killing the process). Screening for each crasher one at a time
/// kept missing the next one, so everything outside this small grammar is refused before the
/// parser sees it, in every mode (an app's trusted pipeline too): no element references (`t.`),
/// no groups (`( ... )`), quotes only around a whole property value, no control characters.
/// A branching pipeline (tee, muxers) is linked in code, not described.
enum DescriptionSyntax {
    /// What is wrong with `description`, naming the part, or nil when it is in the grammar.
    static func problem(in description: String) -> String? {
        let c = Array(description.unicodeScalars)
        if let bad = c.first(where: { ($0.value < 0x20 && !whitespace.contains($0)) || $0.value == 0x7f }) {
            return "it contains the control character U+\(String(bad.value, radix: 16, uppercase: true))"
        }
        guard let segments = split(c) else { return "a quote is never closed" }
        for segment in segments {
            let shown = String(String.UnicodeScalarView(segment)).trimmingSpaces
            if let why = segmentProblem(segment) {
                return shown.isEmpty ? why : "'\(shown)': \(why)"
            }
        }
        return nil
    }

    static let whitespace: Set<Unicode.Scalar> = [" ", "\t", "\n", "\r"]
    static let nameCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+".unicodeScalars)
    static let capsCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+/.,=:;[]{}<>\"' \t".unicodeScalars)

    /// `c` cut at every scalar `isCut` accepts outside quotes and not escaped (the cut scalar
    /// dropped, quotes and escapes kept in the pieces), or nil when a quote is left open.
    static func pieces(_ c: [Unicode.Scalar], cutAt isCut: (Unicode.Scalar) -> Bool) -> [[Unicode.Scalar]]? {
        var pieces: [[Unicode.Scalar]] = []
        var current: [Unicode.Scalar] = []
        var quote: Unicode.Scalar?
        var i = 0
        while i < c.count {
            let ch = c[i]
            if ch == "\\", i + 1 < c.count {
                current += [ch, c[i + 1]]
                i += 2
                continue
            }
            if let q = quote {
                if ch == q { quote = nil }
            } else if ch == "\"" || ch == "'" {
                quote = ch
            } else if isCut(ch) {
                pieces.append(current)
                current = []
                i += 1
                continue
            }
            current.append(ch)
            i += 1
        }
        guard quote == nil else { return nil }
        pieces.append(current)
        return pieces
    }

    /// The text between `!`s (outside quotes, not escaped), or nil when a quote is left open.
    static func split(_ c: [Unicode.Scalar]) -> [[Unicode.Scalar]]? { pieces(c) { $0 == "!" } }

    /// The words of a segment (split at whitespace outside quotes, escapes kept), with
    /// `key = value` joined into one word as gst-launch reads it.
    static func words(_ segment: [Unicode.Scalar]) -> [[Unicode.Scalar]] {
        // A segment of `split` never leaves a quote open.
        let raw = (pieces(segment, cutAt: whitespace.contains) ?? [segment]).filter { !$0.isEmpty }
        var joined: [[Unicode.Scalar]] = []
        for w in raw {
            if let last = joined.last, last.last == "=" || w.first == "=" {
                joined[joined.count - 1] = last + w
            } else {
                joined.append(w)
            }
        }
        return joined
    }

    static func segmentProblem(_ segment: [Unicode.Scalar]) -> String? {
        let ws = words(segment)
        guard let first = ws.first else { return "nothing between two '!' (or at an end)" }
        if first.contains("/") { return capsProblem(segment) }
        if segment.contains("(") || segment.contains(")") {
            if !ws.contains(where: { isQuotedValueWord($0) && ($0.contains("(") || $0.contains(")")) }) {
                return "element 'bin' (a '( ... )' group) is not on the allowlist: groups are not accepted; link a branching pipeline in code"
            }
        }
        guard first.allSatisfy(nameCharacters.contains) else {
            return "'\(text(first))' is not an element name (letters, digits, '_', '-', '+'); element references ('name.') are not accepted"
        }
        for w in ws.dropFirst() {
            guard let eq = w.firstIndex(of: "="), eq > 0 else {
                return "'\(text(w))' is not property=value (bare words, element references and groups are not accepted)"
            }
            let key = w[..<eq], value = Array(w[(eq + 1)...])
            guard key.allSatisfy(nameCharacters.contains) else { return "'\(text(Array(key)))' is not a property name" }
            guard let head = value.first else { return "property '\(text(Array(key)))' has no value" }
            if head == "\"" || head == "'" {
                guard closingQuote(in: value) == value.count - 1 else {
                    return "property '\(text(Array(key)))': a quoted value must be the whole value"
                }
            } else if value.contains(where: { $0 == "\"" || $0 == "'" || $0 == "(" || $0 == ")" }) {
                return "property '\(text(Array(key)))': quotes and parentheses only inside a quoted value (\"...\")"
            }
        }
        return nil
    }

    /// Caps such as `video/x-raw, width=(int)640, framerate=30/1`: only caps characters, and a
    /// parenthesis only as a type cast right after `=` (`=(int)`).
    static func capsProblem(_ segment: [Unicode.Scalar]) -> String? {
        var i = 0
        while i < segment.count {
            let ch = segment[i]
            if ch == "(" {
                var j = i + 1
                while j < segment.count, ("a"..."z").contains(segment[j]) { j += 1 }
                var k = i - 1
                while k >= 0, segment[k] == " " { k -= 1 }
                guard k >= 0, segment[k] == "=", j > i + 1, j < segment.count, segment[j] == ")" else {
                    return "in caps, a parenthesis only as a type after '=' (width=(int)640)"
                }
                i = j + 1
                continue
            }
            guard capsCharacters.contains(ch) || ch == "\\" else {
                return "'\(Character(ch))' is not accepted in caps"
            }
            i += 1
        }
        return nil
    }

    static func isQuotedValueWord(_ w: [Unicode.Scalar]) -> Bool {
        guard let eq = w.firstIndex(of: "="), eq + 1 < w.count else { return false }
        return w[eq + 1] == "\"" || w[eq + 1] == "'"
    }

    /// Index of the quote closing the one at `value[0]` (backslash escapes skipped), or nil.
    static func closingQuote(in value: [Unicode.Scalar]) -> Int? {
        guard let q = value.first else { return nil }
        var i = 1
        while i < value.count {
            if value[i] == "\\" {
                i += 2
                continue
            }
            if value[i] == q { return i }
            i += 1
        }
        return nil
    }

    static func text(_ scalars: [Unicode.Scalar]) -> String { String(String.UnicodeScalarView(scalars)) }
}

extension String {
    fileprivate var trimmingSpaces: String {
        let s = unicodeScalars.drop { DescriptionSyntax.whitespace.contains($0) }
        return String(String.UnicodeScalarView(s.reversed().drop { DescriptionSyntax.whitespace.contains($0) }.reversed()))
    }
}
#endif
