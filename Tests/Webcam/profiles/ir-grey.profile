# The infrared (Windows Hello) function of a laptop camera, Lenovo Yoga Pro 7 14IRH8: its IR
# video node offers GREY (8-bit greyscale, UVC GUID Y800) only, 640x360 at 15 and 30 fps, in
# that order.  From the published `v4l2-ctl -d /dev/video2 --list-formats-ext` (and the
# --list-devices naming it "Integrated Camera: Integrated C" on usb-0000:00:14.0-6):
source https://github.com/EmixamPP/linux-enable-ir-emitter/issues/135
# Also a camera with NO controls at all (empty camera-terminal and processing-unit bmControls):
# the issue shows no control listing, so "none" is this profile's choice, not a fact from the
# source (the emitter of such cameras is driven through a vendor extension unit, left out here
# as its GUID and selectors are not in the source).  Not from the source: USB IDs (04f2 is
# Chicony, the usual maker of these modules; b7a8 is illustrative), strings, the 15 fps default.
name Laptop IR camera, GREY only, no controls (emulated)
vid 0x04f2
pid 0xb7a8
bcd_device 0x0021
manufacturer Chicony Electronics Co.,Ltd.
product Integrated Camera
transfer iso
status_endpoint no
still_method 0

format grey
frame 640x360 15* 30
