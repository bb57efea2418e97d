# expect: frame-before-format.profile:5: field 'frame': comes before any 'format' line
vid 0x1234
pid 0x5678
product X
frame 640x480 30
