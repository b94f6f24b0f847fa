"""Every cvt / cvt.pack form recorded on the H200, run through the semantics library.

    python tools/isa_cvt_all.py [--golden DIR] [--lib PATH] [-v] [FORM ...]

Builds csrc/core/sem/*.c into a shared library (gcc, in a temporary folder) unless --lib names
one, parses each form's instruction into a sem_ctl, runs the lane function on the recorded
inputs and compares the destination bits with the H200's (golden/isa/README.md says how the
recordings were made). Prints one line per form that differs (and with -v every form) and the
totals: forms exact, elements exact.

The test (tests/sem/test_cvt.py) uses the same parser and runner on a vendored subset.
"""
import argparse
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = "/work/shared/golden/isa"

# sem.h's enums, by position (kept in step with csrc/core/sem/sem.h).
TYPES = ["", "pred", "b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64",
         "s8", "s16", "s32", "s64", "f16", "f16x2", "bf16", "bf16x2", "tf32", "f32", "f64",
         "e4m3", "e5m2", "e4m3x2", "e5m2x2", "e4m3x4", "e5m2x4",
         "e2m1x2", "e2m1x4", "e2m3x2", "e2m3x4", "e3m2x2", "e3m2x4", "ue8m0x2", "s2f6x2"]
T = {n: i for i, n in enumerate(TYPES)}
RND = {"rn": 1, "rz": 2, "rm": 3, "rp": 4, "rna": 5, "rs": 6,
       "rni": 7, "rzi": 8, "rmi": 9, "rpi": 10}
FLAGS = {"ftz": 1 << 0, "sat": 1 << 1, "relu": 1 << 2, "satfinite": 1 << 3}
SCALED = "scaled::n2::ue8m0"       # cvt's s2f6 scale-factor operand: aux = 1 (cvt.h)
OP_CVT, OP_CVT_PACK = 21, 22
# cvt.pack's narrow types: sem_type has no u2/s2/u4/s4, so the destination is
# the 8-bit type of its signedness and aux holds the element's bits (cvt.h).
PACK_NARROW = {"u2": ("u8", 2), "s2": ("s8", 2), "u4": ("u8", 4), "s4": ("s8", 4)}


class SemCtl(ctypes.Structure):
    _fields_ = [("op", ctypes.c_uint8), ("dt", ctypes.c_uint8), ("at", ctypes.c_uint8),
                ("bt", ctypes.c_uint8), ("rnd", ctypes.c_uint8), ("aux", ctypes.c_uint8),
                ("aux2", ctypes.c_uint8), ("pad", ctypes.c_uint8), ("flags", ctypes.c_uint32),
                ("imm", ctypes.c_uint32)]


class SemImpl(ctypes.Structure):
    _fields_ = [("fn", ctypes.c_void_p), ("wd", ctypes.c_uint8 * 2), ("ws", ctypes.c_uint8 * 4)]


SEM_FN = ctypes.CFUNCTYPE(None, ctypes.POINTER(SemCtl), ctypes.POINTER(ctypes.c_void_p * 2),
                          ctypes.POINTER(ctypes.c_void_p * 4), ctypes.c_size_t)


def parse(text):
    """`cvt{.rnd}{.ftz}{.sat}{.relu}{.satfinite}.dtype.atype` or
    `cvt.pack.sat.dtype.atype{.btype}` (qualifiers in any order) -> SemCtl."""
    head = text.strip().split()[0]
    scaled = "." + SCALED in head
    parts = head.replace("." + SCALED, "").split(".")
    if parts[0] != "cvt":
        raise ValueError("not a cvt: %r" % text)
    k = SemCtl()
    k.op = OP_CVT
    rest = parts[1:]
    if rest and rest[0] == "pack":
        k.op = OP_CVT_PACK
        rest = rest[1:]
    types = []
    for q in rest:
        if q in RND:
            k.rnd = RND[q]
        elif q in FLAGS:
            k.flags |= FLAGS[q]
        elif q in T or q in PACK_NARROW:
            types.append(q)
        else:
            raise ValueError("unknown qualifier .%s in %r" % (q, text))
    if len(types) < 2:
        raise ValueError("cvt needs two types: %r" % text)
    dt = types[0]
    if scaled:
        k.aux = 1
    if dt in PACK_NARROW:
        dt, k.aux = PACK_NARROW[dt]
    k.dt, k.at = T[dt], T[types[1]]
    if len(types) > 2:
        k.bt = T[types[2]]
    return k


def build(outdir):
    """Compile the semantics library into outdir; the path of the .so."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if not cc:
        raise RuntimeError("no C compiler (gcc) on PATH")
    src = os.path.join(ROOT, "csrc", "core", "sem")
    files = sorted(os.path.join(src, f) for f in os.listdir(src) if f.endswith(".c"))
    out = os.path.join(outdir, "libsem.so")
    subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror",
                    "-I" + os.path.join(ROOT, "csrc", "core"), "-shared", "-fPIC",
                    *files, "-o", out, "-lm"], check=True)
    return out


class Sem:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.sem_resolve.restype = ctypes.c_int
        self.lib.sem_resolve.argtypes = [ctypes.POINTER(SemCtl), ctypes.POINTER(SemImpl),
                                         ctypes.POINTER(ctypes.c_char_p)]
        self.lib.sem_type_from_name.argtypes = [ctypes.c_char_p]
        self.lib.sem_op_from_name.argtypes = [ctypes.c_char_p]
        for name, i in T.items():                 # the enums above are sem.h's
            if name and self.lib.sem_type_from_name(name.encode()) != i:
                raise RuntimeError("sem.h's type .%s is not %d" % (name, i))
        if (self.lib.sem_op_from_name(b"cvt"), self.lib.sem_op_from_name(b"cvt.pack")) != (
                OP_CVT, OP_CVT_PACK):
            raise RuntimeError("sem.h's cvt operations moved")

    def resolve(self, k):
        impl = SemImpl()
        why = ctypes.c_char_p()
        rc = self.lib.sem_resolve(ctypes.byref(k), ctypes.byref(impl), ctypes.byref(why))
        return rc, impl, (why.value or b"").decode()

    def run(self, k, srcs, d1=None):
        """Run k on lanes: srcs a list of integer arrays (register values); d1 what d[1]
        holds before the call (the four-element .rs forms read rbits there, cvt.h).
        Returns (destination array as uint64, impl) or raises with the resolver's reason."""
        rc, impl, why = self.resolve(k)
        if rc != 0:
            raise NotImplementedError(why)
        n = len(srcs[0])
        s = [np.ascontiguousarray(np.asarray(x).astype(np.uint64)) for x in srcs]
        while len(s) < 4:
            s.append(np.zeros(n, np.uint64))
        d = [np.zeros(n, np.uint64),
             np.zeros(n, np.uint64) if d1 is None else np.asarray(d1).astype(np.uint64)]
        dp = (ctypes.c_void_p * 2)(*[x.ctypes.data for x in d])
        sp = (ctypes.c_void_p * 4)(*[x.ctypes.data for x in s])
        SEM_FN(impl.fn)(ctypes.byref(k), ctypes.byref(dp), ctypes.byref(sp), n)
        return d[0], impl


def load_golden(golden=GOLDEN):
    """(forms, inputs, outputs by form index)."""
    forms = json.load(open(os.path.join(golden, "cvt_forms.json")))
    inputs = dict(np.load(os.path.join(golden, "cvt_inputs.npz")))
    outs = {}
    for f in sorted(os.listdir(golden)):
        if f.startswith(("cvt_ex_", "cvt_pub_")) and f.endswith(".npz"):
            z = np.load(os.path.join(golden, f))
            for key in z.files:
                outs[int(key)] = z[key]
    return forms, inputs, outs


def form_inputs(form, inputs, n_out):
    """The source registers of a form, as golden/isa/README.md says they were drawn."""
    srcs = form["srcs"]
    if n_out == 65536:
        name = "exf16x2" if form["at"] == "f16x2" else "ex16"
        return [inputs[name]]
    out = []
    for j, w in enumerate(srcs):
        base = inputs["pub_s%d" % w]
        out.append(base if j == 0 else base[inputs["pub_pb" if j == 1 else "pub_pc"]])
    return out


def check_form(sem, form, srcs, want):
    """(exact elements, total, first differing index or None, got array or reason)."""
    k = parse(form["instr"])
    try:
        got, impl = sem.run(k, srcs)
    except NotImplementedError as e:
        return 0, len(want), 0, str(e)
    if impl.wd[0] != form["d"] or list(impl.ws[:len(form["srcs"])]) != form["srcs"]:
        return 0, len(want), 0, "widths d %d s %s, the recording has d %d s %s" % (
            impl.wd[0], list(impl.ws[:3]), form["d"], form["srcs"])
    want = want.astype(np.uint64)
    ok = got == want
    bad = np.flatnonzero(~ok)
    return int(ok.sum()), len(want), (int(bad[0]) if len(bad) else None), got


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--golden", default=GOLDEN)
    ap.add_argument("--lib")
    ap.add_argument("-v", action="store_true")
    ap.add_argument("--show", type=int, default=3, help="differing elements shown per form")
    ap.add_argument("forms", nargs="*", help="form indices or instruction prefixes")
    a = ap.parse_args(argv)
    tmp = None
    if not a.lib:
        tmp = tempfile.mkdtemp()
        a.lib = build(tmp)
    sem = Sem(a.lib)
    forms, inputs, outs = load_golden(a.golden)
    sel = range(len(forms))
    if a.forms:
        sel = [i for i in sel if str(i) in a.forms or any(forms[i]["ptx"] == f for f in a.forms)]
    nf = ne = tot = 0
    for i in sel:
        f = forms[i]
        want = outs[i]
        srcs = form_inputs(f, inputs, len(want))
        good, n, first, got = check_form(sem, f, srcs, want)
        nf += good == n
        ne += good
        tot += n
        if good != n or a.v:
            print("%4d %-44s %6d/%d" % (i, f["ptx"], good, n), end="")
            if isinstance(got, str):
                print("  " + got)
                continue
            print()
            if good != n:
                bad = np.flatnonzero(got != want.astype(np.uint64))[:a.show]
                for j in bad:
                    print("       in %s -> want %#x got %#x" % (
                        " ".join("%#x" % int(s[j]) for s in srcs), int(want[j]), int(got[j])))
    print("forms exact %d/%d, elements %d/%d" % (nf, len(sel), ne, tot))
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if nf == len(sel) else 1


if __name__ == "__main__":
    sys.exit(main())
