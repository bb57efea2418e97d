import Synchronization

extension Mutex where Value: ~Copyable {
    /// `withLock`, compiled once for the whole process. Every `Mutex` in CamHAL and its backends
    /// is taken through this, never through `withLock` directly.
    ///
    /// Why: on Linux, `Mutex` caches the calling thread's ID in a thread-local variable that its
    /// inlined lock code declares in a C header as `static inline`, so every object file that
    /// inlines a lock has a cache of its own, and each thread asks the kernel (`gettid`) once per
    /// cache it reaches. Inlined at each site, the V4L2 app's release build held 13 caches, and
    /// opening a webcam made 13 `gettid` calls before its first frame, a fifth of the system
    /// calls that v4l2-ctl makes in all. Kept out of line and unspecialized, the lock code exists
    /// in this one function, so each thread asks once.
    ///
    /// Unspecialized, a call costs a few dozen instructions more than an inlined `withLock` (the
    /// value's layout read from its type's metadata, the body called through a thunk).
    @_semantics("optimize.sil.specialize.generic.never")
    @inline(never)
    package borrowing func locked<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try withLock(body)
    }
}
