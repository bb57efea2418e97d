# Logitech HD Pro Webcam C920 (046d:082d): the 1080p autofocus webcam with digital zoom
# (zoom_absolute 100..500) and pan/tilt absolute (digital, +-10 degrees in arc-seconds).
# Format of this file: Tests/Webcam/README.md.
#
# Controls (ranges, steps, defaults; auto_exposure offering Manual and Aperture Priority
# only, i.e. UVC AE mode mask 0x09) and the card name from a published `v4l2-ctl --all`
# of a C920 under kernel 6.1:
source https://github.com/Digital1O1/HandGestureProject/blob/70cd1984886b7b86fcb09d9ba0487dff673a2376/AdjustCameraSettingTrackbars/notes.md
# That dump covers brightness/contrast/saturation (0..255, default 128), auto exposure,
# exposure 3..2047 (default 250), pan/tilt +-36000 step 3600, focus 0..250 step 5 and
# zoom 100..500.  The processing-unit controls it does not show (white balance
# temperature 2000..6500 default 4000, sharpness 0..255 default 128, gain 0..255
# default 0, backlight 0..1, power line default 60 Hz) are the C920's as commonly
# reported, not checked against a cited dump.
# Frame sizes: a subset of the C920's (it lists 19 YUYV and 17 MJPEG sizes; YUYV above
# 640x480 only at 10/5 fps because of USB 2 bandwidth), kept modest for qemu TCG.
name Logitech HD Pro Webcam C920 (emulated)
vid 0x046d
pid 0x082d
bcd_device 0x0011
manufacturer Logitech
product HD Pro Webcam C920
transfer iso
status_endpoint yes

format yuyv
frame 640x480   30 24 20 15 10 7.5 5
frame 160x90    30 24 20 15 10 7.5 5
frame 320x180   30 24 20 15 10 7.5 5
frame 640x360   30 24 20 15 10 7.5 5
frame 1280x720  10 7.5 5
frame 1920x1080 5

format mjpeg
frame 640x480   30 24 20 15 10 7.5 5
frame 160x90    30 24 20 15 10 7.5 5
frame 320x180   30 24 20 15 10 7.5 5
frame 640x360   30 24 20 15 10 7.5 5
frame 1280x720  30 24 20 15 10 7.5 5
frame 1920x1080 30 24 20 15 10 7.5 5

ctrl ae_mode                 min=0 max=0 res=0x09 def=8
ctrl ae_priority             min=0 max=1 res=1 def=0
ctrl exposure_time_absolute  min=3 max=2047 res=1 def=250
ctrl focus_absolute          min=0 max=250 res=5 def=0
ctrl focus_auto              min=0 max=1 res=1 def=1
ctrl zoom_absolute           min=100 max=500 res=1 def=100
ctrl pan_absolute            min=-36000 max=36000 res=3600 def=0
ctrl tilt_absolute           min=-36000 max=36000 res=3600 def=0
ctrl brightness              min=0 max=255 res=1 def=128
ctrl contrast                min=0 max=255 res=1 def=128
ctrl saturation              min=0 max=255 res=1 def=128
ctrl sharpness               min=0 max=255 res=1 def=128
ctrl white_balance_temperature min=2000 max=6500 res=1 def=4000
ctrl white_balance_temperature_auto min=0 max=1 res=1 def=1
ctrl gain                    min=0 max=255 res=1 def=0
ctrl power_line_frequency    min=0 max=2 res=1 def=2
ctrl backlight_compensation  min=0 max=1 res=1 def=0
