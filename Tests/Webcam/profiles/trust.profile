# Trust Webcam (Sonix, 0c45:6340): a UVC 1.0 webcam that streams YUYV only (no MJPEG)
# and has no exposure or white-balance controls: its camera terminal offers only
# auto-exposure priority (bmControls 0x04, 0x00, 0x00), its processing unit brightness,
# contrast, hue, saturation, sharpness, gamma, backlight, gain and power line frequency
# (bmControls 0x3f, 0x07).  Format of this file: Tests/Webcam/README.md.
#
# Descriptors (USB IDs, strings "Trust Webcam", bcdUVC 1.00, one YUY2 format with
# 640x480, 352x288, 320x240, 176x144, 1280x1024 and 160x120; 30/25/20/15/10/5 fps
# except 1280x1024 at 5 fps; the control bitmaps; the interrupt status endpoint):
# a USBView dump in Espressif's esp-usb tests:
source https://github.com/espressif/esp-usb/blob/555db55196f4e0428c18f10ace54751b9d6fe80c/host/class/uvc/usb_host_uvc/host_test/main/parsing/descriptors/trust_webcam.hpp
# Not from that source (a descriptor dump has no GET_MIN/MAX/DEF answers): the control
# ranges and defaults, which are typical Sonix values (brightness -64..64, contrast
# 0..64 default 32, hue -40..40, saturation 0..128 default 64, sharpness 0..6, gamma
# 72..500 default 100, gain 0..100, backlight 0..2 default 1, power line 50 Hz).
# Deviations: the extension unit (4 vendor controls), the still-image trigger and the
# audio interfaces are left out.
name Trust Webcam (Sonix, emulated)
vid 0x0c45
pid 0x6340
bcd_device 0x0000
manufacturer Trust Webcam
product Trust Webcam
transfer iso
status_endpoint yes

format yuyv
frame 640x480   30 25 20 15 10 5
frame 352x288   30 25 20 15 10 5
frame 320x240   30 25 20 15 10 5
frame 176x144   30 25 20 15 10 5
frame 1280x1024 5
frame 160x120   30 25 20 15 10 5

ctrl ae_priority             min=0 max=1 res=1 def=0
ctrl brightness              min=-64 max=64 res=1 def=0
ctrl contrast                min=0 max=64 res=1 def=32
ctrl hue                     min=-40 max=40 res=1 def=0
ctrl saturation              min=0 max=128 res=1 def=64
ctrl sharpness               min=0 max=6 res=1 def=3
ctrl gamma                   min=72 max=500 res=1 def=100
ctrl gain                    min=0 max=100 res=1 def=0
ctrl backlight_compensation  min=0 max=2 res=1 def=1
ctrl power_line_frequency    min=0 max=2 res=1 def=1
