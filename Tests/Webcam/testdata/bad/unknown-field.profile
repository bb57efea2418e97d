# expect: unknown-field.profile:4: field 'colour'
vid 0x1234
pid 0x5678
colour blue
