# Odd but legal descriptors (the bad-input pass of scripts/vm-webcam-smoke): UVC 1.1
# (34-byte probe/commit, 10+n processing unit), a camera terminal whose bmControls has
# zero length (ct_control_size 0: no camera controls at all), one format with one
# discrete frame size and a single frame interval, a control whose range is a single
# value with step 0, and no interrupt status endpoint.
name Odd minimal webcam (emulated)
vid 0x1d6b
pid 0x0102
manufacturer CamHAL
product Odd Minimal Cam
bcd_uvc 0x0110
transfer iso
status_endpoint no
ct_control_size 0
pu_control_size 1

format yuyv
frame 320x240 15

ctrl brightness min=7 max=7 res=0 def=7
