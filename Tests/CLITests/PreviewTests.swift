import CamHAL
import CamHALTestSupport
import Foundation
import Testing

/// `camhal preview` on a virtual X server (Xvfb): screenshots of its window compared with the
/// virtual camera's picture, which encodes the world x in luma (SceneRenderer), so the zoom can
/// be read off the screen.
extension CamhalBinaryTests {
    @Suite("camhal preview under Xvfb", .enabled(if: PreviewDisplay.toolsPresent, PreviewDisplay.skipReason))
    struct PreviewTests {
        /// The window shows the virtual camera's 1x picture; `+` (Shift+= through XTest) zooms in to
        /// 2x, which the status line says and the screenshot shows: half the world span over the
        /// same pixels; a click focuses on the point under the pointer; `q` ends it with status 0.
        @Test("the window shows the camera's frames; + zooms the picture 2x; a click focuses; q quits")
        func zoomKeyZoomsThePicture() async throws {
            let display = try await PreviewDisplay.start()
            defer { display.stop() }
            let preview = try display.run(try camhalBinary(), ["preview", "--backend", "virtual", "--device", "virtual-back"])
            defer { preview.kill() }

            let opened = try await preview.waitForLine { $0.hasPrefix("preview ") }
            let size = try #require(opened.split(separator: " ").dropFirst().first.flatMap { Self.size(String($0)) }, "\(opened)")
            _ = try await preview.waitForLine { $0.hasPrefix("status ") && $0.contains(" zoom 1x ") }

            // 1x: the window (at the screen's corner: no window manager) shows the picture.
            let one = try await display.settledRow(size: size) { Self.Fit($0).matches(zoom: 1) }
            #expect(one.window == size, "window \(one.window) for a \(size) preview")
            let fit1 = Self.Fit(one.row)
            #expect(fit1.matches(zoom: 1), "1x: \(fit1); row \(Self.sample(one.row))")

            try await display.xdotool(["mousemove", "\(size.width / 2)", "\(size.height / 2)", "key", "plus"])
            _ = try await preview.waitForLine { $0.hasPrefix("status ") && $0.contains(" zoom 2x ") }
            let two = try await display.settledRow(size: size) { Self.Fit($0).matches(zoom: 2) }
            let fit2 = Self.Fit(two.row)
            #expect(fit2.matches(zoom: 2), "2x: \(fit2); row \(Self.sample(two.row))")
            // The same pixels span half the world: the gradient halved about the same centre.
            let ratio = fit1.slope / fit2.slope
            #expect(abs(ratio - 2) < 0.1, "1x/2x gradient ratio \(ratio), want 2")

            // A click a quarter in from the top-left corner focuses there (normalized coordinates).
            try await display.xdotool(["mousemove", "\(size.width / 4)", "\(size.height / 4)", "click", "1"])
            _ = try await preview.waitForLine { $0 == "focus point 0.25,0.25" }

            try await display.xdotool(["key", "q"])
            let status = try await preview.exitStatus()
            #expect(status == 0, "camhal preview: \(preview.output)")
        }

        /// A device that cannot be opened ends the preview with status 1 naming it, window or not.
        @Test("a device error exits 1 and names the device")
        func deviceErrorExits1() async throws {
            let display = try await PreviewDisplay.start()
            defer { display.stop() }
            let preview = try display.run(try camhalBinary(), ["preview", "--backend", "virtual", "--device", "no-such-camera"])
            defer { preview.kill() }
            let status = try await preview.exitStatus()
            #expect(status == 1, "\(preview.output)")
            #expect(preview.output.contains("'no-such-camera'"), "\(preview.output)")
        }

        /// A straight line fitted to a screenshot row through the middle of the window, to compare
        /// with what the virtual camera's wide lens shows there at a zoom ratio: its luma rises
        /// linearly over the world x -2...2 (`SceneRenderer`), the wide lens at 1x sees -1...1
        /// across the width, and the middle row is neutral (U = 128 names the wide lens, V encodes
        /// world y = 0), so after BT.601 YUV to RGB the gray is 255 * (x + 2) / 4: 127.5 at the
        /// centre, rising 127.5 / (width * zoom) per pixel. The outer tenth on each side is left
        /// out (scaling filters at the edges).
        struct Fit: CustomStringConvertible {
            let width: Int
            /// Levels per pixel.
            let slope: Double
            /// The fitted gray at the middle column.
            let centre: Double
            /// Root-mean-square distance of the row from the line: small for the camera's ramp.
            let residual: Double

            init(_ row: [Double]) {
                width = row.count
                let xs = (row.count / 10)..<(row.count - row.count / 10)
                let n = Double(xs.count)
                let mx = xs.reduce(0.0) { $0 + Double($1) } / n
                let my = xs.reduce(0.0) { $0 + row[$1] } / n
                let sxy = xs.reduce(0.0) { $0 + (Double($1) - mx) * (row[$1] - my) }
                let sxx = xs.reduce(0.0) { $0 + (Double($1) - mx) * (Double($1) - mx) }
                let slope = sxx > 0 ? sxy / sxx : 0
                self.slope = slope
                centre = my + slope * (Double(row.count) / 2 - mx)
                residual = (xs.reduce(0.0) { sum, c in
                    let d = row[c] - (my + slope * (Double(c) - mx))
                    return sum + d * d
                } / n).squareRoot()
            }

            /// The slope within 5 % of the camera's at `zoom`, the centre within 8 levels of mid
            /// gray, and the row a straight ramp (within 3 levels RMS): rounding in the camera's
            /// YUV, the scaler and the RGB conversion stays well inside these.
            func matches(zoom: Double) -> Bool {
                let want = 127.5 / (Double(width) * zoom)
                return abs(slope / want - 1) < 0.05 && abs(centre - 127.5) < 8 && residual < 3
            }

            var description: String {
                String(format: "slope %.4f levels/px (1x wants %.4f), centre %.1f, residual %.2f", slope, 127.5 / Double(max(1, width)), centre, residual)
            }
        }

        static func size(_ text: String) -> Size? {
            let p = text.split(separator: "x").compactMap { Int($0) }
            return p.count == 2 ? Size(width: p[0], height: p[1]) : nil
        }

        static func sample(_ row: [Double]) -> String {
            stride(from: 0, to: row.count, by: max(1, row.count / 8)).map { String(Int(row[$0].rounded())) }.joined(separator: " ")
        }
    }
}

extension CamhalBinaryTests {
    /// What needs no X server: usage errors exit 2, a missing display exits 1 and says so.
    @Suite("camhal preview: exit codes")
    struct PreviewExitTests {
        @Test("a bad --seconds exits 2 naming it; no DISPLAY exits 1 naming DISPLAY")
        func exitCodes() async throws {
            let usage = try await camhal(["preview", "--backend", "virtual", "--seconds", "-1"])
            #expect(usage.status == 2 && usage.stderr.contains("'-1'"), "\(usage)")
            let noDisplay = try await camhal(["preview", "--backend", "virtual"], environment: ["DISPLAY": ""])
            #expect(noDisplay.status == 1 && noDisplay.stderr.contains("DISPLAY"), "\(noDisplay)")
        }
    }
}

/// A private X server (Xvfb) on a display number it chose itself, plus the tools that look at it.
final class PreviewDisplay: Sendable {
    static let tools = ["Xvfb", "xwd", "xdotool"]
    static var toolsPresent: Bool {
        tools.allSatisfy(toolOnPath) && gstreamerPlugin("libgstximagesink.so") && gstreamerPlugin("libgstpango.so")
    }
    static let skipReason: Comment = "needs Xvfb (xvfb), xwd (x11-apps), xdotool and GStreamer's ximagesink/textoverlay (gstreamer1.0-x): scripts/bootstrap installs them"

    static func gstreamerPlugin(_ file: String) -> Bool {
        ["/usr/lib/x86_64-linux-gnu/gstreamer-1.0", "/usr/lib/aarch64-linux-gnu/gstreamer-1.0", "/usr/lib/gstreamer-1.0"]
            .contains { FileManager.default.fileExists(atPath: "\($0)/\(file)") }
    }

    let server: BackgroundProcess
    let display: String
    let scratch = Scratch()

    private init(server: BackgroundProcess, display: String) {
        self.server = server
        self.display = display
    }

    /// Starts Xvfb with a black root window; `-displayfd` makes it pick a free display and print
    /// its number once it accepts clients, so nothing waits on a guess.
    static func start() async throws -> PreviewDisplay {
        let server = try BackgroundProcess(URL(fileURLWithPath: "/usr/bin/env"),
                               ["Xvfb", "-displayfd", "1", "-screen", "0", "1024x768x24", "-br", "-nolisten", "tcp"],
                               environment: ProcessInfo.processInfo.environment)
        do {
            let number = try await server.waitForLine { Int($0) != nil }
            return PreviewDisplay(server: server, display: ":\(number)")
        } catch {
            server.kill()
            throw error
        }
    }

    func stop() { server.kill() }

    /// Runs `executable` on this display.
    func run(_ executable: URL, _ args: [String]) throws -> BackgroundProcess {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "CAMHAL_BACKENDS")
        env["DISPLAY"] = display
        return try BackgroundProcess(executable, args, environment: env)
    }

    func xdotool(_ args: [String]) async throws {
        let child = try run(URL(fileURLWithPath: "/usr/bin/env"), ["xdotool"] + args)
        let status = try await child.exitStatus()
        try #require(status == 0, "xdotool \(args): \(child.output)")
    }

    /// A screenshot of the whole screen.
    func screenshot() async throws -> XWDImage {
        let file = scratch.url.appendingPathComponent("shot-\(UUID().uuidString).xwd")
        let child = try run(URL(fileURLWithPath: "/usr/bin/env"), ["xwd", "-root", "-silent", "-out", file.path])
        let status = try await child.exitStatus()
        try #require(status == 0, "xwd: \(child.output)")
        defer { try? FileManager.default.removeItem(at: file) }
        return try XWDImage(Data(contentsOf: file))
    }

    /// Screenshots until the middle row `matches` (the sink draws a frame a moment after the
    /// status line names it) or 10 s passed; returns the last window size (the non-black box at
    /// the screen's corner) and middle row (each pixel the mean luma of 5 rows).
    func settledRow(size: Size, matches: ([Double]) -> Bool) async throws -> (window: Size, row: [Double]) {
        let deadline = Date(timeIntervalSinceNow: 10)
        while true {
            let shot = try await screenshot()
            let window = shot.nonBlackBox()
            let rows = (size.height / 2 - 2)...(size.height / 2 + 2)
            let row = (0..<min(size.width, shot.width)).map { x in rows.reduce(0.0) { $0 + shot.luma(x, $1) } / Double(rows.count) }
            if (row.count == size.width && matches(row)) || Date() > deadline { return (window, row) }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
    }
}

/// A child process whose output goes to a file (no descriptor of this process stays open while
/// it runs: conformance check R3a counts them in parallel), read back as lines.
final class BackgroundProcess: Sendable {
    let child: SpawnedChild
    let outputURL: URL

    init(_ executable: URL, _ args: [String], environment: [String: String]) throws {
        outputURL = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-preview-\(UUID().uuidString).out")
        try Data().write(to: outputURL)
        child = try SpawnedChild(executable.path, args, environment: environment, stdout: outputURL.path, stderr: outputURL.path)
    }

    deinit { try? FileManager.default.removeItem(at: outputURL) }

    /// Everything the child printed so far (stdout and stderr).
    var output: String { (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "" }

    /// The first line of output matching `predicate`, polling the file until it appears, the child
    /// exits or 20 s pass (a loaded 2-core machine starts GStreamer slowly).
    func waitForLine(_ predicate: (String) -> Bool) async throws -> String {
        let deadline = Date(timeIntervalSinceNow: 20)
        while true {
            let exited = child.exited
            if let line = output.split(separator: "\n").map(String.init).first(where: predicate) { return line }
            if exited != nil || Date() > deadline {
                Issue.record("no such line (\(exited.map { "exited \($0)" } ?? "timed out")); output:\n\(output)")
                throw CancellationError()
            }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
    }

    /// Waits up to 20 s for the child to exit; its status.
    func exitStatus() async throws -> Int32 {
        let deadline = Date(timeIntervalSinceNow: 20)
        while Date() < deadline {
            if let s = child.exited { return s }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        Issue.record("did not exit within 20 s; output:\n\(output)")
        throw CancellationError()
    }

    func kill() { child.terminate() }
}

/// An `xwd` screenshot: 32-bit TrueColor ZPixmap, as Xvfb's 24-bit screens give.
struct XWDImage {
    let width: Int
    let height: Int
    private let pixels: [UInt8]
    private let bytesPerLine: Int
    private let littleEndian: Bool
    private let masks: (r: UInt32, g: UInt32, b: UInt32)

    init(_ data: Data) throws {
        let bytes = [UInt8](data)
        func field(_ i: Int) -> Int {
            let o = i * 4
            return bytes.count >= o + 4 ? Int(bytes[o]) << 24 | Int(bytes[o + 1]) << 16 | Int(bytes[o + 2]) << 8 | Int(bytes[o + 3]) : 0
        }
        // XWDFileHeader: 25 big-endian CARD32s (header_size, file_version, pixmap_format, depth,
        // width, height, xoffset, byte_order, bitmap_unit, bit_order, pad, bits_per_pixel,
        // bytes_per_line, visual_class, red/green/blue masks, bits_per_rgb, colormap_entries,
        // ncolors, ...), the window name, then ncolors 12-byte colours, then the pixels.
        let headerSize = field(0), format = field(2), bitsPerPixel = field(11), ncolors = field(19)
        guard format == 2, bitsPerPixel == 32 else {
            throw XWDError(message: "xwd format \(format) at \(bitsPerPixel) bits per pixel; want ZPixmap at 32")
        }
        width = field(4)
        height = field(5)
        littleEndian = field(7) == 0
        bytesPerLine = field(12)
        masks = (UInt32(field(14)), UInt32(field(15)), UInt32(field(16)))
        let start = headerSize + ncolors * 12
        guard bytes.count >= start + bytesPerLine * height else { throw XWDError(message: "xwd file truncated (\(bytes.count) bytes)") }
        pixels = Array(bytes[start..<(start + bytesPerLine * height)])
    }

    struct XWDError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    func rgb(_ x: Int, _ y: Int) -> (r: Int, g: Int, b: Int) {
        let o = y * bytesPerLine + x * 4
        let b0 = UInt32(pixels[o]), b1 = UInt32(pixels[o + 1]), b2 = UInt32(pixels[o + 2]), b3 = UInt32(pixels[o + 3])
        let v: UInt32 = littleEndian ? (b3 << 24) | (b2 << 16) | (b1 << 8) | b0 : (b0 << 24) | (b1 << 16) | (b2 << 8) | b3
        func channel(_ mask: UInt32) -> Int { Int((v & mask) >> UInt32(mask.trailingZeroBitCount)) }
        return (channel(masks.r), channel(masks.g), channel(masks.b))
    }

    /// BT.601 luma of the pixel: on the picture, the camera's Y scaled to full range.
    func luma(_ x: Int, _ y: Int) -> Double {
        let p = rgb(x, y)
        return 0.299 * Double(p.r) + 0.587 * Double(p.g) + 0.114 * Double(p.b)
    }

    /// The size of the box of non-black pixels starting at the top-left corner (the root window is
    /// black: Xvfb -br), measured along the first row and column.
    func nonBlackBox() -> Size {
        func lit(_ x: Int, _ y: Int) -> Bool { let p = rgb(x, y); return max(p.r, p.g, p.b) > 8 }
        let y = height > 0 ? min(height - 1, 40) : 0, x = width > 0 ? min(width - 1, 40) : 0
        let w = (0..<width).last { lit($0, y) }.map { $0 + 1 } ?? 0
        let h = (0..<height).last { lit(x, $0) }.map { $0 + 1 } ?? 0
        return Size(width: w, height: h)
    }
}
