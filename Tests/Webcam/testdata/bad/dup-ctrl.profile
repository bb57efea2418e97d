# expect: dup-ctrl.profile:8: field 'gain': given twice (first on line 7)
vid 0x1234
pid 0x5678
product X
format yuyv
frame 640x480 30
ctrl gain min=0 max=255 res=1 def=0
ctrl gain min=0 max=255 res=1 def=0
