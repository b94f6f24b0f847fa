ROWS = [("fns.b32 d, mask, base, offset;", "6.0", 30, "fns")]
