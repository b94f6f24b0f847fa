"""Extended-precision integer arithmetic through the condition code's carry flag (PTX ISA 9.7.2):
add.cc, addc, sub.cc, subc, mad.cc, madc. The 64-bit types need PTX 4.3 (ptxas: "Feature '.cc with
64bit type' requires PTX ISA .version 4.3 or later"); ptxas takes no .b32 / 16-bit type, no .sat
and no .wide with them."""
_T = ".type = { .u32, .s32, .u64, .s64 }"
_W64 = [(".u64", 43, 20), (".s64", 43, 20)]
ROWS = [
    (f"add.cc.type d, a, b;  {_T}", "1.2", 20, "add", _W64),
    (f"addc{{.cc}}.type d, a, b;  {_T}", "1.2", 20, "addc", _W64),
    (f"sub.cc.type d, a, b;  {_T}", "1.2", 20, "sub", _W64),
    (f"subc{{.cc}}.type d, a, b;  {_T}", "1.2", 20, "subc", _W64),
    (f"mad.mode.cc.type d, a, b, c;  .mode = {{ .hi, .lo }}  {_T}", "3.0", 20, "mad", _W64),
    (f"madc.mode{{.cc}}.type d, a, b, c;  .mode = {{ .hi, .lo }}  {_T}", "3.0", 20, "madc", _W64),
]
