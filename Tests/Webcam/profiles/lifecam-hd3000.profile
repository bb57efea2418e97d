# Microsoft LifeCam HD-3000 (045e:0810), a common 720p USB webcam: the whole descriptor set of a
# published lsusb -v, converted by Tests/Webcam/lsusb-to-profile (YUYV 12 sizes and MJPEG 11 with
# their own default intervals, e.g. 1280x720 YUYV at 10 fps; still image method 1 (every frame
# descriptor "still image supported"); one extension unit of 16 controls; six isochronous
# alternate settings 128 .. 3x1024 bytes; no serial number string):
source https://github.com/libuvc/libuvc/blob/b1d39284809d5230d2a55e2fd171ff05c3d33691/cameras/microsoft_Lifecam_HD-3000.txt
# Control ranges (not in an lsusb dump): published v4l2-ctl listings of LifeCam HD-3000/Studio
# cameras (the same Microsoft firmware family): brightness 30..255 default 133, contrast 0..10
# default 5, saturation 0..200 default 103, white balance 2500..10000 default 4500, sharpness
# 0..50 default 25, backlight 0..10 default 0, exposure 1..10000 default 156, pan -529200..529200
# and tilt -432000..432000 step 3600:
source https://github.com/joelpurra/uvcc/issues/4
source https://github.com/bellbind/node-v4l2camera/issues/24
# Not from a dump of this model: zoom_absolute 0..10 (the HD-3000 has digital zoom steps; the
# Studio's 0..317 is its own), the auto-exposure pair Manual + Aperture Priority (mask 0x09).
# The emulator adds a serial number (the harness finds webcams by it); the real one has none.
name Microsoft LifeCam HD-3000 (emulated)
vid 0x045e
pid 0x0810
bcd_device 0x0108
manufacturer Microsoft
product Microsoft® LifeCam HD-3000
bcd_uvc 0x0100
transfer iso
status_endpoint yes
iso_alts 0x0080 0x0100 0x0200 0x0400 0x0c00 0x1400
ct_control_size 3
pu_control_size 2
still_method 1
xu 29a787c9-d359-6945-8467-ff0849fc19e8 16 ffff

format yuyv
frame 640x480 i333333* i500000 i666666 i1000000 i1333333
frame 1280x720 i1000000* i1333333
frame 960x544 i666666* i1000000 i1333333
frame 800x448 i500000* i666666 i1000000 i1333333
frame 640x360 i333333* i500000 i666666 i1000000 i1333333
frame 424x240 i333333* i500000 i666666 i1000000 i1333333
frame 352x288 i333333* i500000 i666666 i1000000 i1333333
frame 320x240 i333333* i500000 i666666 i1000000 i1333333
frame 800x600 i666666* i1000000 i1333333
frame 176x144 i333333* i500000 i666666 i1000000 i1333333
frame 160x120 i333333* i500000 i666666 i1000000 i1333333
frame 1280x800 i1000000*

format mjpeg
frame 640x480 i333333* i500000 i666666 i1000000 i1333333
frame 1280x720 i333333* i500000 i666666 i1000000 i1333333
frame 960x544 i333333* i500000 i666666 i1000000 i1333333
frame 800x448 i333333* i500000 i666666 i1000000 i1333333
frame 640x360 i333333* i500000 i666666 i1000000 i1333333
frame 800x600 i333333* i500000 i666666 i1000000 i1333333
frame 416x240 i333333* i500000 i666666 i1000000 i1333333
frame 352x288 i333333* i500000 i666666 i1000000 i1333333
frame 176x144 i333333* i500000 i666666 i1000000 i1333333
frame 320x240 i333333* i500000 i666666 i1000000 i1333333
frame 160x120 i333333* i500000 i666666 i1000000 i1333333

ctrl ae_mode                 min=0 max=0 res=0x09 def=8
ctrl exposure_time_absolute  min=1 max=10000 res=1 def=156
ctrl zoom_absolute           min=0 max=10 res=1 def=0
ctrl pan_absolute            min=-529200 max=529200 res=3600 def=0
ctrl tilt_absolute           min=-432000 max=432000 res=3600 def=0
ctrl brightness              min=30 max=255 res=1 def=133
ctrl contrast                min=0 max=10 res=1 def=5
ctrl saturation              min=0 max=200 res=1 def=103
ctrl sharpness               min=0 max=50 res=1 def=25
ctrl white_balance_temperature min=2500 max=10000 res=1 def=4500
ctrl white_balance_temperature_auto min=0 max=1 res=1 def=1
ctrl backlight_compensation  min=0 max=10 res=1 def=0
ctrl power_line_frequency    min=0 max=2 res=1 def=2
