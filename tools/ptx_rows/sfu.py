"""The special-function unit's approximations (PTX ISA 9.7.3, 9.7.4)."""
ROWS = [
    ("ex2.approx{.ftz}.f32 d, a;", "1.0", 20, "ex2"),
    ("ex2.approx.atype d, a;  .atype = { .f16, .f16x2 }", "7.0", 75, "ex2"),
    ("ex2.approx.ftz.btype d, a;  .btype = { .bf16, .bf16x2 }", "7.8", 90, "ex2"),
    ("lg2.approx{.ftz}.f32 d, a;", "1.0", 20, "lg2"),
    ("sin.approx{.ftz}.f32 d, a;", "1.0", 20, "sin"),
    ("cos.approx{.ftz}.f32 d, a;", "1.0", 20, "cos"),
    ("tanh.approx.type d, a;  .type = { .f32, .f16, .f16x2, .bf16, .bf16x2 }", "7.0", 75, "tanh"),
]
