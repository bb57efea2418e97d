# expect: bad-size.profile:6: field 'frame': size '641x480'
vid 0x1234
pid 0x5678
product X
format yuyv
frame 641x480 30
