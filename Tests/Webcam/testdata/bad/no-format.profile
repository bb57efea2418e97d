# expect: no-format.profile:5: field 'format': no format at end of file
vid 0x1234
pid 0x5678
product X
