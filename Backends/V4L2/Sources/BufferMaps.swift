import Glibc

/// The MMAP buffers of one stream. Unmapped when the last owner (the binding or a frame still
/// held by the app) lets go, so a frame kept after `close()` stays readable and never touches
/// the closed file descriptor.
// @unchecked: mmap'd C buffers, appended before streaming starts and only read after.
final class BufferMaps: @unchecked Sendable {
    struct Buffer { let address: UnsafeMutableRawPointer; let length: Int }
    private(set) var buffers: [Buffer] = []

    func append(_ b: Buffer) { buffers.append(b) }

    deinit {
        for b in buffers { munmap(b.address, b.length) }
    }
}
