# expect: bad-transfer.profile:2: field 'transfer': 'interrupt' is not iso or bulk
transfer interrupt
