# expect: ctrl-too-wide.profile:7: field 'zoom_absolute max': 70000 is out of range 0..65535
vid 0x1234
pid 0x5678
product X
format yuyv
frame 640x480 30
ctrl zoom_absolute min=100 max=70000 res=1 def=100
