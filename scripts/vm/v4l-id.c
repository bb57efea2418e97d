/*
 * scripts/vm/v4l-id.c: what udev's v4l_id does, for the VM's udev-less /init.
 *
 * Usage: v4l-id /dev/videoN
 * Prints the udev database properties udev would have stored for the node
 * ("E:ID_V4L_VERSION=2", "E:ID_V4L_PRODUCT=<card>",
 * "E:ID_V4L_CAPABILITIES=:capture:..." built from VIDIOC_QUERYCAP's device_caps,
 * as systemd's src/udev/v4l_id/v4l_id.c does) and exits 0; exits 1 (printing
 * nothing) when the node does not answer VIDIOC_QUERYCAP (e.g. sub-devices).
 *
 * scripts/vm-run compiles it statically (the initramfs has no libc) into its
 * cache and appends it to the initramfs; without it /init assumes ":capture:".
 */
#include <fcntl.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(int argc, char **argv) {
    struct v4l2_capability cap;
    unsigned int caps;
    int fd;

    if (argc != 2)
        return 2;
    fd = open(argv[1], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 1;
    memset(&cap, 0, sizeof cap);
    if (ioctl(fd, VIDIOC_QUERYCAP, &cap) < 0) {
        close(fd);
        return 1;
    }
    close(fd);
    caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
    printf("E:ID_V4L_VERSION=2\n");
    printf("E:ID_V4L_PRODUCT=%.*s\n", (int)sizeof cap.card, (const char *)cap.card);
    printf("E:ID_V4L_CAPABILITIES=:");
    if (caps & (V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_VIDEO_CAPTURE_MPLANE))
        printf("capture:");
    if (caps & (V4L2_CAP_VIDEO_OUTPUT | V4L2_CAP_VIDEO_OUTPUT_MPLANE))
        printf("video_output:");
    if (caps & V4L2_CAP_VIDEO_OVERLAY)
        printf("video_overlay:");
    if (caps & V4L2_CAP_AUDIO)
        printf("audio:");
    if (caps & V4L2_CAP_TUNER)
        printf("tuner:");
    if (caps & V4L2_CAP_RADIO)
        printf("radio:");
    if (caps & V4L2_CAP_TOUCH)
        printf("touch:");
    printf("\n");
    return 0;
}
