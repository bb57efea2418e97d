# expect: ctrl-missing-def.profile:7: field 'zoom_absolute def': missing
vid 0x1234
pid 0x5678
product X
format yuyv
frame 640x480 30
ctrl zoom_absolute min=100 max=500 res=1
