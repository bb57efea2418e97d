# A fixed-focus 720p laptop-style integrated camera: no focus, no zoom, a read-only
# privacy switch, a processing unit with hue and gamma; bulk video endpoint (the
# profile that exercises bulk transfers).  Format of this file: Tests/Webcam/README.md.
#
# Controls (every range, step and default below, the Manual + Aperture Priority
# auto-exposure pair, the read-only privacy control) from a published `v4l2-ctl -l`
# of such a camera:
source https://github.com/kraudust/personal_software_notes/blob/106be5e87bc2725a52713541ce1c7aef1772cf16/usb_cameras/linux_interaction.md
# The dump has no USB IDs; 0bda:58f4 (Realtek, the usual maker of integrated laptop
# cameras) and the product name are illustrative.  Frame sizes are the usual 720p
# integrated-camera set: YUYV 1280x720 only at 10 fps, MJPEG 1280x720 at 30 fps.
name Integrated 720p laptop camera (emulated)
vid 0x0bda
pid 0x58f4
bcd_device 0x0005
manufacturer Generic
product Integrated_Webcam_HD
transfer bulk
status_endpoint yes

format yuyv
frame 640x480   30 15
frame 320x240   30 15
frame 424x240   30 15
frame 640x360   30 15
frame 1280x720  10

format mjpeg
frame 1280x720  30 15
frame 640x480   30 15
frame 320x240   30 15
frame 640x360   30 15

ctrl ae_mode                 min=0 max=0 res=0x09 def=8
ctrl ae_priority             min=0 max=1 res=1 def=0
ctrl exposure_time_absolute  min=10 max=700 res=1 def=156
ctrl privacy                 min=0 max=1 res=1 def=0 info=0x09
ctrl brightness              min=-64 max=64 res=1 def=0
ctrl contrast                min=0 max=95 res=1 def=0
ctrl saturation              min=0 max=100 res=1 def=64
ctrl hue                     min=-2000 max=2000 res=1 def=0
ctrl gamma                   min=100 max=300 res=1 def=100
ctrl gain                    min=1 max=8 res=1 def=1
ctrl white_balance_temperature min=2800 max=6500 res=10 def=4600
ctrl white_balance_temperature_auto min=0 max=1 res=1 def=1
ctrl sharpness               min=1 max=7 res=1 def=2
ctrl power_line_frequency    min=0 max=2 res=1 def=2
ctrl backlight_compensation  min=0 max=3 res=1 def=3
