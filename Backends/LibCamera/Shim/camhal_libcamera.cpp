#ifdef CAMHAL_LIBCAMERA
// camhal_libcamera.cpp: the C++ side of CamHAL's libcamera backend. Written against libcamera
// 0.0.3 (Debian 12) using only API still present in 0.1-0.5 (no CameraManager::get(dev_t), no
// Request::Private), so it should build against newer releases too.

#include "camhal_libcamera.h"

#include <libcamera/camera.h>
#include <libcamera/camera_manager.h>
#include <libcamera/control_ids.h>
#include <libcamera/controls.h>
#include <libcamera/formats.h>
#include <libcamera/framebuffer.h>
#include <libcamera/framebuffer_allocator.h>
#include <libcamera/property_ids.h>
#include <libcamera/request.h>
#include <libcamera/stream.h>
#include <libcamera/version.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <climits>
#include <cmath>
#include <cstdint>

#include <dirent.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

using namespace libcamera;

namespace {

void put(char *err, size_t errlen, const std::string &msg) {
    if (err && errlen > 0) snprintf(err, errlen, "%s", msg.c_str());
}

#define CAMHAL_STR2(x) #x
#define CAMHAL_STR(x) CAMHAL_STR2(x)

// MARK: The process-wide CameraManager

struct Watcher {
    camhal_lc_hotplug_fn fn;
    void *ctx;
};

std::mutex g_mutex;               // guards g_manager start, g_acquired
CameraManager *g_manager = nullptr;  // never deleted: a second CameraManager aborts the process
bool g_start_attempted = false;
int g_start_error = 0;
std::string g_start_message;
std::map<uint64_t, Watcher> g_watchers;
uint64_t g_next_token = 1;
std::set<std::string> g_acquired;  // cameras held by a session of this process
std::set<std::string> g_lost;      // cameras whose device vanished while a session held them

/// Open descriptors of this process that point at device nodes, with their link targets.
std::map<int, std::string> deviceFDs() {
    std::map<int, std::string> result;
    DIR *dir = opendir("/proc/self/fd");
    if (!dir) return result;
    while (struct dirent *e = readdir(dir)) {
        if (e->d_name[0] == '.') continue;
        int fd = atoi(e->d_name);
        char target[512];
        std::string link = std::string("/proc/self/fd/") + e->d_name;
        ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = 0;
        if (strncmp(target, "/dev/", 5) == 0) result[fd] = target;
    }
    closedir(dir);
    return result;
}

/// The sysfs device directory of a character device node held open as `fd` (realpath of
/// /sys/dev/char/<major>:<minor>), or "" when it is not one or is already gone.
std::string sysfsPath(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode)) return {};
    std::string link = "/sys/dev/char/" + std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev));
    char buf[PATH_MAX];
    if (!realpath(link.c_str(), buf)) return {};
    return buf;
}

/// A descriptor that never polls ready: the read end of a pipe whose write end stays open.
/// dup2()ed over the dead device descriptors of a vanished camera (see neutralise()).
int inertFD() {
    static int fd = [] {
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0) return -1;
        return p[0];  // p[1] is deliberately kept open for the life of the process
    }();
    return fd;
}

/// Objects of cameras abandoned after their device vanished: never freed (libcamera may still
/// hold pointers to them).
struct Abandoned {
    std::shared_ptr<Camera> camera;
    std::unique_ptr<CameraConfiguration> config;
    std::unique_ptr<FrameBufferAllocator> allocator;
    std::vector<std::unique_ptr<Request>> requests;
};
std::vector<Abandoned *> g_abandoned;

// Held while watchers run, so that after camhal_lc_unwatch returns no callback is in flight.
std::mutex g_watch_mutex;

void notifyWatchers(const std::string &id, int added) {
    std::lock_guard<std::mutex> lock(g_watch_mutex);
    for (auto &w : g_watchers) w.second.fn(w.second.ctx, id.c_str(), added);
}

void onCameraAdded(std::shared_ptr<Camera> cam) { notifyWatchers(cam->id(), 1); }
void onCameraRemoved(std::shared_ptr<Camera> cam) { notifyWatchers(cam->id(), 0); }

/// The started manager, or nullptr with the start error in `err`.
CameraManager *manager(int *rc, char *err, size_t errlen) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_start_attempted) {
        g_start_attempted = true;
        setenv("LIBCAMERA_LOG_LEVELS", "*:ERROR", 0);  // keep the user's setting if present
        auto *m = new CameraManager();
        int r = m->start();
        if (r < 0) {
            g_start_error = r;
            g_start_message = std::string("libcamera CameraManager::start() failed: ") + strerror(-r);
            // Deliberately leaked: destroying and re-creating a manager is not allowed.
        } else {
            m->cameraAdded.connect(&onCameraAdded);
            m->cameraRemoved.connect(&onCameraRemoved);
            g_manager = m;
        }
    }
    if (!g_manager) {
        if (rc) *rc = g_start_error ? g_start_error : -ENODEV;
        put(err, errlen, g_start_message);
        return nullptr;
    }
    if (rc) *rc = 0;
    return g_manager;
}

/// The camera called `camera_id`, or nullptr with *rc a negative errno (the manager's start
/// error, or -ENODEV) and the message in `err`.
std::shared_ptr<Camera> findCamera(const char *camera_id, int *rc, char *err, size_t errlen) {
    CameraManager *m = manager(rc, err, errlen);
    if (!m) return nullptr;
    std::shared_ptr<Camera> cam = m->get(camera_id ? camera_id : "");
    if (!cam) {
        put(err, errlen, std::string("no libcamera camera '") + (camera_id ? camera_id : "") + "'");
        *rc = -ENODEV;
    }
    return cam;
}

// MARK: Control values as numbers

using Numbers = std::vector<double>;

// Guards g_stored and g_meta (taken per request and per completion: never held while calling out).
std::mutex g_ctrl_mutex;
// A raw control value set through camhal_lc_store_control, and when (so each session sends
// every value once, and a changed one again: pipeline handlers hold a value until a request
// changes it, and a UVC control write per frame would cost a USB transfer each).
struct Stored {
    Numbers values;
    uint64_t generation;
};
uint64_t g_generation = 0;
// Raw control values, per camera ID, by control ID.
std::map<std::string, std::map<unsigned int, Stored>> g_stored;
// The numeric entries of the newest completed request's metadata, per camera ID.
std::map<std::string, std::map<unsigned int, Numbers>> g_meta;

const ControlId *controlId(unsigned int id) {
    auto it = controls::controls.find(id);
    return it == controls::controls.end() ? nullptr : it->second;
}

/// Elements of the standard array controls (libcamera 0.0.3's ControlId has no size; the
/// control_ids.yaml `size:` entries): 0 means any number.
uint32_t knownElements(unsigned int id) {
    if (id == controls::ColourGains.id() || id == controls::FrameDurationLimits.id()) return 2;
    if (id == controls::SensorBlackLevels.id()) return 4;
    if (id == controls::ColourCorrectionMatrix.id()) return 9;
    if (id == controls::AfWindows.id()) return 0;
    return 1;
}

template <typename T>
void appendAll(const ControlValue &v, Numbers &out) {
    if (v.isArray()) {
        for (const T &x : v.get<Span<const T>>()) out.push_back(static_cast<double>(x));
    } else {
        out.push_back(static_cast<double>(v.get<T>()));
    }
}

/// A numeric ControlValue (bool, byte, int32, int64, float; single or array) as numbers; empty
/// for other types.
Numbers numbers(const ControlValue &v) {
    Numbers out;
    switch (v.type()) {
    case ControlTypeBool: appendAll<bool>(v, out); break;
    case ControlTypeByte: appendAll<uint8_t>(v, out); break;
    case ControlTypeInteger32: appendAll<int32_t>(v, out); break;
    case ControlTypeInteger64: appendAll<int64_t>(v, out); break;
    case ControlTypeFloat: appendAll<float>(v, out); break;
    default: break;
    }
    return out;
}

template <typename T>
ControlValue valueOf(const Numbers &n, bool array) {
    if (!array) return ControlValue(static_cast<T>(n[0]));
    std::vector<T> items;
    for (double x : n) items.push_back(static_cast<T>(x));
    return ControlValue(Span<const T>(items.data(), items.size()));
}

/// Numbers as a value of control `id`'s type (an array when the control is one or several
/// numbers are given); false for non-numeric types.
bool controlValue(const ControlId *id, const Numbers &n, ControlValue *out) {
    if (!id || n.empty()) return false;
    bool array = n.size() > 1 || knownElements(id->id()) != 1;
    switch (id->type()) {
    case ControlTypeBool:
        if (array) return false;
        *out = ControlValue(n[0] != 0);
        return true;
    case ControlTypeByte: *out = valueOf<uint8_t>(n, array); return true;
    case ControlTypeInteger32: *out = valueOf<int32_t>(n, array); return true;
    case ControlTypeInteger64: *out = valueOf<int64_t>(n, array); return true;
    case ControlTypeFloat: *out = valueOf<float>(n, array); return true;
    default: return false;
    }
}

/// The first number of a numeric ControlInfo bound, or NaN.
double firstNumber(const ControlValue &v) {
    Numbers n = numbers(v);
    return n.empty() ? NAN : n[0];
}

template <typename T>
bool listHas(const ControlInfoMap &map, const Control<T> &ctrl) {
    return map.find(&ctrl) != map.end();
}

}  // namespace

// MARK: Session

struct camhal_lc_session {
    std::shared_ptr<Camera> camera;
    std::string id;
    std::unique_ptr<CameraConfiguration> config;
    Stream *stream = nullptr;
    std::unique_ptr<FrameBufferAllocator> allocator;
    std::vector<std::unique_ptr<Request>> requests;

    struct Mapping {
        void *addr;
        size_t length;
    };
    std::vector<Mapping> mappings;
    struct PlaneView {
        const uint8_t *data;
        size_t length;
    };
    std::vector<std::vector<PlaneView>> planes;  // [buffer][plane]

    camhal_lc_frame_fn frameFn = nullptr;
    camhal_lc_event_fn eventFn = nullptr;
    void *ctx = nullptr;

    std::mutex mutex;  // guards running vs queueRequest, the control state, closed
    std::atomic<bool> running{false};
    std::atomic<bool> disconnectedSignal{false};
    std::map<int, std::string> nodes;  // device nodes opened by acquire(): fd -> path
    /// Every device node of this camera the process held at open (libcamera opens the video
    /// nodes when it matches the pipeline, before acquire): fd -> path. Video nodes are probed
    /// with VIDIOC_QUERYCAP (ENODEV as soon as the driver unregisters them).
    std::map<int, std::string> cameraNodes;
    std::map<int, dev_t> cameraRdev;  // fd -> the device number it was opened on
    std::atomic<bool> neutralised{false};
    bool acquired = false;
    bool closed = false;
    bool started = false;

    // Supported controls (from camera->controls()).
    bool canCrop = false, canAfMode = false, canAfTrigger = false, canAfWindows = false, canAfMetering = false,
         canLensPosition = false;
    // Desired controls, carried by every request (the trigger only once).
    bool hasCrop = false;
    Rectangle crop;
    int32_t afMode = -1;
    bool triggerPending = false;
    bool hasWindow = false;
    Rectangle window;
    float lensPosition = -1;
    // Mapped controls (exposure, white balance, frame durations) set by camhal_lc_set_control,
    // and those not yet carried by a request.
    std::map<unsigned int, ControlValue> mapped;
    std::set<unsigned int> mappedPending;
    // The generation of each stored raw value this session has sent.
    std::map<unsigned int, uint64_t> sentGeneration;
    // The camera's controls, to keep unknown IDs out of requests (libcamera rejects them).
    const ControlInfoMap *infoMap = nullptr;

    /// camhal_lc_set_control's work; the caller holds `mutex`.
    void setMapped(uint32_t id, const double *values, uint32_t count);

    void fillControls(Request *req) {
        ControlList &c = req->controls();
        {
            // The raw values stored for this camera, then the session's mapped ones.
            std::lock_guard<std::mutex> lock(g_ctrl_mutex);
            auto it = g_stored.find(id);
            if (it != g_stored.end())
                for (auto &e : it->second) {
                    auto sent = sentGeneration.find(e.first);
                    if (sent != sentGeneration.end() && sent->second == e.second.generation) continue;
                    sentGeneration[e.first] = e.second.generation;
                    ControlValue v;
                    if (infoMap && infoMap->find(e.first) != infoMap->end() && controlValue(controlId(e.first), e.second.values, &v))
                        c.set(e.first, v);
                }
        }
        for (unsigned int id : mappedPending) {
            auto m = mapped.find(id);
            if (m != mapped.end()) c.set(id, m->second);
        }
        mappedPending.clear();
        if (canCrop && hasCrop) c.set(controls::ScalerCrop, crop);
        if (canAfMode && afMode >= 0) c.set(controls::AfMode, afMode);
        if (canAfWindows && hasWindow) {
            if (canAfMetering) c.set(controls::AfMetering, static_cast<int32_t>(controls::AfMeteringWindows));
            c.set(controls::AfWindows, Span<const Rectangle>(&window, 1));
        }
        if (canLensPosition && lensPosition >= 0 && afMode == controls::AfModeManual)
            c.set(controls::LensPosition, lensPosition);
        if (canAfTrigger && triggerPending) {
            c.set(controls::AfTrigger, static_cast<int32_t>(controls::AfTriggerStart));
            triggerPending = false;
        }
    }

    void requestComplete(Request *req) {
        if (!running.load()) return;
        if (req->status() == Request::RequestCancelled) {
            // Cancelled while running: the pipeline refused the request's controls (uvcvideo
            // cancels a request whose S_EXT_CTRLS fails, e.g. AeEnable on a webcam whose
            // auto_exposure menu lacks Aperture Priority). Queue it again (a refused value is
            // carried once, so the retry carries none of it) rather than lose the buffer, and
            // say which controls it carried.
            std::string names;
            for (const auto &e : req->controls()) {
                const ControlId *cid = controlId(e.first);
                names += (names.empty() ? "" : ", ") + (cid ? cid->name() : std::to_string(e.first));
            }
            requeue(static_cast<uint32_t>(req->cookie()));
            if (!names.empty() && eventFn) eventFn(ctx, CAMHAL_LC_EVENT_CONTROLS_REFUSED, names.c_str());
            return;
        }
        const auto &bufs = req->buffers();
        if (bufs.empty()) return;
        FrameBuffer *fb = bufs.begin()->second;
        const FrameMetadata &md = fb->metadata();
        camhal_lc_completion c;
        memset(&c, 0, sizeof c);
        c.buffer_index = static_cast<uint32_t>(req->cookie());
        c.sequence = md.sequence;
        c.timestamp_ns = md.timestamp;
        c.status = md.status == FrameMetadata::FrameSuccess ? 0 : 1;
        c.af_state = -1;
        if (c.buffer_index >= planes.size()) return;
        const auto &pv = planes[c.buffer_index];
        auto mdPlanes = md.planes();
        c.plane_count = static_cast<uint32_t>(std::min<size_t>(pv.size(), CAMHAL_LC_MAX_PLANES));
        for (uint32_t i = 0; i < c.plane_count; i++) {
            c.plane_data[i] = pv[i].data;
            size_t used = i < mdPlanes.size() ? mdPlanes[i].bytesused : pv[i].length;
            c.plane_bytesused[i] = static_cast<uint32_t>(std::min(used, pv[i].length));
        }
        const ControlList &meta = req->metadata();
        if (auto r = meta.get(controls::ScalerCrop)) {
            c.has_crop = 1;
            c.crop_x = r->x;
            c.crop_y = r->y;
            c.crop_width = r->width;
            c.crop_height = r->height;
        }
        if (auto s = meta.get(controls::AfState)) c.af_state = *s;
        c.exposure_time_us = -1;
        c.analogue_gain = -1;
        c.colour_temperature = -1;
        if (auto e = meta.get(controls::ExposureTime)) c.exposure_time_us = *e;
        if (auto g = meta.get(controls::AnalogueGain)) c.analogue_gain = *g;
        if (auto t = meta.get(controls::ColourTemperature)) c.colour_temperature = *t;
        {
            std::map<unsigned int, Numbers> values;
            for (const auto &e : meta) {
                Numbers n = numbers(e.second);
                if (!n.empty()) values[e.first] = std::move(n);
            }
            std::lock_guard<std::mutex> lock(g_ctrl_mutex);
            g_meta[id] = std::move(values);
        }
        frameFn(ctx, &c);
    }

    void onDisconnected() {
        disconnectedSignal.store(true);
        if (eventFn) eventFn(ctx, CAMHAL_LC_EVENT_DISCONNECTED, nullptr);
    }

    /// Whether descriptor `fd` still refers to `path`'s node and that node was deleted.
    static bool deletedNode(int fd, const std::string &path) {
        char target[512];
        std::string link = "/proc/self/fd/" + std::to_string(fd);
        ssize_t len = readlink(link.c_str(), target, sizeof target - 1);
        if (len <= 0) return false;
        target[len] = 0;
        return std::string(target) == path + " (deleted)";
    }

    /// The camera went away: Camera::disconnected fired, a video node of it answers ENODEV
    /// (uvcvideo/vimc unregistered it), or a node it opened was deleted from /dev. Non-blocking
    /// (a few readlink/ioctl calls); polled by the Swift side every 100 ms.
    bool lost() {
        if (disconnectedSignal.load() || neutralised.load()) return true;
        bool gone = false;
        for (auto &n : nodes)
            if (deletedNode(n.first, n.second)) gone = true;
        for (auto &n : cameraNodes) {
            if (gone) break;
            if (deletedNode(n.first, n.second)) gone = true;
            else if (n.second.rfind("/dev/video", 0) == 0) {
                struct v4l2_capability cap;
                if (ioctl(n.first, VIDIOC_QUERYCAP, &cap) < 0 && errno == ENODEV) gone = true;
            }
        }
        if (gone) neutralise();
        return gone;
    }

    /// Once the camera is gone: stop handing out frames, and replace the camera's dead device
    /// descriptors with an inert one. libcamera 0.0.3 keeps polling a dead V4L2 node, which
    /// answers POLLERR at once forever, so its CameraManager thread would spin a core and
    /// keep the device (and the media node's lock) held; the inert descriptor never polls
    /// ready. The descriptor numbers stay libcamera's (it closes them when it frees the camera).
    void neutralise() {
        if (neutralised.exchange(true)) return;
        running.store(false);
        int inert = inertFD();
        if (inert < 0) return;
        for (auto &n : cameraNodes) {
            // Only descriptors still on the device they were opened on (never one reused since;
            // libcamera does not close them while the session holds the camera).
            struct stat st;
            if (fstat(n.first, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == cameraRdev[n.first])
                dup2(inert, n.first);
        }
    }

    void requeue(uint32_t index) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!running.load() || neutralised.load() || index >= requests.size()) return;
        Request *req = requests[index].get();
        req->reuse(Request::ReuseBuffers);
        fillControls(req);
        camera->queueRequest(req);
    }

    /// Everything close() does; safe to call twice.
    void close() {
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (closed) return;
            closed = true;
            running.store(false);
        }
        {
            // After the session, reads fall back to the stored values.
            std::lock_guard<std::mutex> lock(g_ctrl_mutex);
            g_meta.erase(id);
        }
        if (camera && started && lost()) {
            // The driver vanished. stop() would assert (libcamera 0.0.3: STREAMOFF fails, the
            // queued requests never come back) or, after Camera::disconnected, return -ENODEV
            // with the requests still queued: never wait for them, abandon the camera instead.
            camera->requestCompleted.disconnect(this);
            camera->disconnected.disconnect(this);
            auto *a = new Abandoned{ camera, std::move(config), std::move(allocator), std::move(requests) };
            std::lock_guard<std::mutex> lock(g_mutex);
            g_abandoned.push_back(a);
            g_acquired.erase(id);
            g_lost.insert(id);
            camera.reset();
            acquired = false;
            return;
        }
        if (camera) {
            if (started) camera->stop();  // blocks until queued requests complete or are cancelled
            camera->requestCompleted.disconnect(this);
            camera->disconnected.disconnect(this);
        }
        requests.clear();
        if (allocator && stream) allocator->free(stream);
        allocator.reset();
        config.reset();
        if (camera && acquired) {
            camera->release();
            std::lock_guard<std::mutex> lock(g_mutex);
            g_acquired.erase(id);
        }
        acquired = false;
        camera.reset();
    }

    ~camhal_lc_session() {
        close();
        for (auto &m : mappings) munmap(m.addr, m.length);
    }
};

// MARK: C API

extern "C" {

const char *camhal_lc_build_version(void) {
    return CAMHAL_STR(LIBCAMERA_VERSION_MAJOR) "." CAMHAL_STR(LIBCAMERA_VERSION_MINOR) "." CAMHAL_STR(
        LIBCAMERA_VERSION_PATCH);
}

const char *camhal_lc_runtime_version(void) {
    static std::string v = CameraManager::version();
    return v.c_str();
}

int camhal_lc_manager_start(char *err, size_t errlen) {
    int rc = 0;
    manager(&rc, err, errlen);
    return rc;
}

int camhal_lc_enumerate(camhal_lc_camera_fn fn, void *ctx, char *err, size_t errlen) {
    int rc = 0;
    CameraManager *m = manager(&rc, err, errlen);
    if (!m) return rc;
    auto cams = m->cameras();
    for (auto &cam : cams) {
        camhal_lc_camera_info info;
        memset(&info, 0, sizeof info);
        std::string id = cam->id();
        info.id = id.c_str();
        const ControlList &props = cam->properties();
        std::string model;
        if (auto v = props.get(properties::Model)) {
            model = *v;
            info.model = model.c_str();
        }
        info.location = -1;
        if (auto v = props.get(properties::Location)) info.location = *v;
        info.rotation = -1;
        if (auto v = props.get(properties::Rotation)) info.rotation = *v;
        if (auto v = props.get(properties::PixelArraySize)) {
            info.pixel_array_width = v->width;
            info.pixel_array_height = v->height;
        }
        const ControlInfoMap &ctrls = cam->controls();
        auto cropMax = props.get(properties::ScalerCropMaximum);
        auto cropIt = ctrls.find(&controls::ScalerCrop);
        if (cropIt != ctrls.end() && cropMax && cropMax->width > 0 && cropMax->height > 0) {
            info.has_scaler_crop = 1;
            info.crop_max_x = cropMax->x;
            info.crop_max_y = cropMax->y;
            info.crop_max_width = cropMax->width;
            info.crop_max_height = cropMax->height;
            const ControlValue &mn = cropIt->second.min();
            if (mn.type() == ControlTypeRectangle && !mn.isArray()) {
                Rectangle r = mn.get<Rectangle>();
                info.crop_min_width = r.width;
                info.crop_min_height = r.height;
            }
        }
        auto afIt = ctrls.find(&controls::AfMode);
        if (afIt != ctrls.end()) {
            const ControlInfo &ci = afIt->second;
            if (!ci.values().empty()) {
                for (const ControlValue &v : ci.values())
                    if (v.type() == ControlTypeInteger32) info.af_modes |= 1u << (v.get<int32_t>() & 31);
            } else if (ci.min().type() == ControlTypeInteger32) {
                for (int32_t v = ci.min().get<int32_t>(); v <= ci.max().get<int32_t>() && v < 32; v++)
                    info.af_modes |= 1u << v;
            }
        }
        info.has_af_trigger = listHas(ctrls, controls::AfTrigger);
        info.has_af_windows = listHas(ctrls, controls::AfWindows);
        info.has_af_metering = listHas(ctrls, controls::AfMetering);
        info.has_lens_position = listHas(ctrls, controls::LensPosition);
        auto fdIt = ctrls.find(&controls::FrameDurationLimits);
        if (fdIt != ctrls.end() && fdIt->second.min().type() == ControlTypeInteger64 && !fdIt->second.min().isArray()) {
            int64_t us = fdIt->second.min().get<int64_t>();
            if (us > 0) info.max_frame_rate = 1e6 / static_cast<double>(us);
        }
        fn(ctx, &info);
    }
    return static_cast<int>(cams.size());
}

int camhal_lc_formats(const char *camera_id, camhal_lc_format_fn fn, camhal_lc_format_fn range_min_fn,
                      camhal_lc_format_fn range_max_fn, void *ctx, char *err, size_t errlen) {
    int rc = 0;
    std::shared_ptr<Camera> cam = findCamera(camera_id, &rc, err, errlen);
    if (!cam) return rc;
    std::unique_ptr<CameraConfiguration> config = cam->generateConfiguration({ StreamRole::Viewfinder });
    if (!config || config->empty()) {
        put(err, errlen, "generateConfiguration(Viewfinder) gave nothing for '" + cam->id() + "'");
        return -EINVAL;
    }
    const StreamFormats &formats = config->at(0).formats();
    int n = 0;
    for (const PixelFormat &pf : formats.pixelformats()) {
        for (const Size &s : formats.sizes(pf)) {
            fn(ctx, pf.fourcc(), s.width, s.height);
            n++;
        }
        SizeRange r = formats.range(pf);
        if (range_min_fn) range_min_fn(ctx, pf.fourcc(), r.min.width, r.min.height);
        if (range_max_fn) range_max_fn(ctx, pf.fourcc(), r.max.width, r.max.height);
    }
    return n;
}

int camhal_lc_validate(const char *camera_id, uint32_t fourcc, uint32_t width, uint32_t height,
                       uint32_t *out_fourcc, uint32_t *out_width, uint32_t *out_height, char *err, size_t errlen) {
    int rc = 0;
    std::shared_ptr<Camera> cam = findCamera(camera_id, &rc, err, errlen);
    if (!cam) return rc;
    std::unique_ptr<CameraConfiguration> config = cam->generateConfiguration({ StreamRole::Viewfinder });
    if (!config || config->empty()) return -EINVAL;
    StreamConfiguration &sc = config->at(0);
    sc.pixelFormat = PixelFormat(fourcc);
    sc.size = Size(width, height);
    CameraConfiguration::Status st = config->validate();
    if (st == CameraConfiguration::Invalid) {
        put(err, errlen, "configuration " + sc.toString() + " of '" + cam->id() + "' is invalid");
        return -EINVAL;
    }
    *out_fourcc = sc.pixelFormat.fourcc();
    *out_width = sc.size.width;
    *out_height = sc.size.height;
    return st == CameraConfiguration::Adjusted ? 1 : 0;
}

uint64_t camhal_lc_watch(camhal_lc_hotplug_fn fn, void *ctx) {
    if (!manager(nullptr, nullptr, 0)) return 0;
    std::lock_guard<std::mutex> lock(g_watch_mutex);
    uint64_t token = g_next_token++;
    g_watchers[token] = Watcher{ fn, ctx };
    return token;
}

void camhal_lc_unwatch(uint64_t token) {
    std::lock_guard<std::mutex> lock(g_watch_mutex);
    g_watchers.erase(token);
}

camhal_lc_session *camhal_lc_open(const char *camera_id, uint32_t fourcc, uint32_t width, uint32_t height,
                                  uint32_t buffer_count, camhal_lc_frame_fn frame_fn, camhal_lc_event_fn event_fn,
                                  void *ctx, camhal_lc_configured *out, int *errno_out, char *err, size_t errlen) {
    int rc = 0;
    auto fail = [&](int code, const std::string &msg) -> camhal_lc_session * {
        if (errno_out) *errno_out = code;
        put(err, errlen, msg);
        return nullptr;
    };
    CameraManager *m = manager(&rc, err, errlen);
    if (!m) {
        if (errno_out) *errno_out = rc;
        return nullptr;
    }
    std::string id = camera_id ? camera_id : "";
    std::shared_ptr<Camera> cam = m->get(id);
    if (!cam) return fail(-ENODEV, "no libcamera camera '" + id + "' (unplugged?)");

    std::unique_ptr<camhal_lc_session> s(new camhal_lc_session());
    s->camera = cam;
    s->id = id;
    s->frameFn = frame_fn;
    s->eventFn = event_fn;
    s->ctx = ctx;

    {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (g_lost.count(id)) return fail(-ENODEV, "camera '" + id + "' vanished while streaming");
        if (g_acquired.count(id)) return fail(-EBUSY, "another CamHAL session of this process streams '" + id + "'");
    }
    std::map<int, std::string> before = deviceFDs();
    int r = cam->acquire();
    if (r < 0) {
        if (r == -EBUSY)
            return fail(r, "acquire() of '" + id + "' failed: Pipeline handler in use by another process " +
                               "(another camera app, or PipeWire/WirePlumber holding the camera)");
        return fail(r, "acquire() of '" + id + "' failed: " + strerror(-r));
    }
    s->acquired = true;
    {
        // The nodes acquire() opened; if it opened none (the pipeline opened them at match time),
        // every media/video/sub-device node of the process: the check only runs on a stalled stream.
        std::map<int, std::string> after = deviceFDs();
        for (auto &n : after)
            if (!before.count(n.first) || before[n.first] != n.second) s->nodes.insert(n);
        if (s->nodes.empty())
            for (auto &n : after)
                if (n.second.rfind("/dev/media", 0) == 0 || n.second.rfind("/dev/video", 0) == 0 ||
                    n.second.rfind("/dev/v4l-subdev", 0) == 0)
                    s->nodes.insert(n);
        // This camera's device directory in sysfs: the parent of one of the media devices the
        // process holds (libcamera opens them when it matches pipelines, before acquire): the one
        // acquire() opened, the only one, or the one the camera ID names (vimc: ID "platform/
        // vimc.0 Sensor B", directory vimc.0; uvcvideo: ID "<controller>-1:1.0-<vid>:<pid>",
        // directory <bus>-1:1.0, the USB interface). The camera's nodes: every held node below it.
        std::vector<std::string> dirs;
        std::string dir;
        for (auto &n : after) {
            if (n.second.rfind("/dev/media", 0) != 0) continue;
            std::string p = sysfsPath(n.first);
            auto slash = p.rfind('/');
            if (slash == std::string::npos || slash == 0) continue;
            std::string d = p.substr(0, slash);
            if (!before.count(n.first)) dir = d;  // opened by acquire(): certainly this camera's
            dirs.push_back(d);
        }
        if (dir.empty() && dirs.size() == 1) dir = dirs[0];
        for (size_t i = 0; dir.empty() && i < dirs.size(); i++) {
            std::string base = dirs[i].substr(dirs[i].rfind('/') + 1);
            auto dash = base.find('-');
            if (id.find(base) != std::string::npos ||
                (dash != std::string::npos && id.find("-" + base.substr(dash + 1) + "-") != std::string::npos))
                dir = dirs[i];
        }
        if (!dir.empty())
            for (auto &n : after) {
                struct stat st;
                if (sysfsPath(n.first).rfind(dir + "/", 0) == 0 && fstat(n.first, &st) == 0) {
                    s->cameraNodes.insert(n);
                    s->cameraRdev[n.first] = st.st_rdev;
                }
            }
    }
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        g_acquired.insert(id);
    }

    s->config = cam->generateConfiguration({ StreamRole::Viewfinder });
    if (!s->config || s->config->empty()) return fail(-EINVAL, "generateConfiguration(Viewfinder) failed for '" + id + "'");
    StreamConfiguration &sc = s->config->at(0);
    if (fourcc) sc.pixelFormat = PixelFormat(fourcc);
    if (width && height) sc.size = Size(width, height);
    if (buffer_count) sc.bufferCount = buffer_count;
    std::string wanted = sc.toString();
    CameraConfiguration::Status st = s->config->validate();
    if (st == CameraConfiguration::Invalid) return fail(-EINVAL, "configuration " + wanted + " of '" + id + "' is invalid");
    r = cam->configure(s->config.get());
    if (r < 0) return fail(r, "configure(" + sc.toString() + ") of '" + id + "' failed: " + strerror(-r));
    s->stream = sc.stream();
    if (!s->stream) return fail(-EINVAL, "configure of '" + id + "' produced no stream");

    s->allocator.reset(new FrameBufferAllocator(cam));
    r = s->allocator->allocate(s->stream);
    if (r <= 0) return fail(r < 0 ? r : -ENOMEM, "FrameBufferAllocator::allocate for '" + id + "' failed");
    const auto &buffers = s->allocator->buffers(s->stream);

    // Map every buffer once; planes of one buffer usually share a dmabuf fd at offsets.
    for (const auto &fb : buffers) {
        std::map<int, std::pair<uint8_t *, size_t>> byFd;
        for (const FrameBuffer::Plane &p : fb->planes()) {
            int fd = p.fd.get();
            size_t end = static_cast<size_t>(p.offset == FrameBuffer::Plane::kInvalidOffset ? 0 : p.offset) + p.length;
            auto &e = byFd[fd];
            e.second = std::max(e.second, end);
        }
        for (auto &e : byFd) {
            void *addr = mmap(nullptr, e.second.second, PROT_READ, MAP_SHARED, e.first, 0);
            if (addr == MAP_FAILED) return fail(-errno, "mmap of a libcamera buffer failed: " + std::string(strerror(errno)));
            s->mappings.push_back({ addr, e.second.second });
            e.second.first = static_cast<uint8_t *>(addr);
        }
        std::vector<camhal_lc_session::PlaneView> views;
        for (const FrameBuffer::Plane &p : fb->planes()) {
            size_t off = p.offset == FrameBuffer::Plane::kInvalidOffset ? 0 : p.offset;
            views.push_back({ byFd[p.fd.get()].first + off, p.length });
        }
        s->planes.push_back(std::move(views));
    }

    const ControlInfoMap &ctrls = cam->controls();
    s->canCrop = listHas(ctrls, controls::ScalerCrop);
    s->canAfMode = listHas(ctrls, controls::AfMode);
    s->canAfTrigger = listHas(ctrls, controls::AfTrigger);
    s->canAfWindows = listHas(ctrls, controls::AfWindows);
    s->canAfMetering = listHas(ctrls, controls::AfMetering);
    s->canLensPosition = listHas(ctrls, controls::LensPosition);
    s->infoMap = &ctrls;

    for (size_t i = 0; i < buffers.size(); i++) {
        std::unique_ptr<Request> req = cam->createRequest(i);
        if (!req) return fail(-ENOMEM, "createRequest for '" + id + "' failed");
        r = req->addBuffer(s->stream, buffers[i].get());
        if (r < 0) return fail(r, "Request::addBuffer for '" + id + "' failed");
        s->requests.push_back(std::move(req));
    }

    cam->requestCompleted.connect(s.get(), &camhal_lc_session::requestComplete);
    cam->disconnected.connect(s.get(), &camhal_lc_session::onDisconnected);

    if (out) {
        out->fourcc = sc.pixelFormat.fourcc();
        out->width = sc.size.width;
        out->height = sc.size.height;
        out->stride = sc.stride;
        out->frame_size = sc.frameSize;
        out->buffer_count = static_cast<uint32_t>(buffers.size());
        out->adjusted = st == CameraConfiguration::Adjusted;
    }

    if (errno_out) *errno_out = 0;
    return s.release();
}

int camhal_lc_start(camhal_lc_session *s, char *err, size_t errlen) {
    if (!s || !s->camera) return -EINVAL;
    std::lock_guard<std::mutex> lock(s->mutex);
    if (s->closed || s->started) return -EINVAL;
    int r = s->camera->start();
    if (r < 0) {
        put(err, errlen, "start() of '" + s->id + "' failed: " + strerror(-r));
        return r;
    }
    s->started = true;
    s->running.store(true);
    for (auto &req : s->requests) {
        s->fillControls(req.get());
        r = s->camera->queueRequest(req.get());
        if (r < 0) {
            put(err, errlen, "queueRequest on '" + s->id + "' failed: " + strerror(-r));
            return r;
        }
    }
    return 0;
}

int camhal_lc_plane(camhal_lc_session *s, uint32_t buffer_index, uint32_t plane, const void **data, size_t *length) {
    if (!s || buffer_index >= s->planes.size() || plane >= s->planes[buffer_index].size()) return -EINVAL;
    *data = s->planes[buffer_index][plane].data;
    *length = s->planes[buffer_index][plane].length;
    return 0;
}

void camhal_lc_requeue(camhal_lc_session *s, uint32_t buffer_index) {
    if (s) s->requeue(buffer_index);
}

void camhal_lc_set_crop(camhal_lc_session *s, int32_t x, int32_t y, uint32_t width, uint32_t height) {
    if (!s) return;
    std::lock_guard<std::mutex> lock(s->mutex);
    s->hasCrop = width > 0 && height > 0;
    s->crop = Rectangle(x, y, width, height);
}

void camhal_lc_set_focus(camhal_lc_session *s, int32_t mode, int32_t trigger_start, int32_t wx, int32_t wy,
                         uint32_t ww, uint32_t wh, float lens_position) {
    if (!s) return;
    std::lock_guard<std::mutex> lock(s->mutex);
    if (mode >= 0) s->afMode = mode;
    if (trigger_start) s->triggerPending = true;
    if (ww > 0 && wh > 0) {
        s->hasWindow = true;
        s->window = Rectangle(wx, wy, ww, wh);
    }
    if (lens_position >= 0) s->lensPosition = lens_position;
}

int camhal_lc_controls(const char *camera_id, camhal_lc_control_fn fn, void *ctx, char *err, size_t errlen) {
    int rc = 0;
    std::shared_ptr<Camera> cam = findCamera(camera_id, &rc, err, errlen);
    if (!cam) return rc;
    const ControlInfoMap &ctrls = cam->controls();
    std::vector<std::pair<unsigned int, const ControlId *>> ids;
    for (const auto &e : ctrls) ids.push_back({ e.first->id(), e.first });
    std::sort(ids.begin(), ids.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    for (const auto &e : ids) {
        const ControlInfo &ci = ctrls.at(e.second);
        std::string name = e.second->name();
        camhal_lc_control_info info;
        memset(&info, 0, sizeof info);
        info.id = e.first;
        info.name = name.c_str();
        info.type = static_cast<int32_t>(e.second->type());
        info.elements = knownElements(e.first);
        info.minimum = firstNumber(ci.min());
        info.maximum = firstNumber(ci.max());
        info.default_value = firstNumber(ci.def());
        info.numeric = !std::isnan(info.minimum) && !std::isnan(info.maximum);
        if (std::isnan(info.default_value)) info.default_value = info.numeric ? info.minimum : 0;
        Numbers values;
        for (const ControlValue &v : ci.values()) {
            Numbers n = numbers(v);
            if (!n.empty()) values.push_back(n[0]);
        }
        info.value_count = static_cast<uint32_t>(values.size());
        info.values = values.empty() ? nullptr : values.data();
        fn(ctx, &info);
    }
    return static_cast<int>(ids.size());
}

int camhal_lc_store_control(const char *camera_id, uint32_t id, const double *values, uint32_t count) {
    const ControlId *cid = controlId(id);
    if (!camera_id || !cid) return -EINVAL;
    std::lock_guard<std::mutex> lock(g_ctrl_mutex);
    if (count == 0) {
        g_stored[camera_id].erase(id);
        return 0;
    }
    Numbers n(values, values + count);
    ControlValue probe;
    if (!controlValue(cid, n, &probe)) return -EINVAL;
    g_stored[camera_id][id] = Stored{ std::move(n), ++g_generation };
    return 0;
}

int camhal_lc_control_value(const char *camera_id, uint32_t id, double *values, uint32_t capacity, uint32_t *count) {
    if (!camera_id) return 0;
    std::lock_guard<std::mutex> lock(g_ctrl_mutex);
    auto copy = [&](const Numbers &n) {
        uint32_t k = static_cast<uint32_t>(std::min<size_t>(n.size(), capacity));
        for (uint32_t i = 0; i < k; i++) values[i] = n[i];
        if (count) *count = static_cast<uint32_t>(n.size());
    };
    auto meta = g_meta.find(camera_id);
    if (meta != g_meta.end()) {
        auto v = meta->second.find(id);
        if (v != meta->second.end()) {
            copy(v->second);
            return 2;
        }
    }
    auto stored = g_stored.find(camera_id);
    if (stored != g_stored.end()) {
        auto v = stored->second.find(id);
        if (v != stored->second.end()) {
            copy(v->second.values);
            return 1;
        }
    }
    return 0;
}

void camhal_lc_set_controls(camhal_lc_session *s, uint32_t n, const uint32_t *ids, const uint32_t *counts,
                            const double *values) {
    if (!s) return;
    std::lock_guard<std::mutex> lock(s->mutex);
    for (uint32_t i = 0; i < n; i++) {
        s->setMapped(ids[i], values, counts[i]);
        values += counts[i];
    }
}

void camhal_lc_set_control(camhal_lc_session *s, uint32_t id, const double *values, uint32_t count) {
    if (!s) return;
    std::lock_guard<std::mutex> lock(s->mutex);
    s->setMapped(id, values, count);
}

void camhal_lc_session::setMapped(uint32_t id, const double *values, uint32_t count) {
    if (count == 0) {
        mapped.erase(id);
        return;
    }
    if (!infoMap || infoMap->find(id) == infoMap->end()) return;
    ControlValue v;
    if (!controlValue(controlId(id), Numbers(values, values + count), &v)) return;
    auto old = mapped.find(id);
    if (old != mapped.end() && old->second == v) return;  // unchanged: no control write
    mapped[id] = v;
    mappedPending.insert(id);
}

int camhal_lc_device_lost(camhal_lc_session *s) { return s && s->lost() ? 1 : 0; }

void camhal_lc_close(camhal_lc_session *s) {
    if (s) s->close();
}

void camhal_lc_destroy(camhal_lc_session *s) { delete s; }

}  // extern "C"
#endif
