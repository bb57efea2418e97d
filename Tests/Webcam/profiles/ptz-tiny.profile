# A pan/tilt/zoom conference-style webcam modelled on the OBSBOT Tiny (a gimbal PTZ
# webcam): pan +-130 degrees and tilt +-90 degrees in arc-seconds, zoom_absolute 0..100
# (its minimum is 0, so the emulator's scene takes 0..max as 1x..2x), no focus control.
# Format of this file: Tests/Webcam/README.md.
#
# Controls from a published `v4l2-ctl --list-ctrls` (the listing with pan
# -468000..468000 step 3600, tilt -324000..324000 step 7200, zoom 0..100, brightness/
# contrast/saturation/hue 0..100 default 50, gain 1..48, sharpness 0..4 default 2,
# backlight 0..18 default 9, exposure 1..2500 default 330, auto_exposure default Auto):
source https://github.com/taxfromdk/obsbot_tiny_reversing/issues/1
# (that issue's `v4l2-ctl -L` of an OBSBOT Tiny shows the same user controls).
# Deviations: the device reports power_line_frequency default=3 with max=2 (out of its
# own range); here the default is 0 (Disabled), its reported current value.  USB IDs:
# 3564 is Remo Tech (OBSBOT, seen as "3564:ff02 ... OBSBOT Tiny 3" in
# https://github.com/aaronsb/obsbot-camera-control/issues/34); fef0 is illustrative.
name OBSBOT Tiny PTZ (emulated)
vid 0x3564
pid 0xfef0
bcd_device 0x0100
manufacturer Remo Tech Co., Ltd.
product OBSBOT Tiny
transfer iso
status_endpoint yes

format mjpeg
frame 1920x1080 30 25 20 15 10 5
frame 1280x720  30 25 20 15 10 5
frame 640x360   30 25 20 15 10 5
frame 320x180   30 25 20 15 10 5

format yuyv
frame 640x360   30 25 20 15 10 5
frame 320x180   30 25 20 15 10 5
frame 1280x720  10 5
frame 1920x1080 5

ctrl ae_mode                 min=0 max=0 res=0x03 def=2
ctrl ae_priority             min=0 max=1 res=1 def=0
ctrl exposure_time_absolute  min=1 max=2500 res=1 def=330
ctrl pan_absolute            min=-468000 max=468000 res=3600 def=0
ctrl tilt_absolute           min=-324000 max=324000 res=7200 def=0
ctrl zoom_absolute           min=0 max=100 res=1 def=0
ctrl brightness              min=0 max=100 res=1 def=50
ctrl contrast                min=0 max=100 res=1 def=50
ctrl saturation              min=0 max=100 res=1 def=50
ctrl hue                     min=0 max=100 res=1 def=50
ctrl white_balance_temperature min=2800 max=6500 res=1 def=4000
ctrl white_balance_temperature_auto min=0 max=1 res=1 def=1
ctrl gain                    min=1 max=48 res=1 def=1
ctrl sharpness               min=0 max=4 res=1 def=2
ctrl backlight_compensation  min=0 max=18 res=1 def=9
ctrl power_line_frequency    min=0 max=2 res=1 def=0
