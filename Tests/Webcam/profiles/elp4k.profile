# ELP 4K USB camera module (32e4:0317, IMX317-class): an MJPEG-first module whose YUYV
# sizes above 640x480 come at 1..10 fps, with auto exposure offering only Auto and Shutter
# Priority (UVC AE mode mask 0x06: no Manual, no Aperture Priority) and no interrupt
# status endpoint.  Format of this file: Tests/Webcam/README.md.
#
# Formats, every frame size and interval (MJPEG first: 11 sizes 3840x2160..320x240 at
# 30/25/20/15/10/5 fps; YUYV the same 11 sizes, 3840x2160 at 1 fps ... 640x480 at 30..5),
# the USB IDs and the strings (manufacturer "4K USB CAMERA", product and interface
# "HD USB CAMERA", card "HD USB CAMERA: HD USB CAMERA") from a published
# `lsusb` / `v4l2-ctl -D --list-formats-ext` of the ELP 4K camera under kernel 6.1:
source https://github.com/maoxuli/raspi-webrtc/blob/d2f041bf23aee0a912b7848a4e8ccd58ae235c83/camera/usbcam/usbcam-elp-4k.md
# Not from that source: the controls.  The auto-exposure modes (Auto + Shutter Priority,
# default Auto), and the absent status endpoint are the
# behaviour reported for this camera family; the ranges (exposure 1..5000 in 100 us
# default 157, brightness -64..64, contrast 0..95, saturation 0..100, hue -2000..2000,
# gamma 100..300, gain 0..100, white balance 2800..6500) are those these Sonix/Sunplus
# 4K modules commonly list, not checked against a cited dump.
# Product string: the dump's module says "HD USB CAMERA"; this profile uses "ELP 4K USB
# Camera", as ELP-branded modules of the family do.  uvcvideo names the V4L2 card
# "<product>: <interface string>" in 31 bytes, so the card reads "ELP 4K USB Camera: ELP
# 4K USB C" while the USB product string (sysfs, udev ID_MODEL) is whole.
name ELP 4K USB camera (emulated)
vid 0x32e4
pid 0x0317
bcd_device 0x0333
manufacturer 4K USB CAMERA
product ELP 4K USB Camera
transfer iso
status_endpoint no

format mjpeg
frame 3840x2160 30 25 20 15 10 5
frame 1920x1080 30 25 20 15 10 5
frame 2592x1944 30 25 20 15 10 5
frame 2048x1536 30 25 20 15 10 5
frame 1600x1200 30 25 20 15 10 5
frame 1280x960  30 25 20 15 10 5
frame 1280x720  30 25 20 15 10 5
frame 1024x768  30 25 20 15 10 5
frame 800x600   30 25 20 15 10 5
frame 640x480   30 25 20 15 10 5
frame 320x240   30 25 20 15 10 5

format yuyv
frame 3840x2160 1
frame 1920x1080 3
frame 2592x1944 1
frame 2048x1536 3
frame 1600x1200 3
frame 1280x960  5
frame 1280x720  10 5
frame 1024x768  10 5
frame 800x600   20 15 10 5
frame 640x480   30 25 20 15 10 5
frame 320x240   30 25 20 15 10 5

ctrl ae_mode                 min=0 max=0 res=0x06 def=2
ctrl ae_priority             min=0 max=1 res=1 def=0
ctrl exposure_time_absolute  min=1 max=5000 res=1 def=157
ctrl brightness              min=-64 max=64 res=1 def=0
ctrl contrast                min=0 max=95 res=1 def=0
ctrl saturation              min=0 max=100 res=1 def=64
ctrl hue                     min=-2000 max=2000 res=1 def=0
ctrl gamma                   min=100 max=300 res=1 def=100
ctrl gain                    min=0 max=100 res=1 def=0
ctrl sharpness               min=0 max=7 res=1 def=2
ctrl white_balance_temperature min=2800 max=6500 res=1 def=4600
ctrl white_balance_temperature_auto min=0 max=1 res=1 def=1
ctrl power_line_frequency    min=0 max=2 res=1 def=1
ctrl backlight_compensation  min=0 max=160 res=1 def=80
