# expect: missing-pid.profile:5: field 'pid': missing at end of file
vid 0x1234
product X
format yuyv
