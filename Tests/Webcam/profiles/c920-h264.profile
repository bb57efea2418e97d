# Logitech HD Pro Webcam C920, the original 046d:082d with its on-camera H.264 encoder: the whole
# descriptor set of a published lsusb -v, converted by Tests/Webcam/lsusb-to-profile (formats
# YUYV 19 sizes, H.264 (frame-based, VS_FORMAT_FRAME_BASED) 17 sizes, MJPEG 17 sizes, each with
# its intervals in descriptor order and its default, six Logitech extension units, eleven
# isochronous alternate settings with their wMaxPacketSize, no manufacturer string):
source https://github.com/libuvc/libuvc/blob/b1d39284809d5230d2a55e2fd171ff05c3d33691/cameras/logitech_hd_pro_920.txt
# Control ranges (not in an lsusb dump): the C920's published v4l2-ctl --all, as in c920.profile
# (brightness/contrast/saturation 0..255 default 128, exposure 3..2047 default 250, focus 0..250
# step 5, zoom 100..500, pan/tilt +-36000 step 3600, auto exposure Manual + Aperture Priority):
source https://github.com/Digital1O1/HandGestureProject/blob/70cd1984886b7b86fcb09d9ba0487dff673a2376/AdjustCameraSettingTrackbars/notes.md
# and the crowsnest -L of a C920 (white balance 2000..6500 default 4000, gain 0..255, sharpness
# 0..255, backlight 0..1, power line default 60 Hz):
source https://github.com/bigtreetech/CB2/issues/128
# The emulator streams H.264 as SPS+PPS+one IDR slice of I_PCM macroblocks per frame (a real
# stream any decoder reads, not the camera's encoder output).  Not modelled: the unit IDs and
# topology of the real device (its extension units sit after the processing unit here), the
# audio function.
name Logitech HD Pro Webcam C920, H.264 model (emulated)
vid 0x046d
pid 0x082d
bcd_device 0x0011
# iManufacturer 0: no manufacturer string
product HD Pro Webcam C920
bcd_uvc 0x0100
transfer iso
status_endpoint yes
iso_alts 0x00c0 0x0180 0x0200 0x0280 0x0320 0x03b0 0x0a80 0x0b20 0x0be0 0x1380 0x13fc
ct_control_size 3
pu_control_size 2
still_method 0
xu d09ee423-7811-314f-ae52-d2fb8a8d3b48 10 ff03
xu e48e6769-0f41-db40-a850-7420d7d8240e 7 3b03
xu a94c5d1f-11de-8744-840d-50933c8ec8d1 17 f3ff23
xu 1502e449-34f4-fe47-b158-0e885023e51b 7 aa07
xu 212de5ff-3080-2c4e-82d9-f587d00540bd 2 0041
xu 41769ea2-04de-e347-8b2b-f4341aff003b 11 077f

format yuyv
frame 640x480 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 160x90 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 160x120 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 176x144 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 320x180 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 320x240 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 352x288 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 432x240 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 640x360 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 800x448 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 800x600 i416666* i500000 i666666 i1000000 i1333333 i2000000
frame 864x480 i416666* i500000 i666666 i1000000 i1333333 i2000000
frame 960x720 i666666* i1000000 i1333333 i2000000
frame 1024x576 i666666* i1000000 i1333333 i2000000
frame 1280x720 i1000000* i1333333 i2000000
frame 1600x896 i1333333* i2000000
frame 1920x1080 i2000000*
frame 2304x1296 i4999998*
frame 2304x1536 i4999998*

format h264
frame 640x480 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 160x90 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 160x120 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 176x144 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 320x180 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 320x240 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 352x288 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 432x240 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 640x360 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 800x448 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 800x600 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 864x480 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 960x720 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 1024x576 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 1280x720 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 1600x896 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 1920x1080 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000

format mjpeg
frame 640x480 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 160x90 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 160x120 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 176x144 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 320x180 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 320x240 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 352x288 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 432x240 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 640x360 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 800x448 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 800x600 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 864x480 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 960x720 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 1024x576 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 1280x720 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 1600x896 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000
frame 1920x1080 i333333* i416666 i500000 i666666 i1000000 i1333333 i2000000

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
