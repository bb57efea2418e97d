#if Media
import CZBar
import CamHAL
import FoundationEssentials
import Synchronization

/// A barcode symbology.
public enum BarcodeFormat: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// QR Code.
    case qrCode = "QR"
    /// EAN-13 (and ISBN-13).
    case ean13 = "EAN-13"
    /// EAN-8.
    case ean8 = "EAN-8"
    /// UPC-A.
    case upcA = "UPC-A"
    /// UPC-E.
    case upcE = "UPC-E"
    /// Code 128.
    case code128 = "Code 128"
    /// Code 39.
    case code39 = "Code 39"
    /// Code 93.
    case code93 = "Code 93"
    /// Interleaved 2 of 5.
    case interleaved2of5 = "I2/5"
    /// Codabar.
    case codabar = "Codabar"
    /// GS1 DataBar.
    case dataBar = "DataBar"
    /// PDF417.
    case pdf417 = "PDF417"

    public var description: String { rawValue }

    var zbar: zbar_symbol_type_t {
        switch self {
        case .qrCode: return ZBAR_QRCODE
        case .ean13: return ZBAR_EAN13
        case .ean8: return ZBAR_EAN8
        case .upcA: return ZBAR_UPCA
        case .upcE: return ZBAR_UPCE
        case .code128: return ZBAR_CODE128
        case .code39: return ZBAR_CODE39
        case .code93: return ZBAR_CODE93
        case .interleaved2of5: return ZBAR_I25
        case .codabar: return ZBAR_CODABAR
        case .dataBar: return ZBAR_DATABAR
        case .pdf417: return ZBAR_PDF417
        }
    }

    init?(zbar type: zbar_symbol_type_t) {
        guard let f = BarcodeFormat.allCases.first(where: { $0.zbar == type }) else { return nil }
        self = f
    }
}

/// One decoded barcode.
public struct Barcode: Sendable, Hashable, CustomStringConvertible {
    /// The decoded text (UTF-8 as zbar reports it).
    public let value: String
    /// The symbology.
    public let format: BarcodeFormat
    /// Bounding box in frame-buffer pixels (ML Kit `boundingBox`).
    public let bounds: PixelRect
    /// Bounding box in view-normalized coordinates: relative to the frame's visible rectangle
    /// (the zoomed view), top-left origin, mirrored like the preview for front cameras when the
    /// scanner's `mirror` says so. Vision's bottom-left origin (seeds' pitfall 11) does not apply.
    public let normalizedBounds: NormalizedRect
    /// The symbol's outline points in view-normalized coordinates (QR: its corners).
    public let corners: [NormalizedPoint]

    public var description: String { "\(format): \(value) at \(bounds) (view \(normalizedBounds))" }
}

/// Finds barcodes in frames with zbar. `scan` is thread-safe (one zbar scanner, locked).
// @unchecked: holds a zbar C scanner handle, used only with `lock` held.
public final class BarcodeScanner: FrameAnalyzer, @unchecked Sendable {
    /// The symbologies it looks for.
    public let formats: Set<BarcodeFormat>
    /// Whether view coordinates are mirrored: `.auto` mirrors front-facing cameras, like their preview.
    public let mirror: PhotoSettings.Mirror
    private let lock = Mutex(())
    /// zbar's scanner, or why there is none (libzbar is loaded when the first scanner is made, and
    /// a system without it gets an error from `scan`, not a crash).
    private let scanner: Result<OpaquePointer, CameraError>
    private let onResult: (@Sendable ([Barcode], Frame) -> Void)?
    private let failed = Mutex(ScanFailures())

    /// Frames `analyze(_:)` could not scan, and the last reason.
    public struct ScanFailures: Sendable, Hashable {
        /// How many frames could not be scanned (each was handed to `onResult` with no barcodes).
        public fileprivate(set) var frames = 0
        /// Why the last of them could not be: a pixel format the scanner cannot read, a broken
        /// JPEG payload, or no zbar library.
        public fileprivate(set) var lastError: CameraError?
    }

    /// The frames `analyze(_:)` could not scan so far, and why the last one could not: `onResult`
    /// gets no barcodes for them, the same as for a frame that shows none, so an app that
    /// analyzes through `ImageAnalysis` reads this to tell the two apart (`scan(_:)` throws
    /// instead).
    public var failures: ScanFailures { failed.locked { $0 } }

    /// - Parameters:
    ///   - formats: the symbologies to look for (QR, EAN-13 and Code 128 by default, as in the seeds).
    ///   - mirror: whether view coordinates are mirrored (`.auto`: for front cameras, like their preview).
    ///   - onResult: called with every frame's barcodes (possibly empty) when used as an analyzer.
    public init(formats: Set<BarcodeFormat> = [.qrCode, .ean13, .code128], mirror: PhotoSettings.Mirror = .auto,
                onResult: (@Sendable ([Barcode], Frame) -> Void)? = nil) {
        self.formats = formats
        self.mirror = mirror
        self.onResult = onResult
        if let reason = camhal_zbar_load() {
            scanner = .failure(.unsupported("barcode scanning: \(String(cString: reason))"))
        } else if let scanner = zbar_image_scanner_create() {
            zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
            for f in formats { zbar_image_scanner_set_config(scanner, f.zbar, ZBAR_CFG_ENABLE, 1) }
            zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_POSITION, 1)
            self.scanner = .success(scanner)
        } else {
            scanner = .failure(.unsupported("barcode scanning: zbar could not make a scanner (out of memory)"))
        }
    }

    deinit { if case .success(let scanner) = scanner { zbar_image_scanner_destroy(scanner) } }

    /// Throws why this scanner cannot scan (zbar's library, loaded when the first scanner is made,
    /// is missing), before any frame arrives; `scan` throws the same error, and `analyze` would
    /// hand every frame to `onResult` with no barcodes.
    public func checkAvailability() throws(CameraError) {
        _ = try scanner.get()
    }

    /// Scans `frame` and hands the barcodes (possibly none) to `onResult`; a frame that cannot be
    /// scanned is counted in `failures` and handed over with none.
    public func analyze(_ frame: Frame) {
        let found: [Barcode]
        switch Result(catching: { () throws(CameraError) in try scan(frame) }) {
        case .success(let codes): found = codes
        case .failure(let error):
            failed.locked { $0.frames += 1; $0.lastError = error }
            found = []
        }
        onResult?(found, frame)
    }

    /// The barcodes in the visible rectangle of `frame`. `facing` decides `.auto` mirroring when
    /// the frame does not name its lens.
    public func scan(_ frame: Frame, facing: Facing? = nil) throws(CameraError) -> [Barcode] {
        try checkAvailability()
        let visible = frame.visibleRect
        let gray = try PixelConverter.luma(frame, rect: visible)
        let front = (frame.lens?.facing ?? facing) == .front
        let mirrored = mirror == .on || (mirror == .auto && front)
        return try scanGray(gray, origin: visible, mirrored: mirrored)
    }

    /// Scans an 8-bit gray image that shows `origin` of a frame (pixel coordinates are offset by it).
    func scanGray(_ gray: PackedImage, origin: PixelRect, mirrored: Bool) throws(CameraError) -> [Barcode] {
        let scanner = try scanner.get()
        return lock.locked { _ in scanLocked(scanner, gray, origin: origin, mirrored: mirrored) }
    }

    /// `scanGray` with `lock` held: zbar's scanner keeps state between images.
    private func scanLocked(_ scanner: OpaquePointer, _ gray: PackedImage, origin: PixelRect, mirrored: Bool) -> [Barcode] {
        guard let image = zbar_image_create() else { return [] }
        defer { zbar_image_destroy(image) }
        let y800: UInt = 0x3030_3859  // 'Y','8','0','0'
        zbar_image_set_format(image, y800)
        zbar_image_set_size(image, UInt32(gray.width), UInt32(gray.height))
        zbar_image_set_data(image, gray.storage, UInt(gray.byteCount), nil)
        let n = zbar_scan_image(scanner, image)
        guard n > 0 else { return [] }
        var out: [Barcode] = []
        var symbol = zbar_image_first_symbol(image)
        while let s = symbol {
            defer { symbol = zbar_symbol_next(s) }
            guard let format = BarcodeFormat(zbar: zbar_symbol_get_type(s)), formats.contains(format) else { continue }
            let length = Int(zbar_symbol_get_data_length(s))
            let value: String
            if let data = zbar_symbol_get_data(s) {
                value = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
            } else {
                value = ""
            }
            let count = Int(zbar_symbol_get_loc_size(s))
            var xs: [Int] = [], ys: [Int] = []
            for i in 0..<count {
                xs.append(Int(zbar_symbol_get_loc_x(s, UInt32(i))))
                ys.append(Int(zbar_symbol_get_loc_y(s, UInt32(i))))
            }
            guard let minX = xs.min(), let maxX = xs.max(), let minY = ys.min(), let maxY = ys.max() else { continue }
            let bounds = PixelRect(x: origin.x + minX, y: origin.y + minY, width: maxX - minX + 1, height: maxY - minY + 1)
            let w = Double(gray.width), h = Double(gray.height)
            var nx = Double(minX) / w
            let nw = Double(maxX - minX + 1) / w
            if mirrored { nx = 1 - nx - nw }
            let normalized = NormalizedRect(x: nx, y: Double(minY) / h, width: nw, height: Double(maxY - minY + 1) / h)
            let corners = zip(xs, ys).map { (x, y) -> NormalizedPoint in
                let px = (Double(x) + 0.5) / w
                return NormalizedPoint(x: mirrored ? 1 - px : px, y: (Double(y) + 0.5) / h)
            }
            out.append(Barcode(value: value, format: format, bounds: bounds, normalizedBounds: normalized, corners: corners))
        }
        return out
    }
}
#endif
