# expect: ctrl-def-outside.profile:7: field 'brightness def': 300 is outside min..max 0..255
vid 0x1234
pid 0x5678
product X
format yuyv
frame 640x480 30
ctrl brightness min=0 max=255 res=1 def=300
