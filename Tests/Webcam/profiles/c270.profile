# Logitech Webcam C270 (046d:0825): the common 720p webcam with 19 YUYV and 19 MJPEG
# frame sizes, fixed focus (no focus, no zoom), and a white_balance_temperature range of
# 0..10000 that is not a plausible Kelvin range.  Format of this file: Tests/Webcam/README.md.
#
# Descriptors (USB IDs, bcdDevice 0.12, UVC 1.00, YUYV then MJPEG, every frame size and
# interval, the camera-terminal bmControls 0x0e = AE mode + AE priority + exposure time
# absolute, the processing-unit bmControls 0x175b = brightness, contrast, saturation,
# sharpness, WB temperature, backlight, gain, power line, WB temperature auto, the
# interrupt status endpoint): a USBView dump of a C270 in Espressif's esp-usb tests:
source https://github.com/espressif/esp-usb/blob/555db55196f4e0428c18f10ace54751b9d6fe80c/host/class/uvc/usb_host_uvc/host_test/main/parsing/descriptors/logitech_c270.hpp
# The same 19+19 sizes and rates are in many published `v4l2-ctl --list-formats-ext`
# outputs of a C270 (YUYV 752x416 from 25 fps, 1280x720 at 7.5/5 fps; MJPEG every size
# 30..5 fps).  Control ranges and defaults (white_balance_temperature 0..10000 step 10
# default 4000, exposure_absolute 1..10000 default 166, auto exposure menu 0..3 offering
# Manual and Aperture Priority, brightness 0..255 default 128, contrast/saturation 0..255
# default 32, gain 0..255 default 128, sharpness 0..255 default 24, backlight 0..1
# default 1, power line default 60 Hz) are from a published `v4l2-ctl --all` of a C270
# ("Card type: UVC Camera (046d:0825)", kernel 4.4, in ROS usb_cam setup notes).
# Deviations: that C270 has no iProduct string (uvcvideo then names it "UVC Camera
# (046d:0825)"); the emulator needs one, so the product here is the name Windows shows
# for it ("C270 HD WEBCAM").  The microphone interfaces and extension units are left out.
name Logitech Webcam C270 (emulated)
vid 0x046d
pid 0x0825
bcd_device 0x0012
manufacturer Logitech
product C270 HD WEBCAM
transfer iso
status_endpoint yes

format yuyv
frame 640x480   30 25 20 15 10 5
frame 160x120   30 25 20 15 10 5
frame 176x144   30 25 20 15 10 5
frame 320x176   30 25 20 15 10 5
frame 320x240   30 25 20 15 10 5
frame 352x288   30 25 20 15 10 5
frame 432x240   30 25 20 15 10 5
frame 544x288   30 25 20 15 10 5
frame 640x360   30 25 20 15 10 5
frame 752x416   25 20 15 10 5
frame 800x448   20 15 10 5
frame 800x600   20 15 10 5
frame 864x480   20 15 10 5
frame 960x544   15 10 5
frame 960x720   10 5
frame 1024x576  10 5
frame 1184x656  10 5
frame 1280x720  7.5 5
frame 1280x960  7.5 5

format mjpeg
frame 640x480   30 25 20 15 10 5
frame 160x120   30 25 20 15 10 5
frame 176x144   30 25 20 15 10 5
frame 320x176   30 25 20 15 10 5
frame 320x240   30 25 20 15 10 5
frame 352x288   30 25 20 15 10 5
frame 432x240   30 25 20 15 10 5
frame 544x288   30 25 20 15 10 5
frame 640x360   30 25 20 15 10 5
frame 752x416   30 25 20 15 10 5
frame 800x448   30 25 20 15 10 5
frame 800x600   30 25 20 15 10 5
frame 864x480   30 25 20 15 10 5
frame 960x544   30 25 20 15 10 5
frame 960x720   30 25 20 15 10 5
frame 1024x576  30 25 20 15 10 5
frame 1184x656  30 25 20 15 10 5
frame 1280x720  30 25 20 15 10 5
frame 1280x960  30 25 20 15 10 5

ctrl ae_mode                 min=0 max=0 res=0x09 def=8
ctrl ae_priority             min=0 max=1 res=1 def=0
ctrl exposure_time_absolute  min=1 max=10000 res=1 def=166
ctrl brightness              min=0 max=255 res=1 def=128
ctrl contrast                min=0 max=255 res=1 def=32
ctrl saturation              min=0 max=255 res=1 def=32
ctrl sharpness               min=0 max=255 res=1 def=24
ctrl white_balance_temperature min=0 max=10000 res=10 def=4000
ctrl white_balance_temperature_auto min=0 max=1 res=1 def=1
ctrl gain                    min=0 max=255 res=1 def=128
ctrl power_line_frequency    min=0 max=2 res=1 def=2
ctrl backlight_compensation  min=0 max=1 res=1 def=1
