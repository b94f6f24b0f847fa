"""The PTX interpreter (ptxasync.ptx.Kernel): a kernel's PTX runs on the model and leaves the
bytes the Python API leaves; scalar integer PTX against a reference written here; what it
refuses, it refuses at Kernel() naming the line."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptxasync as pa
from ptxasync import ptx

HEAD = ".version 8.6\n.target {target}\n.address_size 64\n"


def load_kernel(target, mode_q, ncoords, ninfo=0, smem=8192, dst_space="shared::cluster"):
    """One thread: init an mbarrier, expect the box's bytes, issue one tensor load with
    coordinates (and im2col offsets) from parameters, wait on parity 0."""
    coords = ", ".join(f"%c{i}" for i in range(ncoords))
    lds = "\n".join(f"  ld.param.u32 %c{i}, [c{i}];" for i in range(ncoords))
    info_lds = "\n".join(f"  ld.param.u16 %o{i}, [o{i}];" for i in range(ninfo))
    params = ", ".join(["  .param .align 64 .b8 tmap[128]", "  .param .u32 nbytes"] +
                       [f"  .param .u32 c{i}" for i in range(ncoords)] +
                       [f"  .param .u16 o{i}" for i in range(ninfo)])
    info = (", {" + ", ".join(f"%o{i}" for i in range(ninfo)) + "}") if ninfo else ""
    return HEAD.format(target=target) + f"""
.visible .entry load(
{params})
{{
  .reg .b32 %c<5>;
  .reg .b16 %o<3>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<2>;
  .reg .pred %p<2>;
  .shared .align 1024 .b8 buf[{smem}];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, bar;
  mbarrier.init.shared::cta.b64 [%r1], 1;
  fence.mbarrier_init.release.cluster;
{lds}
{info_lds}
  ld.param.u32 %r2, [nbytes];
  mov.u32 %r4, buf;
  mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [%r1], %r2;
  cp.async.bulk.tensor.{ncoords if mode_q != ".tile::gather4" else 2}d.{dst_space}.global{mode_q}.mbarrier::complete_tx::bytes [%r4], [tmap, {{{coords}}}], [%r1]{info};
  mov.u32 %r5, 0;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r5;
  @!%p1 bra WAIT;
  ret;
}}
"""


def run_both(kernel_text, make_map, coords, mode="tile", offsets=None, target="sm_90a", arr=None,
             smem=16384, policy="in_order"):
    """The kernel on one machine, the same load through the Python API on another: the
    shared memory of both, and the box's byte count."""
    outs = []
    for via_ptx in (True, False):
        m = pa.Machine(smem_bytes=smem, target=target, policy=policy)
        m.smem[:] = 0xA5
        g = m.register(arr)
        tm = make_map(g.address)
        nbytes = tm.box_bytes if mode != "tile::gather4" else 4 * tm.fields["box_dim"][0] * arr.itemsize
        if via_ptx:
            params = {"tmap": tm, "nbytes": nbytes}
            params.update({f"c{i}": int(c) % (1 << 32) for i, c in enumerate(coords)})
            params.update({f"o{i}": int(o) for i, o in enumerate(offsets or [])})
            ptx.Kernel(kernel_text).launch(m, block=1, params=params)
        else:
            bar = m.mbarrier(_bar_offset(kernel_text)).init(1)
            bar.arrive_expect_tx(nbytes)
            kw = {"load_mode": mode}
            if offsets is not None:
                kw["im2col_offsets"] = offsets
            m.cp_async_bulk_tensor_load(tm, list(coords), 0, bar, **kw)
            m.run()
        outs.append(m.cta(0).smem.copy())
    return outs


def _bar_offset(text):
    # buf is the first .shared variable (offset 0); bar follows it, 8-aligned
    size = int(text.split(".b8 buf[")[1].split("]")[0])
    return (size + 7) // 8 * 8


@pytest.mark.parametrize("swizzle", ["NONE", "32B", "64B", "128B"])
@pytest.mark.parametrize("coords", [(0, 0), (8, 5), (-8, 60)])
def test_one_thread_tile_load_equals_the_api(swizzle, coords):
    a = np.arange(64 * 64, dtype=np.uint16).reshape(64, 64)
    box0 = {"NONE": 24, "32B": 16, "64B": 32, "128B": 64}[swizzle]

    def mk(addr):
        return pa.TensorMap.tiled("u16", addr, [64, 64], [128], [box0, 16], swizzle=swizzle)
    text = load_kernel("sm_90a", "", 2)
    via_ptx, via_api = run_both(text, mk, coords, arr=a)
    assert np.array_equal(via_ptx, via_api)
    assert not np.all(via_ptx[:2048] == 0xA5)            # the load wrote something


def test_one_thread_3d_tile_load_with_out_of_bounds():
    a = np.arange(4 * 16 * 32, dtype=np.float32).reshape(4, 16, 32)

    def mk(addr):
        return pa.TensorMap.tiled("f32", addr, [32, 16, 4], [128, 2048], [8, 8, 2], oob_fill="NAN_REQUEST_ZERO_FMA")
    text = load_kernel("sm_90a", "", 3)
    via_ptx, via_api = run_both(text, mk, (28, -3, 3), arr=a)
    assert np.array_equal(via_ptx, via_api)


def test_one_thread_im2col_load_equals_the_api():
    x = np.arange(2 * 6 * 6 * 16, dtype=np.uint16).reshape(2, 6, 6, 16)

    def mk(addr):
        return pa.TensorMap.im2col("u16", addr, [16, 6, 6, 2], [32, 192, 1152], [-1, -1], [-1, -1],
                                   channels_per_pixel=16, pixels_per_column=8, swizzle="32B")
    text = load_kernel("sm_90a", ".im2col", 4, ninfo=2)
    via_ptx, via_api = run_both(text, mk, (0, -1, 2, 1), mode="im2col", offsets=(1, 2), arr=x)
    assert np.array_equal(via_ptx, via_api)


def test_one_thread_gather4_load_equals_the_api():
    rng = np.random.default_rng(4)
    src = rng.integers(0, 1 << 16, size=(40, 64), dtype=np.uint16)

    def mk(addr):
        return pa.TensorMap.tiled("u16", addr, [64, 40], [128], [32, 1], target="sm_100a")
    text = load_kernel("sm_100a", ".tile::gather4", 5)
    via_ptx, via_api = run_both(text, mk, (8, 3, 39, 0, 17), mode="tile::gather4", target="sm_100a", arr=src)
    assert np.array_equal(via_ptx, via_api)
    np.testing.assert_array_equal(via_ptx[:64].view(np.uint16), src[3, 8:40])


def test_grid_runs_every_cta_with_its_ctaid():
    # each CTA's thread 0 stores %ctaid.x * 100 + %ctaid.y into out[ctaid.y][ctaid.x]
    text = HEAD.format(target="sm_90a") + """
.visible .entry ids(.param .u64 out)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  .reg .pred %p1;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ctaid.y;
  mov.u32 %r4, %nctaid.x;
  mad.lo.u32 %r5, %r3, %r4, %r2;
  mul.wide.u32 %rd1, %r5, 4;
  ld.param.u64 %rd2, [out];
  add.s64 %rd3, %rd2, %rd1;
  mad.lo.u32 %r5, %r2, 100, %r3;
  st.global.u32 [%rd3], %r5;
DONE:
  ret;
}
"""
    m = pa.Machine()
    out = np.zeros((3, 4), dtype=np.uint32)
    g = m.register(out)
    ptx.Kernel(text).launch(m, grid=(4, 3), block=64, params={"out": g})
    want = np.array([[x * 100 + y for x in range(4)] for y in range(3)], dtype=np.uint32)
    np.testing.assert_array_equal(out, want)


# ---- what it refuses -------------------------------------------------------------------

def test_syntax_error_names_line_and_column():
    with pytest.raises(ptx.PtxSyntaxError) as e:
        ptx.Kernel(HEAD.format(target="sm_90a") + ".visible .entry k()\n{\n  mov.u32 %r1 %r2;\n}\n")
    assert e.value.diagnostics[0].line == 6


def test_unsupported_instruction_is_refused_at_kernel_naming_the_line():
    text = HEAD.format(target="sm_90a") + """
.visible .entry k()
{
  .reg .b64 %rd<3>;
  .reg .pred %p<2>;
  createpolicy.range.L2::evict_last.L2::evict_unchanged.b64 %rd1, [%rd2], 1024, 4096;
  ret;
}
"""
    assert ptx.accepts(text)
    with pytest.raises(ptx.PtxSyntaxError, match="does not run 'createpolicy.range") as e:
        ptx.Kernel(text)
    assert e.value.diagnostics[0].line == 9


def test_params_are_checked_by_name_and_size():
    text = load_kernel("sm_90a", "", 2)
    k = ptx.Kernel(text)
    m = pa.Machine()
    tm = pa.TensorMap.tiled("u16", 0, [64, 64], [128], [16, 16])
    with pytest.raises(ValueError, match="parameter 'c1' of kernel load is not given"):
        k.launch(m, block=1, params={"tmap": tm, "nbytes": 512, "c0": 0})
    with pytest.raises(ValueError, match="unknown parameter 'zz'"):
        k.launch(m, block=1, params={"tmap": tm, "nbytes": 512, "c0": 0, "c1": 0, "zz": 1})
    with pytest.raises(ValueError, match="'tmap' is 128 bytes; the value given is 3 bytes"):
        k.launch(m, block=1, params={"tmap": b"abc", "nbytes": 512, "c0": 0, "c1": 0})
    with pytest.raises(OverflowError, match="'c0'"):
        k.launch(m, block=1, params={"tmap": tm, "nbytes": 512, "c0": 1 << 40, "c1": 0})
    with pytest.raises(TypeError, match="'tmap' is a .b8 array"):
        k.launch(m, block=1, params={"tmap": 5, "nbytes": 512, "c0": 0, "c1": 0})


def test_a_scalar_param_has_the_same_bytes_in_every_integer_form():
    # a plain int takes a shorter path than a NumPy integer or a negative one: the
    # same little-endian bytes, two's complement for a negative value
    k = ptx.Kernel(load_kernel("sm_90a", "", 2))
    tm = pa.TensorMap.tiled("u16", 0, [64, 64], [128], [16, 16])
    off, size, _ = k.params["c0"]
    for v, want in [(0, 0), (7, 7), ((1 << 32) - 1, (1 << 32) - 1), (-1, (1 << 32) - 1),
                    (-(1 << 31), 1 << 31)]:
        for form in (v, np.int64(v)):
            block = k._param_block({"tmap": tm, "nbytes": 512, "c0": form, "c1": 0})
            assert block[off:off + size] == want.to_bytes(size, "little"), (v, type(form))
    with pytest.raises(OverflowError, match="'c0'"):
        k._param_block({"tmap": tm, "nbytes": 512, "c0": 1 << 32, "c1": 0})
    with pytest.raises(TypeError, match="'c0': expected a TensorMap"):
        k._param_block({"tmap": tm, "nbytes": 512, "c0": True, "c1": 0})


def test_grid_and_block_take_an_int_or_up_to_three_ints():
    from ptxasync.ptx_kernel import _dim3
    for v in (4, (4,), [4], (4, 1), (4, 1, 1), np.int32(4)):
        assert _dim3(v, "block") == (4, 1, 1)
    assert _dim3((2, 3, 4), "grid") == (2, 3, 4)
    with pytest.raises(TypeError, match="block must be an int or up to three ints, not bool"):
        _dim3(True, "block")
    with pytest.raises(ValueError, match="block takes one to three dimensions; got 4"):
        _dim3((1, 1, 1, 1), "block")
    k = ptx.Kernel(load_kernel("sm_90a", "", 2))
    tm = pa.TensorMap.tiled("u16", 0, [64, 64], [128], [16, 16])
    with pytest.raises(ValueError, match=r"block\[1\] = 0 must be in \[1, 2\^31\)"):
        k.launch(pa.Machine(), block=(1, 0, 1), params={"tmap": tm, "nbytes": 512, "c0": 0, "c1": 0})


def test_an_operation_error_names_the_ptx_line_and_thread():
    text = load_kernel("sm_90a", "", 2)
    m = pa.Machine(smem_bytes=16384)
    a = np.zeros((64, 64), dtype=np.uint16)
    g = m.register(a)
    tm = pa.TensorMap.tiled("u16", g.address, [64, 64], [128], [16, 16])
    line = [i + 1 for i, s in enumerate(text.splitlines()) if "cp.async.bulk.tensor" in s][0]
    # a tx count that does not match the box: the wait can never complete
    with pytest.raises(pa.Deadlock, match=f"line {line + 3}"):
        ptx.Kernel(text).launch(m, block=1, params={"tmap": tm, "nbytes": 1000, "c0": 0, "c1": 0})


# ---- scalar integer PTX against a reference written here --------------------------------

M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def sx(v, w):
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) else v


def ref_bfe(a, pos, ln, w, signed):
    if w == 64:
        return ref_bfe64(a, pos, ln, signed)
    pos &= 0xFF
    ln &= 0xFF
    a &= (1 << w) - 1
    msb = w - 1
    sbit = 0 if not signed or ln == 0 else (a >> min(pos + ln - 1, msb)) & 1
    d = 0
    for i in range(w):
        bit = (a >> (pos + i)) & 1 if (i < ln and pos + i <= msb) else sbit
        d |= bit << i
    return d


def ref_bfe64(a, pos, ln, signed):
    """bfe.{u64,s64} as the H200 runs it (ptxas's shift sequence; docs/semantics.md, random-program
    recording): pos and len are 32-bit values clamped to 64; the field is (a >> pos) (arithmetic
    for .s64) masked to len bits, and .s64 sets the bits from len up when bit len - 1 is set."""
    P, L = min(pos & M32, 64), min(ln & M32, 64)
    a &= M64
    v = (sx(a, 64) >> min(P, 63)) & M64 if signed else (a >> P if P < 64 else 0)
    v &= (1 << L) - 1
    if signed and L and (v >> (L - 1)) & 1:
        v |= M64 ^ ((1 << L) - 1)
    return v


OPS32 = ["add.u32", "sub.s32", "mul.lo.u32", "mul.lo.s32", "mul.hi.u32", "mul.hi.s32", "and.b32", "or.b32",
         "xor.b32", "min.s32", "max.u32", "min.u32", "max.s32", "shl.b32", "shr.u32", "shr.s32", "bfe.u32",
         "bfe.s32", "mad.lo.u32", "not.b32", "selp"] + [f"setp.{c}" for c in ("eq", "ne", "lt", "le", "gt", "ge")]
OPS64 = ["add.s64", "sub.u64", "mul.lo.u64", "mul.hi.u64", "mul.hi.s64", "shl.b64", "shr.s64", "shr.u64",
         "bfe.u64", "bfe.s64", "xor.b64", "min.s64", "max.u64", "mul.wide.u32", "mul.wide.s32", "mad.wide.s32",
         "cvt.u64.u32", "cvt.s64.s32", "cvt.u32.u64", "cvt.u16.u32", "cvt.s32.s16", "cvt.u32.u16"]


def ref_eval(prog, r32, r64):
    """Run the program on Python ints (the reference). The kernel starts predicate p_i as
    r_i != 0 and the 16-bit registers as 0."""
    r32, r64, h = list(r32), list(r64), [0] * 4
    p = [int(r32[i] != 0) for i in range(4)]
    for op, d, a, b, c in prog:
        A, B, C = r32[a], r32[b], r32[c]
        X, Y, Z = r64[a], r64[b], r64[c]
        if op == "add.u32": r32[d] = (A + B) & M32
        elif op == "sub.s32": r32[d] = (A - B) & M32
        elif op in ("mul.lo.u32", "mul.lo.s32"): r32[d] = (A * B) & M32
        elif op == "mul.hi.u32": r32[d] = (A * B) >> 32
        elif op == "mul.hi.s32": r32[d] = ((sx(A, 32) * sx(B, 32)) >> 32) & M32
        elif op == "and.b32": r32[d] = A & B
        elif op == "or.b32": r32[d] = A | B
        elif op == "xor.b32": r32[d] = A ^ B
        elif op == "not.b32": r32[d] = ~A & M32
        elif op == "min.s32": r32[d] = A if sx(A, 32) < sx(B, 32) else B
        elif op == "max.s32": r32[d] = A if sx(A, 32) > sx(B, 32) else B
        elif op == "min.u32": r32[d] = min(A, B)
        elif op == "max.u32": r32[d] = max(A, B)
        elif op == "shl.b32": r32[d] = 0 if B >= 32 else (A << B) & M32
        elif op == "shr.u32": r32[d] = 0 if B >= 32 else A >> B
        elif op == "shr.s32": r32[d] = (sx(A, 32) >> min(B, 31)) & M32
        elif op == "bfe.u32": r32[d] = ref_bfe(A, B, C, 32, False)
        elif op == "bfe.s32": r32[d] = ref_bfe(A, B, C, 32, True)
        elif op == "mad.lo.u32": r32[d] = (A * B + C) & M32
        elif op.startswith("setp"):
            p[d % 4] = int({"eq": A == B, "ne": A != B, "lt": sx(A, 32) < sx(B, 32), "le": sx(A, 32) <= sx(B, 32),
                            "gt": A > B, "ge": A >= B}[op.split(".")[1]])
        elif op == "selp": r32[d] = A if p[c % 4] else B
        elif op == "add.s64": r64[d] = (X + Y) & M64
        elif op == "sub.u64": r64[d] = (X - Y) & M64
        elif op == "mul.lo.u64": r64[d] = (X * Y) & M64
        elif op == "mul.hi.u64": r64[d] = (X * Y) >> 64
        elif op == "mul.hi.s64": r64[d] = ((sx(X, 64) * sx(Y, 64)) >> 64) & M64
        elif op == "shl.b64": r64[d] = 0 if B >= 64 else (X << B) & M64
        elif op == "shr.s64": r64[d] = (sx(X, 64) >> min(B, 63)) & M64
        elif op == "shr.u64": r64[d] = 0 if B >= 64 else X >> B
        elif op == "bfe.u64": r64[d] = ref_bfe(X, B, C, 64, False)
        elif op == "bfe.s64": r64[d] = ref_bfe(X, B, C, 64, True)
        elif op == "xor.b64": r64[d] = X ^ Y
        elif op == "min.s64": r64[d] = X if sx(X, 64) < sx(Y, 64) else Y
        elif op == "max.u64": r64[d] = max(X, Y)
        elif op == "mul.wide.u32": r64[d] = A * B
        elif op == "mul.wide.s32": r64[d] = (sx(A, 32) * sx(B, 32)) & M64
        elif op == "mad.wide.s32": r64[d] = (sx(A, 32) * sx(B, 32) + Z) & M64
        elif op == "cvt.u64.u32": r64[d] = A
        elif op == "cvt.s64.s32": r64[d] = sx(A, 32) & M64
        elif op == "cvt.u32.u64": r32[d] = X & M32
        elif op == "cvt.u16.u32": h[d % 4] = A & 0xFFFF
        elif op == "cvt.s32.s16": r32[d] = sx(h[a % 4], 16) & M32
        elif op == "cvt.u32.u16": r32[d] = h[a % 4]
        else: raise AssertionError(op)
    return r32, r64


def ptx_line(op, d, a, b, c):
    if op.startswith("setp"):
        return f"setp.{op.split('.')[1]}.{'s32' if op.split('.')[1] in ('lt', 'le') else 'u32'} %p{d % 4}, %r{a}, %r{b};"
    if op == "selp":
        return f"selp.b32 %r{d}, %r{a}, %r{b}, %p{c % 4};"
    if op == "not.b32":
        return f"not.b32 %r{d}, %r{a};"
    if op.startswith("bfe"):
        rd = "r" if op.endswith("32") else "rd"
        return f"{op} %{rd}{d}, %{rd}{a}, %r{b}, %r{c};"
    if op == "mad.lo.u32":
        return f"mad.lo.u32 %r{d}, %r{a}, %r{b}, %r{c};"
    if op in ("shl.b64", "shr.s64", "shr.u64"):
        return f"{op} %rd{d}, %rd{a}, %r{b};"
    if op in ("mul.wide.u32", "mul.wide.s32"):
        return f"{op} %rd{d}, %r{a}, %r{b};"
    if op == "mad.wide.s32":
        return f"mad.wide.s32 %rd{d}, %r{a}, %r{b}, %rd{c};"
    if op in ("cvt.u64.u32", "cvt.s64.s32"):
        return f"{op} %rd{d}, %r{a};"
    if op == "cvt.u32.u64":
        return f"{op} %r{d}, %rd{a};"
    if op == "cvt.u16.u32":
        return f"{op} %h{d % 4}, %r{a};"
    if op in ("cvt.s32.s16", "cvt.u32.u16"):
        return f"{op} %r{d}, %h{a % 4};"
    if op in OPS64:
        return f"{op} %rd{d}, %rd{a}, %rd{b};"
    return f"{op} %r{d}, %r{a}, %r{b};"


NREG = 6
u32s = st.one_of(st.integers(0, M32), st.sampled_from([0, 1, 31, 32, 33, 63, 64, 65, M32, 1 << 31, (1 << 31) - 1]))
u64s = st.one_of(st.integers(0, M64), st.sampled_from([0, 1, M64, 1 << 63, (1 << 63) - 1, M32]))
instrs = st.tuples(st.sampled_from(OPS32 + OPS64), st.integers(0, NREG - 1), st.integers(0, NREG - 1),
                   st.integers(0, NREG - 1), st.integers(0, NREG - 1))


def preds_and_halves():
    """%p0-3 from %r0-3, %h0-3 zero: the other registers the programs read."""
    return (["  setp.ne.u32 %p{0}, %r{0}, 0;".format(i) for i in range(4)] +
            ["  mov.u16 %h{0}, 0;".format(i) for i in range(4)])


def store_registers():
    """%r0.. then %rd0.. stored from [%rd9]."""
    return ([f"  st.global.u32 [%rd9+{4 * i}], %r{i};" for i in range(NREG)] +
            [f"  st.global.u64 [%rd9+{4 * NREG + 8 * i}], %rd{i};" for i in range(NREG)])


def scalar_kernel(prog, r32, r64):
    body = [f"  mov.u32 %r{i}, {v};" for i, v in enumerate(r32)]
    body += [f"  mov.u64 %rd{i}, {v};" for i, v in enumerate(r64)]
    body += preds_and_halves()
    body += ["  " + ptx_line(*ins) for ins in prog]
    body += ["  ld.param.u64 %rd9, [out];"]
    body += store_registers()
    return HEAD.format(target="sm_90a") + (
        ".visible .entry scalar(.param .u64 out)\n{\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<10>;\n"
        "  .reg .b16 %h<4>;\n  .reg .pred %p<4>;\n" + "\n".join(body) + "\n  ret;\n}\n")


@settings(max_examples=60, deadline=None)
@given(st.lists(instrs, min_size=1, max_size=24), st.lists(u32s, min_size=NREG, max_size=NREG),
       st.lists(u64s, min_size=NREG, max_size=NREG))
def test_straight_line_integer_ptx_matches_the_reference(prog, r32, r64):
    text = scalar_kernel(prog, r32, r64)
    diags = [d for d in ptx.check(text) if d.severity == "error"]
    assert not diags, (diags, text)
    m = pa.Machine()
    out = np.zeros(4 * NREG + 8 * NREG, dtype=np.uint8)
    g = m.register(out)
    ptx.Kernel(text).launch(m, block=1, params={"out": g})
    want32, want64 = ref_eval(prog, r32, r64)
    got32 = out[:4 * NREG].view(np.uint32).tolist()
    got64 = out[4 * NREG:].view(np.uint64).tolist()
    assert got32 == want32 and got64 == want64, text


# The same programs on the lanes of converged warps: each instruction runs once for the
# warp, as one loop over its lanes (the lanes whose guard holds; every lane of the warp
# at once when all of them do). Each lane starts from its own values and some
# instructions are guarded by predicates that hold on some lanes only: every lane's
# registers must be what the reference gives for that lane's own instructions.
GUARDS = ["", "@%q1 ", "@!%q1 ", "@%q2 ", "@!%q2 "]


def lane_guard(g, tid):
    q1, q2 = (tid & 5) != 0, tid < 13
    return {"": True, "@%q1 ": q1, "@!%q1 ": not q1, "@%q2 ": q2, "@!%q2 ": not q2}[g]


def lanes_kernel(prog, r32, r64, k32, k64):
    """Lane t's registers start as r32[i] ^ (t * k32[i]) and r64[i] ^ (t * k64[i])."""
    body = ["  mov.u32 %r7, %tid.x;", "  and.b32 %r8, %r7, 5;", "  setp.ne.u32 %q1, %r8, 0;",
            "  setp.lt.u32 %q2, %r7, 13;"]
    for i, v in enumerate(r32):
        body += [f"  mul.lo.u32 %r8, %r7, {k32[i]};", f"  xor.b32 %r{i}, %r8, {v};"]
    for i, v in enumerate(r64):
        body += ["  cvt.u64.u32 %rd10, %r7;", f"  mul.lo.u64 %rd10, %rd10, {k64[i]};",
                 f"  xor.b64 %rd{i}, %rd10, {v};"]
    body += preds_and_halves()
    body += ["  " + g + ptx_line(*ins) for g, ins in prog]
    body += ["  ld.param.u64 %rd9, [out];", "  mul.wide.u32 %rd10, %r7, " + str(12 * NREG) + ";",
             "  add.s64 %rd9, %rd9, %rd10;"]
    body += store_registers()
    return HEAD.format(target="sm_90a") + (
        ".visible .entry lanes(.param .u64 out)\n{\n  .reg .b32 %r<10>;\n  .reg .b64 %rd<12>;\n"
        "  .reg .b16 %h<4>;\n  .reg .pred %p<4>;\n  .reg .pred %q<3>;\n" + "\n".join(body) + "\n  ret;\n}\n")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(GUARDS), instrs), min_size=1, max_size=24),
       st.lists(u32s, min_size=NREG, max_size=NREG), st.lists(u64s, min_size=NREG, max_size=NREG),
       st.lists(st.integers(0, M32), min_size=NREG, max_size=NREG),
       st.lists(st.integers(0, M32), min_size=NREG, max_size=NREG), st.sampled_from([32, 23, 64, 45]),
       st.integers(0, 3))
def test_converged_warps_run_each_lanes_own_program(prog, r32, r64, k32, k64, nthreads, seed):
    text = lanes_kernel(prog, r32, r64, k32, k64)
    diags = [d for d in ptx.check(text) if d.severity == "error"]
    assert not diags, (diags, text)
    m = pa.Machine()
    out = np.zeros((nthreads, 4 * NREG + 8 * NREG), dtype=np.uint8)
    g = m.register(out)
    ptx.Kernel(text).launch(m, block=nthreads, params={"out": g}, seed=seed)
    for t in range(nthreads):
        mine = [ins for gd, ins in prog if lane_guard(gd, t)]
        want32, want64 = ref_eval(mine, [(v ^ (t * k)) & M32 for v, k in zip(r32, k32)],
                                  [(v ^ (t * k)) & M64 for v, k in zip(r64, k64)])
        got32 = out[t, :4 * NREG].view(np.uint32).tolist()
        got64 = out[t, 4 * NREG:].view(np.uint64).tolist()
        assert got32 == want32 and got64 == want64, (t, text)


# ---- warp collectives -----------------------------------------------------------------

WARP = HEAD.format(target="sm_90a") + """
.visible .entry warp(.param .u64 out)
{
  .reg .b32 %r<24>;
  .reg .b64 %rd<6>;
  .reg .pred %p<4>;
  .shared .align 16 .b8 tile[1024];
  mov.u32 %r1, %laneid;
  mov.u32 %r2, tile;
  // every lane writes 32 bytes: bytes i = lane * 32 + i hold (lane * 7 + i) & 255 (as words)
  shl.b32 %r3, %r1, 5;
  add.u32 %r4, %r2, %r3;
  mul.lo.u32 %r5, %r1, 0x01010101;
  st.shared.v4.u32 [%r4], {%r5, %r5, %r5, %r1};
  st.shared.v4.u32 [%r4+16], {%r1, %r5, %r1, %r5};
  bar.warp.sync -1;
  // ldmatrix.x4: lane l gives row address tile + l * 32 (+ 16 for odd lanes of the upper half)
  and.b32 %r6, %r1, 16;
  add.u32 %r7, %r4, %r6;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r8, %r9, %r10, %r11}, [%r7];
  shfl.sync.bfly.b32 %r12, %r1, 5, 31, -1;
  shfl.sync.idx.b32 %r13, %r1, 3, 31, -1;
  shfl.sync.down.b32 %r14|%p1, %r1, 4, 31, -1;
  shfl.sync.up.b32 %r15|%p2, %r1, 2, 0, -1;
  elect.sync %r16|%p3, -1;
  selp.u32 %r17, 1, 0, %p1;
  selp.u32 %r18, 1, 0, %p2;
  selp.u32 %r19, 1, 0, %p3;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 48;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v4.u32 [%rd3], {%r8, %r9, %r10, %r11};
  st.global.v4.u32 [%rd3+16], {%r12, %r13, %r14, %r15};
  st.global.v4.u32 [%rd3+32], {%r16, %r17, %r18, %r19};
  ret;
}
"""


def test_warp_collectives_match_their_definitions():
    from ptxasync import consumers
    m = pa.Machine()
    out = np.zeros((32, 12), np.uint32)
    g = m.register(out)
    ptx.Kernel(WARP).launch(m, block=32, params={"out": g})
    addrs = [lane * 32 + (lane & 16) for lane in range(32)]
    regs = consumers.ldmatrix(m.cta(0).smem, addrs, num=4)
    np.testing.assert_array_equal(out[:, :4], regs)
    lanes = np.arange(32)
    np.testing.assert_array_equal(out[:, 4], lanes ^ 5)
    np.testing.assert_array_equal(out[:, 5], np.full(32, 3))
    np.testing.assert_array_equal(out[:, 6], np.where(lanes + 4 <= 31, lanes + 4, lanes))
    np.testing.assert_array_equal(out[:, 7], np.where(lanes - 2 >= 0, lanes - 2, lanes))
    np.testing.assert_array_equal(out[:, 8], np.zeros(32))          # elect: lane 0 leads
    np.testing.assert_array_equal(out[:, 9], (lanes + 4 <= 31).astype(np.uint32))
    np.testing.assert_array_equal(out[:, 10], (lanes >= 2).astype(np.uint32))
    np.testing.assert_array_equal(out[:, 11], (lanes == 0).astype(np.uint32))


DIVERGE = HEAD.format(target="sm_90a") + """
.visible .entry diverge(.param .u64 out)
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  .reg .pred %p<4>;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 31;
  mov.u32 %r3, 0;
  mov.u32 %r4, 0;
  and.b32 %r5, %r2, 1;
  setp.eq.u32 %p1, %r5, 0;
@%p1 bra EVEN;
ODD:                              // odd lanes: r3 = 3 * lane, in lane steps of 3
  add.u32 %r3, %r3, 3;
  add.u32 %r4, %r4, 1;
  setp.lt.u32 %p2, %r4, %r2;
@%p2 bra ODD;
  bra MEET;
EVEN:                             // even lanes: r3 = lane * lane + 7
  mul.lo.u32 %r3, %r2, %r2;
  add.u32 %r3, %r3, 7;
MEET:
  bar.warp.sync -1;
  shfl.sync.bfly.b32 %r6, %r3, 1, 31, -1;
  xor.b32 %r7, %r2, 1;
  setp.lt.u32 %p3, %r7, 16;
  selp.u32 %r8, %r6, 0, %p3;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 8;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v2.u32 [%rd3], {%r3, %r8};
  ret;
}
"""


@pytest.mark.parametrize("seed", range(4))
def test_lanes_that_go_apart_run_their_own_paths_and_meet_again(seed):
    # a converged warp's lanes take different branches (odd lanes loop, even ones do not), run
    # apart, meet at bar.warp.sync and exchange values with shfl: each lane's own result
    m = pa.Machine()
    out = np.zeros((64, 2), np.uint32)
    g = m.register(out)
    st = ptx.Kernel(DIVERGE).launch(m, block=64, params={"out": g}, seed=seed)
    lane = np.arange(64) % 32
    own = np.where(lane % 2 == 1, 3 * lane, lane * lane + 7)
    partner = own[(np.arange(64) // 32) * 32 + (lane ^ 1)]
    np.testing.assert_array_equal(out[:, 0], own)
    np.testing.assert_array_equal(out[:, 1], np.where((lane ^ 1) < 16, partner, 0))
    # every lane's instructions count: 7 before the branch, then an odd lane l its loop (4 a
    # turn, l turns) and the bra, an even lane 2, and 10 from the meeting on
    want = sum(7 + (4 * int(l) + 1 if l % 2 else 2) + 10 for l in lane)
    assert st.instructions == want

CLUSTER = HEAD.format(target="sm_90a") + """
// a cluster of two CTAs: each thread 0 initialises its CTA's barrier; after the cluster
// barrier, rank 0 multicasts one box to both CTAs (ctaMask 0b11), each waits on its own
.visible .entry mc(.param .align 64 .b8 tmap[128])
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<2>;
  .reg .b16 %rs<2>;
  .reg .pred %p<4>;
  .shared .align 1024 .b8 buf[2048];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %cluster_ctarank;
  mov.u32 %r3, bar;
  mov.u32 %r4, buf;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra WAIT_CLUSTER;
  mbarrier.init.shared::cta.b64 [%r3], 1;
  fence.mbarrier_init.release.cluster;
  mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [%r3], 2048;
WAIT_CLUSTER:
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  setp.eq.u32 %p2, %r2, 0;
  not.pred %p3, %p1;
  and.pred %p3, %p2, %p3;
  mov.u32 %r5, 0;
  mov.u16 %rs1, 3;
  @%p3 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r4], [tmap, {%r5, %r5}], [%r3], %rs1;
  @%p1 bra DONE;
  mov.u32 %r6, 0;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], %r6;
  @!%p2 bra WAIT;
DONE:
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  ret;
}
"""


def test_cluster_multicast_reaches_both_ctas_as_through_the_api():
    text = CLUSTER
    assert ptx.check(text) == [], ptx.check(text)
    a = np.arange(64 * 32, dtype=np.uint16).reshape(32, 64)
    outs = []
    for via_ptx in (True, False):
        m = pa.Machine(ctas=2, smem_bytes=4096, policy="random", seed=2)
        g = m.register(a)
        tm = pa.TensorMap.tiled("u16", g.address, [64, 32], [128], [64, 16], swizzle="128B")
        if via_ptx:
            ptx.Kernel(text).launch(m, grid=2, block=64, cluster=2, params={"tmap": tm})
        else:
            bars = [m.cta(r).mbarrier(2048) for r in range(2)]
            for r, b in enumerate(bars):
                b.init(1, thread=0)
                b.arrive_expect_tx(2048, thread=0)
            m.cp_async_bulk_tensor_load(tm, [0, 0], m.cta(0).addr(0), bars[0].addr, cta=0,
                                        dst_space="shared::cluster", cta_mask=0b11)
            m.run()
        outs.append([m.cta(r).smem[:2048].copy() for r in range(2)])
        if via_ptx:
            assert m.races == [] and m.hazards == []
    for r in range(2):
        np.testing.assert_array_equal(outs[0][r], outs[1][r])
    assert outs[0][1].any()
