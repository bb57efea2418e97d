# expect: ctrl-unknown.profile:7: field 'ctrl': unknown control 'zoom'
vid 0x1234
pid 0x5678
product X
format yuyv
frame 640x480 30
ctrl zoom min=1 max=2 res=1 def=1
