// camhal_libcamera.h: a small plain-C API over libcamera (C++17), for CamHAL's Swift backend.
//
// Keeps every C++ type inside the shim so Swift needs no C++ interoperability mode. One process-wide
// CameraManager (a second one aborts the process), started lazily and thread-safely.
//
// libcamera is not linked into the binary: the shim dlopen()s it (the version it was compiled
// against) at the first call that needs it. When that fails, camhal_lc_manager_start and every call
// that starts the manager return -ENOENT with the library or symbol and dlerror() in `err`.
//
// Strings passed to callbacks are valid only during the call. Functions returning int return 0 on
// success and a negative errno on failure, and write a message into `err` (if not NULL).
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// libcamera's version as built against (e.g. "0.0.3") and as running (CameraManager::version();
/// "" when libcamera cannot be loaded).
const char *camhal_lc_build_version(void);
const char *camhal_lc_runtime_version(void);

/// Starts the shared CameraManager if needed. Sets LIBCAMERA_LOG_LEVELS to "*:ERROR" first unless
/// the environment already has it. Returns 0 or a negative errno (then every call fails the same).
int camhal_lc_manager_start(char *err, size_t errlen);

/// AfMode values (same numbers as libcamera's controls::AfModeEnum).
enum { CAMHAL_LC_AF_MANUAL = 0, CAMHAL_LC_AF_AUTO = 1, CAMHAL_LC_AF_CONTINUOUS = 2 };

/// What a camera says about itself without streaming.
typedef struct camhal_lc_camera_info {
    const char *id;
    /// properties::Model, or NULL.
    const char *model;
    /// properties::Location: 0 front, 1 back, 2 external, -1 absent.
    int32_t location;
    /// properties::Rotation in degrees, -1 absent.
    int32_t rotation;
    uint32_t pixel_array_width, pixel_array_height;
    /// Whether controls::ScalerCrop is in camera->controls(), and properties::ScalerCropMaximum.
    int32_t has_scaler_crop;
    int32_t crop_max_x, crop_max_y;
    uint32_t crop_max_width, crop_max_height;
    /// The smallest crop the ScalerCrop ControlInfo allows (0x0 when it does not say).
    uint32_t crop_min_width, crop_min_height;
    /// Bit (1 << CAMHAL_LC_AF_*) for every AfMode value the camera accepts; 0 without AfMode.
    uint32_t af_modes;
    int32_t has_af_trigger, has_af_windows, has_af_metering, has_lens_position;
    /// Fastest frame rate from FrameDurationLimits (0 when absent).
    double max_frame_rate;
} camhal_lc_camera_info;

typedef void (*camhal_lc_camera_fn)(void *ctx, const camhal_lc_camera_info *info);
/// Calls `fn` for every camera the manager knows. Returns the number of cameras or a negative errno.
int camhal_lc_enumerate(camhal_lc_camera_fn fn, void *ctx, char *err, size_t errlen);

typedef void (*camhal_lc_format_fn)(void *ctx, uint32_t fourcc, uint32_t width, uint32_t height);
/// Calls `fn` for every (pixel format, size) the Viewfinder role offers (StreamFormats sizes()), then
/// once per pixel format with the range's min and max sizes. Does not acquire or stream.
/// `range_fn` may be NULL.
int camhal_lc_formats(const char *camera_id, camhal_lc_format_fn fn, camhal_lc_format_fn range_min_fn,
                      camhal_lc_format_fn range_max_fn, void *ctx, char *err, size_t errlen);

/// What validate() makes of a Viewfinder stream at fourcc/size, without acquiring: writes the
/// adjusted format and size (vimc turns 640x480 into 636x480). Returns 0, 1 when adjusted, or a
/// negative errno when invalid.
int camhal_lc_validate(const char *camera_id, uint32_t fourcc, uint32_t width, uint32_t height,
                       uint32_t *out_fourcc, uint32_t *out_width, uint32_t *out_height, char *err, size_t errlen);

/// Hot-plug: cameraAdded (added=1) / cameraRemoved (added=0). Returns a token for unwatch, or 0.
typedef void (*camhal_lc_hotplug_fn)(void *ctx, const char *camera_id, int added);
uint64_t camhal_lc_watch(camhal_lc_hotplug_fn fn, void *ctx);
void camhal_lc_unwatch(uint64_t token);

// MARK: Controls (ControlInfoMap, per-frame metadata)

/// libcamera's ControlType numbers (0.0.3: None, Bool, Byte, Integer32, Integer64, Float, String,
/// Rectangle, Size).
enum {
    CAMHAL_LC_TYPE_NONE = 0, CAMHAL_LC_TYPE_BOOL = 1, CAMHAL_LC_TYPE_BYTE = 2, CAMHAL_LC_TYPE_INT32 = 3,
    CAMHAL_LC_TYPE_INT64 = 4, CAMHAL_LC_TYPE_FLOAT = 5, CAMHAL_LC_TYPE_STRING = 6, CAMHAL_LC_TYPE_RECTANGLE = 7,
    CAMHAL_LC_TYPE_SIZE = 8
};

/// One entry of a camera's ControlInfoMap (camera->controls()), numbers as doubles.
typedef struct camhal_lc_control_info {
    uint32_t id;
    /// ControlId::name() ("Brightness", "ExposureTime").
    const char *name;
    /// CAMHAL_LC_TYPE_*.
    int32_t type;
    /// Elements of an array control (ColourGains 2, FrameDurationLimits 2, AfWindows 0 = any
    /// number); 1 for a single value. libcamera 0.0.3 does not say: the shim knows the standard ones.
    uint32_t elements;
    /// Whether minimum, maximum and default_value hold numbers (numeric types only).
    int32_t numeric;
    double minimum, maximum, default_value;
    /// The accepted values of an enumerated control (ControlInfo::values()), else count 0.
    uint32_t value_count;
    const double *values;
} camhal_lc_control_info;

typedef void (*camhal_lc_control_fn)(void *ctx, const camhal_lc_control_info *info);
/// Calls `fn` for every control of camera->controls(), in ID order. Does not acquire or stream.
/// Returns the number of controls or a negative errno.
int camhal_lc_controls(const char *camera_id, camhal_lc_control_fn fn, void *ctx, char *err, size_t errlen);

/// Stores a raw control value for camera `camera_id`, process-wide: every request of every later
/// session of that camera in this process carries it (libcamera keeps no control state outside
/// requests). `count` numbers (1 for a single value); count 0 forgets the value. Returns 0, or
/// -EINVAL for an unknown control or a type that cannot be written from numbers.
int camhal_lc_store_control(const char *camera_id, uint32_t id, const double *values, uint32_t count);

/// The current value of control `id` of `camera_id`: from the metadata of the newest request a
/// session completed (returns 2), else the stored value (returns 1), else 0 (nothing known).
/// Writes up to `capacity` numbers and the element count.
int camhal_lc_control_value(const char *camera_id, uint32_t id, double *values, uint32_t capacity, uint32_t *count);

// MARK: Streaming

typedef struct camhal_lc_session camhal_lc_session;

#define CAMHAL_LC_MAX_PLANES 4

/// One completed request, handed to the frame callback on libcamera's thread.
typedef struct camhal_lc_completion {
    uint32_t buffer_index;
    uint64_t sequence;
    uint64_t timestamp_ns;
    /// FrameMetadata::Status: 0 success, 1 error (the buffer should be requeued, not shown).
    int32_t status;
    uint32_t plane_count;
    const void *plane_data[CAMHAL_LC_MAX_PLANES];
    uint32_t plane_bytesused[CAMHAL_LC_MAX_PLANES];
    /// ScalerCrop from the request's metadata (has_crop 0 when absent).
    int32_t has_crop;
    int32_t crop_x, crop_y;
    uint32_t crop_width, crop_height;
    /// AfState from metadata, -1 when absent.
    int32_t af_state;
    /// What this frame was taken with, from the request's metadata: ExposureTime in
    /// microseconds, AnalogueGain, ColourTemperature in kelvin; each -1 when the pipeline does
    /// not report it.
    int32_t exposure_time_us;
    float analogue_gain;
    int32_t colour_temperature;
} camhal_lc_completion;

typedef void (*camhal_lc_frame_fn)(void *ctx, const camhal_lc_completion *c);
/// Session events: the camera went away while the session was open (Camera::disconnected), or
/// the pipeline refused a request's controls (the request was requeued without them; `detail`
/// names the controls it carried, valid during the call; NULL for a disconnect).
enum { CAMHAL_LC_EVENT_DISCONNECTED = 1, CAMHAL_LC_EVENT_CONTROLS_REFUSED = 2 };
typedef void (*camhal_lc_event_fn)(void *ctx, int event, const char *detail);

/// What the camera really configured (validate() may adjust: 640x480 is 636x480 on vimc).
typedef struct camhal_lc_configured {
    uint32_t fourcc;
    uint32_t width, height, stride, frame_size;
    uint32_t buffer_count;
    /// 1 when validate() adjusted the request.
    int32_t adjusted;
} camhal_lc_configured;

/// Acquires `camera_id`, configures one Viewfinder stream at fourcc/size (0 = keep the default),
/// allocates and maps buffers and creates one request per buffer. camhal_lc_start starts it.
/// Frames go to `frame_fn`, disconnects to `event_fn`, both with `ctx`, on libcamera's thread.
/// Returns NULL on failure with *errno_out set (-EBUSY when another process or session holds
/// the camera, -ENODEV when it is gone) and a message in `err`.
camhal_lc_session *camhal_lc_open(const char *camera_id, uint32_t fourcc, uint32_t width, uint32_t height,
                                  uint32_t buffer_count, camhal_lc_frame_fn frame_fn, camhal_lc_event_fn event_fn,
                                  void *ctx, camhal_lc_configured *out, int *errno_out, char *err, size_t errlen);

/// Starts the camera and queues every request. Returns 0 or a negative errno (message in `err`).
int camhal_lc_start(camhal_lc_session *s, char *err, size_t errlen);

/// The mapped address and length of one plane of one buffer (valid until camhal_lc_destroy).
int camhal_lc_plane(camhal_lc_session *s, uint32_t buffer_index, uint32_t plane, const void **data,
                    size_t *length);

/// Requeues the request of `buffer_index` with the current controls, if the session still
/// runs; otherwise does nothing. Safe from any thread, also after camhal_lc_close.
void camhal_lc_requeue(camhal_lc_session *s, uint32_t buffer_index);

/// Sets the ScalerCrop carried by every later request (width 0 = no ScalerCrop).
void camhal_lc_set_crop(camhal_lc_session *s, int32_t x, int32_t y, uint32_t width, uint32_t height);

/// Sets autofocus controls carried by later requests. mode < 0 leaves AfMode unchanged;
/// trigger_start sends AfTrigger=Start once; window width 0 leaves AfWindows unchanged;
/// lens_position < 0 leaves LensPosition unchanged.
void camhal_lc_set_focus(camhal_lc_session *s, int32_t mode, int32_t trigger_start, int32_t wx, int32_t wy,
                         uint32_t ww, uint32_t wh, float lens_position);

/// Sets a control that later requests of this session carry (the mapped exposure, white-balance
/// and frame-duration controls), `count` numbers; count 0 stops sending it. Unknown controls
/// and controls the camera lacks are ignored.
void camhal_lc_set_control(camhal_lc_session *s, uint32_t id, const double *values, uint32_t count);

/// Sets `n` controls at once, as camhal_lc_set_control each, so that one request carries them
/// all (AeEnable off with ExposureTime: uvcvideo refuses an exposure time while auto exposure
/// is on). Control i has ids[i] and counts[i] numbers, taken in order from `values`.
void camhal_lc_set_controls(camhal_lc_session *s, uint32_t n, const uint32_t *ids, const uint32_t *counts,
                            const double *values);

/// Whether the camera went away: Camera::disconnected fired (udev systems), a video node of the
/// camera answers VIDIOC_QUERYCAP with ENODEV, or a node it holds now reads "(deleted)" in
/// /proc/self/fd (systems without udevd, where libcamera 0.0.3 never notices and would abort in
/// stop()). Never blocks. Once true, the session delivers no more frames and the camera's dead
/// device descriptors are replaced by an inert one (libcamera 0.0.3 would otherwise spin a core
/// polling them and keep the device held).
int camhal_lc_device_lost(camhal_lc_session *s);

/// Stops the camera (blocks until every queued request completed or was cancelled; no frame
/// callback runs after it returns), frees the allocator, releases the camera and drops it.
/// The mapped planes stay valid until camhal_lc_destroy. Idempotent. When the device is lost
/// (camhal_lc_device_lost) the camera is abandoned instead of stopped (libcamera 0.0.3 asserts in
/// PipelineHandler::stop when the driver vanished): its objects are leaked and the ID is
/// refused with -ENODEV from then on.
void camhal_lc_close(camhal_lc_session *s);

/// Unmaps the planes and frees the session (closing it first if needed).
void camhal_lc_destroy(camhal_lc_session *s);

#ifdef __cplusplus
}
#endif
