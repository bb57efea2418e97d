# expect: ctrl-bit-too-big.profile:8: field 'focus_auto': its bmControls bit 17 does not fit in ct_control_size 2
vid 0x1234
pid 0x5678
product X
ct_control_size 2
format yuyv
frame 640x480 30
ctrl focus_auto min=0 max=1 res=1 def=1
