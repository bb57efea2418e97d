# Logitech QuickCam Pro 9000 (046d:0809): a webcam WITHOUT a product or manufacturer string
# (iProduct 0, iManufacturer 0: uvcvideo names it "UVC Camera (046d:0809)"), still image
# method 2 with still image frame descriptors (18 sizes per format), seven Logitech extension
# units (focus is a vendor control there, not the camera terminal's), 18 YUYV and 18 MJPEG sizes,
# eleven isochronous alternate settings: the whole descriptor set of a published lsusb -v,
# converted by Tests/Webcam/lsusb-to-profile.
source https://github.com/libuvc/libuvc/blob/b1d39284809d5230d2a55e2fd171ff05c3d33691/cameras/quickcampro9000.txt
# The control names uvcvideo lists for it (no ranges):
source https://github.com/libuvc/libuvc/blob/b1d39284809d5230d2a55e2fd171ff05c3d33691/cameras/quickcampro9000_builtin_ctrls.txt
# Ranges: a published listing of the same Logitech generation (QuickCam Orbit/Sphere AF: white
# balance 0..10000, sharpness 0..255, backlight 0..2, exposure 1..10000, auto exposure Manual +
# Aperture Priority):
source https://github.com/Motion-Project/motion/issues/1302
# Not from a dump of this model: brightness/contrast/saturation/gain 0..255 default 128/32/32/0,
# pan/tilt +-36000 step 3600 (digital), the defaults of white balance (4000) and exposure (166).
name Logitech QuickCam Pro 9000, no product string (emulated)
vid 0x046d
pid 0x0809
bcd_device 0x0010
# iManufacturer 0: no manufacturer string
# iProduct 0: no product string
bcd_uvc 0x0100
transfer iso
status_endpoint yes
iso_alts 0x00c0 0x0180 0x0200 0x0280 0x0320 0x03b0 0x0a80 0x0b20 0x0be0 0x1380 0x13fc
ct_control_size 3
pu_control_size 2
still_method 2
xu 82066163-7050-ab49-b8cc-b3855e8d221e 10 ff03
xu 82066163-7050-ab49-b8cc-b3855e8d221f 7 6f01
xu 82066163-7050-ab49-b8cc-b3855e8d2251 3 190000
xu 82066163-7050-ab49-b8cc-b3855e8d2252 24 ffffff
xu b7935ba4-15c7-0245-90f4-532a3b311365 4 0f0000
xu 82066163-7050-ab49-b8cc-b3855e8d2256 5 0c0000
xu 82066163-7050-ab49-b8cc-b3855e8d2250 17 fe7f70

format yuyv
frame 640x480 i333333* i400000 i500000 i666666 i1000000 i2000000
frame 160x120 i333333* i400000 i500000 i666666 i1000000 i2000000
frame 176x144 i333333* i400000 i500000 i666666 i1000000 i2000000
frame 320x240 i333333* i400000 i500000 i666666 i1000000 i2000000
frame 352x288 i333333* i400000 i500000 i666666 i1000000 i2000000
frame 640x360 i333333* i400000 i500000 i666666 i1000000 i2000000
frame 640x400 i333333* i400000 i500000 i666666 i1000000 i2000000
frame 768x480 i400000* i500000 i666666 i1000000 i2000000
frame 800x456 i400000* i500000 i666666 i1000000 i2000000
frame 800x504 i400000* i500000 i666666 i1000000 i2000000
frame 800x600 i400000* i500000 i666666 i1000000 i2000000
frame 864x480 i400000* i500000 i666666 i1000000 i2000000
frame 960x720 i666666 i1000000* i2000000
frame 1280x720 i1333333 i2000000*
frame 1280x800 i1333333 i2000000*
frame 1600x904 i2000000*
frame 1600x1000 i2000000*
frame 1600x1200 i2000000*
still 640x480 160x120 176x144 320x240 352x288 640x360 640x400 768x480 800x456 800x504 800x600 864x480 960x720 1280x720 1280x800 1600x904 1600x1000 1600x1200

format mjpeg
frame 640x480 i333333* i400000 i500000 i666666 i1000000 i2000000
frame 160x120 i333333* i400000 i500000 i666666 i1000000 i2000000
frame 176x144 i333333* i400000 i500000 i666666 i1000000 i2000000
frame 320x240 i333333* i400000 i500000 i666666 i1000000 i2000000
frame 352x288 i333333* i400000 i500000 i666666 i1000000 i2000000
frame 640x360 i333333* i400000 i500000 i666666 i1000000 i2000000
frame 640x400 i333333* i400000 i500000 i666666 i1000000 i2000000
frame 768x480 i333333* i400000 i500000 i666666 i1000000 i2000000
frame 800x456 i333333 i400000 i500000 i666666* i1000000 i2000000
frame 800x504 i333333 i400000 i500000 i666666* i1000000 i2000000
frame 800x600 i333333 i400000 i500000 i666666* i1000000 i2000000
frame 864x480 i333333 i400000 i500000 i666666* i1000000 i2000000
frame 960x720 i333333 i400000 i500000 i666666 i1000000* i2000000
frame 1280x720 i333333 i400000 i500000 i666666 i1000000* i2000000
frame 1280x800 i400000 i500000 i666666 i1000000* i2000000
frame 1600x904 i1000000* i2000000
frame 1600x1000 i1000000* i2000000
frame 1600x1200 i1000000 i2000000*
still 640x480 160x120 176x144 320x240 352x288 640x360 640x400 768x480 800x456 800x504 800x600 864x480 960x720 1280x720 1280x800 1600x904 1600x1000 1600x1200

ctrl ae_mode                 min=0 max=0 res=0x09 def=8
ctrl ae_priority             min=0 max=1 res=1 def=0
ctrl exposure_time_absolute  min=1 max=10000 res=1 def=166
ctrl pan_absolute            min=-36000 max=36000 res=3600 def=0
ctrl tilt_absolute           min=-36000 max=36000 res=3600 def=0
ctrl brightness              min=0 max=255 res=1 def=128
ctrl contrast                min=0 max=255 res=1 def=32
ctrl saturation              min=0 max=255 res=1 def=32
ctrl sharpness               min=0 max=255 res=1 def=224
ctrl white_balance_temperature min=0 max=10000 res=10 def=4000
ctrl white_balance_temperature_auto min=0 max=1 res=1 def=1
ctrl gain                    min=0 max=255 res=1 def=0
ctrl backlight_compensation  min=0 max=2 res=1 def=1
ctrl power_line_frequency    min=0 max=2 res=1 def=2
