# expect: bad-fps.profile:6: field 'frame': frame rate 'fast'
vid 0x1234
pid 0x5678
product X
format mjpeg
frame 640x480 30 fast
