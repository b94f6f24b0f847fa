"""PTX forms for the tests: the probe's kernel wrapper, and instances of the generated
instruction forms (tools/ptx_tables.py) with the wrapper's registers as operands; the installed
ptxas that judge them (ptxasync.ptx.ptxas_installed: the nvidia-cuda-nvcc wheel's, PATH's) and
their verdicts, a crash or an internal error told apart from a rejection."""
import os
import random
import re
import signal
import subprocess
import tempfile
from typing import NamedTuple, Optional

import pytest

from ptxasync import ptx

import ptx_tables  # noqa: E402  (tools/ is on the path: tests/conftest.py)

# One form alone in a minimal kernel; the form is line 21 as in the assembler probe's messages.
WRAPPER = """.version {version}
.target {target}
.address_size 64

.visible .entry k(
\t.param .u64 k_param_0,
\t.param .u64 k_param_1,
\t.param .u32 k_param_2
)
{{
\t.reg .pred \t%p<4>;
\t.reg .b16 \t%rs<8>;
\t.reg .b32 \t%r<16>;
\t.reg .b64 \t%rd<8>;
\t.shared .align 8 .b8 smem[1024];

\tld.param.u64 \t%rd1, [k_param_0];
\tld.param.u64 \t%rd2, [k_param_1];
\tld.param.u32 \t%r8, [k_param_2];
\tmov.u32 \t%r1, smem;
\t{form}
\tret;
}}
"""
FORM_LINE = 21

# a module that is its header and nothing else to speak of
HEADER_MODULE = ".version {version}\n.target {target}\n.address_size 64\n\n.visible .entry k()\n{{\n}}\n"

TARGETS = ["sm_80", "sm_90", "sm_90a", "sm_100a", "sm_100f", "sm_103a", "sm_107a", "sm_110f", "sm_120a",
           "sm_121a"]
VERSIONS = ["7.8", "8.0", "8.3", "8.6", "8.7", "8.8", "9.0", "9.2", "9.4", "9.5"]

# the forms the seed documents define (the async data movement, mbarriers, fences)
SEED_ROOTS = {
    "cp.async", "cp.async.commit_group", "cp.async.wait_group", "cp.async.wait_all",
    "cp.async.bulk", "cp.reduce.async.bulk", "cp.async.bulk.prefetch", "cp.async.bulk.tensor",
    "cp.reduce.async.bulk.tensor", "cp.async.bulk.prefetch.tensor", "cp.async.bulk.commit_group",
    "cp.async.bulk.wait_group", "tensormap.replace", "st.async", "st.bulk", "mbarrier.init",
    "mbarrier.inval", "mbarrier.expect_tx", "mbarrier.complete_tx", "mbarrier.arrive",
    "mbarrier.arrive_drop", "cp.async.mbarrier.arrive", "mbarrier.test_wait", "mbarrier.try_wait",
    "fence.proxy", "fence.mbarrier_init",
}


def module(form, target="sm_90a", version="9.0"):
    return WRAPPER.format(form=form, target=target, version=version)


def seed_forms():
    return [f for f in ptx_tables.collect() if f["root"] in SEED_ROOTS]


def _operand(kind, name, rnd, dim, chosen=()):
    if kind == "A":
        # global addresses in 64-bit registers, shared ones in 32-bit registers or the variable,
        # generic ones in 64-bit registers (as compiled kernels write them)
        space = ""
        if "src" in name:
            space = ".global" if (".global" in chosen and "cp.async" not in name) else ""
        if ".global" in chosen and ("dst" in name or name in ("[a]", "[addr]", "[srcMem]", "[src]")):
            space = ".global"
        if name in ("[srcMem]", "[src]") and any(c.startswith(".global") for c in chosen) and \
                not any(c == ".shared::cta" for c in chosen[chosen.index(".global") + 1:] if ".global" in chosen):
            space = ".global"
        if space == ".global":
            return rnd.choice(["[%rd2]", "[%rd2+16]"])
        if any(c.startswith(".shared") for c in chosen):
            return rnd.choice(["[%r1]", "[%r2]", "[smem]", "[%r1+16]", "[%rd2]"])
        return rnd.choice(["[%rd2]", "[%rd2+16]", "[%r1]"])
    if kind == "T":
        n = dim if rnd.random() < 0.9 else rnd.randint(1, 5)
        return "[%rd1, {" + ", ".join("%%r%d" % (3 + i) for i in range(n)) + "}]"
    if kind == "TS":            # [texture, sampler, {coordinates}]
        return "[%rd1, %rd2, {" + ", ".join("%%r%d" % (3 + i) for i in range(max(dim, 2))) + "}]"
    if kind == "V":
        n = max(1, dim - 2) if rnd.random() < 0.8 else rnd.randint(1, 3)
        return "{" + ", ".join("%%rs%d" % (1 + i) for i in range(n)) + "}"
    if kind == "S32":
        return rnd.choice(["%r8", "%r8", "16", "%rd3" if rnd.random() < 0.2 else "%r9"])
    if kind == "R64":
        return "%rd3"
    if kind == "R16":
        return "%rs1"
    if kind == "P":
        return rnd.choice(["%p1", "3"])
    if kind == "PD":
        return "%p1"
    if kind == "R64_":
        return rnd.choice(["%rd4", "_"])
    if kind == "_":
        return "_"
    if kind == "I":
        return rnd.choice(["4", "8", "16", "0", "1", "12"])
    if kind == "I0":
        return rnd.choice(["0", "0", "1"])
    if name.strip() == "16":
        return rnd.choice(["16", "16", "8"])
    return rnd.choice(["%r8", "1"])


def instance(form, rnd, mutate=False):
    """A text of `form`: every required qualifier, some optional ones, operands by kind;
    `mutate` may reorder qualifiers, drop or swap one, or vary an operand."""
    slots = form["slots"]
    chosen = []
    dim = 0
    for name, vals, opt, grp in slots:
        if not vals:
            continue
        if opt and rnd.random() < 0.5:
            continue
        v = rnd.choice(vals)
        if name == "dim":
            dim = int(v[1])
        chosen.append(v)
    # optional groups ({.sem.scope}) are all-or-nothing in the template
    if mutate:
        r = rnd.random()
        if r < 0.25 and len(chosen) > 1:
            i = rnd.randrange(len(chosen))
            j = rnd.randrange(len(chosen))
            chosen[i], chosen[j] = chosen[j], chosen[i]
        elif r < 0.4 and chosen:
            chosen.pop(rnd.randrange(len(chosen)))
        elif r < 0.55 and chosen:
            others = [v for _, vals, _, _ in slots for v in vals]
            chosen[rnd.randrange(len(chosen))] = rnd.choice(others)
    ops = []
    for name, opt in form["operands"]:
        kind = ptx_tables.kind_of(name)
        q = ptx_tables.OPERAND_QUALIFIER.get(name.strip())
        if opt:
            if q and q not in chosen:
                continue
            if not q and rnd.random() < 0.5:
                continue
        ops.append(_operand(kind, name, rnd, dim, chosen))
    if mutate and ops and rnd.random() < 0.15:
        ops.pop()
    text = form["root"] + "".join(chosen)
    return text + (" " + ", ".join(ops) if ops else "") + ";"


def cases(n, seed):
    """n (instruction, target, version) of the seed forms, valid or mutated, from `seed`."""
    rnd = random.Random(seed)
    forms = seed_forms()
    out = []
    for _ in range(n):
        form, target, version = rnd.choice(forms), rnd.choice(TARGETS), rnd.choice(VERSIONS)
        mutate = rnd.random() < 0.5
        out.append((instance(form, random.Random(rnd.getrandbits(32)), mutate=mutate), target, version))
    return out


HOW_TO_INSTALL = ("pip install nvidia-cuda-nvcc==13.5.37 (the test extra) brings ptxas 13.5; "
                  "ptxas 13.0 is CUDA 13.0's, found on PATH")


def ptxas_path():
    """An installed ptxas (the newest found), or None."""
    return ptx.ptxas_path()


def judges():
    """pytest parameters (release, path), one per ptxas release whose verdicts ptx.check gives;
    a release not installed is a skip that says so."""
    found = ptx.ptxas_installed()
    return [pytest.param(r, found[r], id="ptxas" + r) if r in found else
            pytest.param(r, None, id="ptxas" + r, marks=pytest.mark.skip(
                reason=f"ptxas {r} is not installed ({HOW_TO_INSTALL})"))
            for r in ptx.PTXAS_RELEASES]


def arch_args(target):
    """How a module is assembled for its .target: -arch=<target>, or, for a target below sm_75
    (which no -arch of ptxas 13 takes), ptxas's default sm_75."""
    m = re.fullmatch(r"sm_(\d+)[af]?", target)
    return [] if m and int(m.group(1)) < 75 else ["-arch=" + target]


class Verdict(NamedTuple):
    accepted: bool
    message: str
    crash: Optional[str]        # why ptxas gave no verdict (it died, an internal error), or None


_INTERNAL = re.compile(r"internal (compiler )?error", re.IGNORECASE)


def ptxas_verdict(text, target, path=None):
    path = path or ptxas_path()
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        with open(src, "w") as fh:
            fh.write(text)
        # ptxas runs as it would for a user: without the sanitizer a test run may preload
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        p = subprocess.run([path, *arch_args(target), src, "-o", os.path.join(d, "k.cubin")],
                           capture_output=True, text=True, env=env)
    message = (p.stdout + p.stderr).replace(src, "k.ptx")
    name = f"ptxas {ptx.ptxas_release(path)}"
    crash = None
    if p.returncode < 0:
        try:
            sig = signal.Signals(-p.returncode).name
        except ValueError:
            sig = str(-p.returncode)
        crash = f"{name} died of {sig}"
    elif _INTERNAL.search(message):
        crash = f"{name} reported an internal error: " + " ".join(message.split())
    elif p.returncode not in (0, 255):         # ptxas exits 255 on an error
        crash = f"{name} exited with status {p.returncode}: " + " ".join(message.split()[:20])
    return Verdict(p.returncode == 0, message, crash)


def ptxas_accepts(text, target, path=None):
    """(assembled, ptxas's message) for `text` assembled for `target`; a crash or an internal
    error of ptxas is no verdict: the test skips, saying so."""
    v = ptxas_verdict(text, target, path)
    if v.crash:
        pytest.skip(f"{v.crash} (for {target}): no verdict")
    return v.accepted, v.message


# ---- the chapter's loads, stores, cache hints and address queries (9.7.9.8-9.7.9.24) ----

# A wrapper with a register file of every class and a variable in every state space; the form is
# line MEM_FORM_LINE.
MEM_WRAPPER = """.version {version}
.target {target}
.address_size 64
.global .align 16 .b8 gbuf[256];
.const .align 16 .b8 cbuf[256];

.visible .entry k(
\t.param .u64 k_param_0,
\t.param .u64 k_param_1,
\t.param .u32 k_param_2
)
{{
\t.reg .pred \t%p<4>;
\t.reg .b16 \t%rs<12>;
\t.reg .b32 \t%r<16>;
\t.reg .b64 \t%rd<12>;
\t.reg .f32 \t%f<12>;
\t.reg .f64 \t%fd<12>;
\t.reg .b128 \t%q<4>;
\t.reg .f16 \t%h<12>;
\t.reg .s32 \t%sr<4>;
\t.shared .align 16 .b8 smem[1024];
\t.local .align 16 .b8 lbuf[64];

\tld.param.u64 \t%rd1, [k_param_0];
\tld.param.u64 \t%rd2, [k_param_1];
\tld.param.u32 \t%r8, [k_param_2];
\tmov.u32 \t%r1, smem;
\t{form}
\tret;
}}
"""
MEM_FORM_LINE = 32
MEM_TARGETS = ["sm_80", "sm_90", "sm_90a", "sm_100a"]
MEM_VERSIONS = ["7.4", "7.8", "8.0", "8.3", "8.6", "8.8", "9.0"]

MEM_ROOTS = {"ld", "st", "ld.global.nc", "ldu", "multimem.ld_reduce", "multimem.st", "multimem.red",
             "prefetch", "prefetchu", "applypriority", "discard", "createpolicy", "isspacep", "cvta",
             "mapa", "getctarank"}


def mem_module(form, target="sm_90a", version="9.0"):
    text = MEM_WRAPPER.format(form=form, target=target, version=version)
    if float(version) < 8.3:            # .b128 registers need PTX 8.3: a blank line keeps the numbering
        text = text.replace("\t.reg .b128 \t%q<4>;", "")
    return text


def mem_forms():
    return [f for f in ptx_tables.collect() if f["root"] in MEM_ROOTS]


_BITS = {"b8": 8, "u8": 8, "s8": 8, "b16": 16, "u16": 16, "s16": 16, "f16": 16, "bf16": 16,
         "e4m3": 8, "e5m2": 8, "e4m3x2": 16, "e5m2x2": 16, "e4m3x4": 32, "e5m2x4": 32,
         "b32": 32, "u32": 32, "s32": 32, "f32": 32, "f16x2": 32, "bf16x2": 32,
         "b64": 64, "u64": 64, "s64": 64, "f64": 64, "b128": 128}


def _value_reg(t, rnd, i, wrong=False):
    """A register for one element of type t (its own class; `wrong`: another one)."""
    regs = {"f32": "%f", "f64": "%fd", "b128": "%q", "f16": "%h", "bf16": "%rs"}
    bits = _BITS.get(t, 32)
    cls = regs.get(t) or {8: "%rs", 16: "%rs", 32: "%r", 64: "%rd", 128: "%q"}[bits]
    if wrong:
        cls = rnd.choice([c for c in ["%rs", "%r", "%rd", "%f", "%fd", "%q", "%h", "%p"] if c != cls])
    n = {"%q": 3, "%p": 3}.get(cls, 11)
    return "%s%d" % (cls, 1 + i % n)


def _value(t, vec, rnd, wrong, sinks, imm):
    n = int(vec[2:]) if vec else 1
    els = []
    for i in range(n):
        r = rnd.random()
        if sinks and r < 0.2:
            els.append("_")
        elif imm and r < 0.4:
            els.append(rnd.choice(["1", "0", "2.5", "0f3F800000", "-1"]))
        else:
            els.append(_value_reg(t, rnd, 3 + i, wrong and i == 0))
    return "{" + ", ".join(els) + "}" if vec else els[0]


def _address(space, rnd, root):
    if root in ("cvta", "mapa", "getctarank", "isspacep"):
        return rnd.choice(["%rd1", "%rd1", "%r1"])
    if space.startswith(".shared"):
        return rnd.choice(["[%r1]", "[smem]", "[smem+8]", "[%r1+4]", "[%rd2]"])
    if space == ".global":
        return rnd.choice(["[%rd1]", "[%rd1+8]", "[%rd1+-8]", "[gbuf]", "[gbuf+16]", "gbuf[16]"])
    if space == ".local":
        return rnd.choice(["[lbuf]", "[lbuf+4]", "[%r1]", "[16]"])
    if space == ".const":
        return rnd.choice(["[cbuf]", "[cbuf+4]", "[%rd1]"])
    if space.startswith(".param"):
        return rnd.choice(["[k_param_2]", "[%rd1]"])
    return rnd.choice(["[%rd1]", "[%rd1+16]", "[gbuf]", "[smem]", "[lbuf]", "[%r1]", "[16]"])


def mem_instance(form, rnd, mutate=False):
    """A text of a memory form: what instance() does, with operands that fit the chosen type,
    vector and state space (an element of the wrong class, a wrong size, when mutating)."""
    slots = form["slots"]
    chosen = []
    groups_on = {}
    for name, vals, opt, grp in slots:
        if opt and grp and grp in groups_on:
            on = groups_on[grp]
        else:
            on = not opt or rnd.random() < 0.4
            if grp:
                groups_on[grp] = on
        if on and vals:
            chosen.append(rnd.choice(vals))
    mode = None
    if mutate:
        r = rnd.random()
        if r < 0.2 and len(chosen) > 1:
            i, j = rnd.randrange(len(chosen)), rnd.randrange(len(chosen))
            chosen[i], chosen[j] = chosen[j], chosen[i]
        elif r < 0.35 and chosen:
            chosen.pop(rnd.randrange(len(chosen)))
        elif r < 0.6 and chosen:
            others = [v for f2 in mem_forms() if f2["root"] == form["root"] for _, vals, _, _ in f2["slots"]
                      for v in vals]
            chosen[rnd.randrange(len(chosen))] = rnd.choice(others)
        elif r < 0.8:
            mode = "wrong"
        else:
            mode = "operand"
    types = [c[1:] for c in chosen if c[1:] in _BITS]
    t = types[-1] if types else "b32"
    vec = next((c for c in chosen if c in (".v2", ".v4", ".v8")), "")
    space = next((c for c in chosen if c.split("::")[0] in (".global", ".shared", ".local", ".const", ".param")), "")
    root = form["root"]
    ops = []
    for name, opt in form["operands"]:
        n = name.strip()
        q = ptx_tables.OPERAND_QUALIFIER.get(n)
        if opt:
            if q and q not in chosen:
                continue
            if not q and (n == ".unified" or rnd.random() < 0.5):
                continue
        if n in ("d",) and root in ("ld", "ldu", "ld.global.nc", "multimem.ld_reduce"):
            ops.append(_value(t, vec, rnd, mode == "wrong", rnd.random() < 0.3, False))
        elif n == "b" and root in ("st", "multimem.st", "multimem.red"):
            ops.append(_value(t, vec, rnd, mode == "wrong", rnd.random() < 0.1, True))
        elif n.startswith("["):
            ops.append(_address(space, rnd, root))
        elif n == "cache-policy":
            ops.append("%r3" if mode == "wrong" else "%rd3")
        elif n == "size":
            ops.append(rnd.choice(["64", "%r3"]) if mode == "wrong" else "128")
        elif n in ("primary-size", "total-size"):
            ops.append(rnd.choice(["%r3", "4096", "0x100000", "%rd3"] if mode == "wrong" else ["%r3", "4096"]))
        elif n == "fraction":
            ops.append(rnd.choice(["0.5", "1.0", "0f3F000000", "%f3"] + (["2", "%r3"] if mode == "wrong" else [])))
        elif n == "access-property":
            ops.append("%r3" if mode == "wrong" else "%rd4")
        elif n == "p" and root == "isspacep":
            ops.append("%r3" if mode == "wrong" else "%p1")
        elif n in ("p", "d") and root in ("cvta", "mapa", "getctarank"):
            w = 64 if chosen and ".u64" in chosen else 32
            if root == "getctarank":
                w = 32
            if mode == "wrong":
                w = 96 - w
            ops.append("%rd3" if w == 64 else "%r3")
        elif n in ("a",):
            w = 64 if ".u64" in chosen or root == "isspacep" else 32
            if mode == "wrong":
                w = 96 - w
            ops.append("%rd1" if w == 64 else "%r1")
        elif n in ("var", "sh"):
            ops.append(rnd.choice(["gbuf", "smem", "cbuf", "lbuf"]))
        elif n in ("var+imm",):
            ops.append(rnd.choice(["gbuf+8", "smem+4", "cbuf+4", "lbuf+4"]))
        elif n == "+":
            continue
        elif n == "imm":
            ops[-1] += "+4"
        elif n == "b":
            ops.append(rnd.choice(["%r8", "1"]))
        else:
            ops.append("%r8")
    if mode == "operand" and ops:
        r = rnd.random()
        if r < 0.3:
            ops.pop()
        elif r < 0.6:
            ops.append("%rd3")
        else:
            i = rnd.randrange(len(ops))
            ops[i] = rnd.choice(["%r3", "%rd3", "%p1", "[%rd1]", "%f3", "5"])
    text = form["root"] + "".join(chosen)
    return text + (" " + ", ".join(ops) if ops else "") + ";"
