# Microsoft LifeCam Rear, the Surface Pro 3's rear camera (045e:07bf): a UVC 1.5 device
# (bcdUVC 1.50: 48-byte probe/commit, the UVC 1.1+ processing unit with bmVideoStandards).
# From its published lsusb -v (device descriptor, strings "QCM" / "Microsoft LifeCam Rear", no
# serial string, bcdDevice 21.52, camera terminal bmControls 0x0a0e: auto-exposure mode and
# priority, exposure time, zoom, pan/tilt):
source http://lkml.iu.edu/hypermail/linux/kernel/1506.1/03486.html
# Not from that dump (the part quoted in the thread ends before them): the processing unit's
# controls, the frame sizes and intervals (a 1080p/720p YUYV + MJPEG set as such rear modules
# offer), every control range, the single streaming interface (the real one has two), and the
# serial number the harness adds.  The profile is here for the UVC 1.5 protocol, not as a copy
# of this camera's format list.
name Microsoft LifeCam Rear, UVC 1.5 (emulated)
vid 0x045e
pid 0x07bf
bcd_device 0x2152
manufacturer QCM
product Microsoft LifeCam Rear
bcd_uvc 0x0150
transfer iso
status_endpoint yes
ct_control_size 3
pu_control_size 2

format yuyv
frame 640x480   30* 15
frame 1280x720  10* 5
frame 1920x1080 5*

format mjpeg
frame 1920x1080 30* 15
frame 1280x720  30* 15
frame 640x480   30* 15

ctrl ae_mode                 min=0 max=0 res=0x09 def=8
ctrl ae_priority             min=0 max=1 res=1 def=0
ctrl exposure_time_absolute  min=1 max=2000 res=1 def=333
ctrl zoom_absolute           min=100 max=400 res=1 def=100
ctrl pan_absolute            min=-36000 max=36000 res=3600 def=0
ctrl tilt_absolute           min=-36000 max=36000 res=3600 def=0
ctrl brightness              min=-64 max=64 res=1 def=0
ctrl contrast                min=0 max=100 res=1 def=50
ctrl saturation              min=0 max=100 res=1 def=64
ctrl white_balance_temperature min=2800 max=6500 res=10 def=4600
ctrl white_balance_temperature_auto min=0 max=1 res=1 def=1
ctrl power_line_frequency    min=0 max=2 res=1 def=2
