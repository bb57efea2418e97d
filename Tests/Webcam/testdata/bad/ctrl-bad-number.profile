# expect: ctrl-bad-number.profile:7: field 'focus_absolute max': 'lots' is not an integer
vid 0x1234
pid 0x5678
product X
format yuyv
frame 640x480 30
ctrl focus_absolute min=0 max=lots res=1 def=0
