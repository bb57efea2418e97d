# expect: bad-vid.profile:2: field 'vid': 0x12345 is out of range 0..65535
vid 0x12345
