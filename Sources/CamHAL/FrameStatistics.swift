extension Camera {
    /// What a session delivered and lost since its last `stop()` (R5): every counter only grows
    /// while the session lives, whatever rebinds and interruptions happen.
    public struct FrameStatistics: Sendable, Hashable {
        /// Frames handed to the app (the frame handler and the frame streams).
        public var framesDelivered: Int
        /// Frames the driver dropped: gaps in its sequence numbers.
        public var droppedByDriver: Int
        /// Buffers the driver handed back marked erroneous (V4L2_BUF_FLAG_ERROR): never delivered.
        public var droppedAsErrored: Int
        /// Frames whose payload failed CamHAL's check (an MJPEG frame without its start, frame
        /// header or end): never delivered.
        public var droppedAsBroken: Int
        /// Frames dropped by the streams' back-pressure policies (a keepOnlyLatest stream
        /// replacing an unread frame, a blocking stream giving up on a stopping session).
        public var droppedByBackpressure: Int
        /// The times frames stopped (S8), oldest first; the last one may still be going on.
        public var interruptions: [Interruption]

        /// Every frame lost, whatever the cause.
        public var dropped: Int { droppedByDriver + droppedAsErrored + droppedAsBroken + droppedByBackpressure }
    }

    /// A time frames stopped coming (a stall the watchdog noticed, a source that paused, a
    /// stream the driver failed and CamHAL restarted), on CLOCK_MONOTONIC.
    public struct Interruption: Sendable, Hashable {
        /// When the last frame before the silence arrived: the start of the hole, in seconds on
        /// CLOCK_MONOTONIC (the clock V4L2 and PipeWire stamp frames with).
        public var start: Double
        /// From `start` to the first frame after the silence; nil while frames have not resumed.
        public var length: Duration?
    }
}
