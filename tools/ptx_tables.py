#!/usr/bin/env python3
"""Generate csrc/core/ptx/text/tables.c from the PTX ISA syntax blocks.

Reads the instruction sections of tools/ptx_spec/*.md (copies of the spec pack's PTX text), takes
each section's Syntax block (templates such as
``cp.async.bulk.dst.src.completion_mechanism{.level::cache_hint} [dstMem], [srcMem], size {, cache-policy}``
with their ``.name = { ... }`` value sets) and its ISA notes ("Introduced in PTX ISA version 8.0",
"Requires `sm_90` or higher", "Support for `.x` ... requires `sm_100` or higher"), and writes one
C array entry per template: the root opcode, the qualifier slots (value set, optional or not), the
operand list, and the PTX version / target each form and each qualifier needs.

The instructions a kernel body needs around the copies (integer arithmetic, setp, bra, ...) are not
in the spec pack; BODY below lists their syntax in the same template language, with the versions
of the PTX ISA chapters they come from.

Run:  python tools/ptx_tables.py          (rewrites csrc/core/ptx/text/tables.c)
      python tools/ptx_tables.py --check  (exit 1 if the checked-in file differs)
"""
import os
import re
import sys

import ptx_atom_rows
import ptx_rows

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SPEC = os.path.join(HERE, "ptx_spec")
OUT = os.path.join(ROOT, "csrc", "core", "ptx", "text", "tables.c")

# sections of ptx-data-movement.md whose syntax becomes a form (by instruction name)
DATA_MOVEMENT = [
    "cp.async", "cp.async.commit_group", "cp.async.wait_group", "cp.async.bulk",
    "cp.reduce.async.bulk", "cp.async.bulk.prefetch", "cp.async.bulk.tensor",
    "cp.reduce.async.bulk.tensor", "cp.async.bulk.prefetch.tensor", "cp.async.bulk.commit_group",
    "cp.async.bulk.wait_group", "tensormap.replace", "st.async", "st.bulk", "mov", "shfl.sync",
    "ld", "st", "cvta", "mapa", "prefetch", "isspacep",
    # the rest of the chapter's loads, stores, cache hints and address queries (9.7.9.9-9.7.9.24)
    "ld.global.nc", "ldu", "multimem.ld_reduce", "multimem.st", "multimem.red", "prefetchu",
    "applypriority", "discard", "createpolicy", "getctarank",
]
MBARRIER = [
    "mbarrier.init", "mbarrier.inval", "mbarrier.expect_tx", "mbarrier.complete_tx",
    "mbarrier.arrive", "mbarrier.arrive_drop", "cp.async.mbarrier.arrive",
    "mbarrier.test_wait", "mbarrier.try_wait", "mbarrier.pending_count",
]

# mbarrier.md states the ISA notes as a summary line per instruction ("PTX 7.0 (`sm_80`); `.expect_tx`,
# `::cluster`, `.cluster` scope: PTX 8.0 / `sm_90`; `.relaxed`: PTX 8.6", "`test_wait`: PTX 7.0/`sm_80`;
# `.parity`: PTX 7.1; `try_wait`: PTX 7.8/`sm_90`"); here they are, per instruction
_CLUSTER = [([".expect_tx"], 80, 90), ([".shared::cluster"], 80, 90), ([".cluster"], 80, 90),
            ([".relaxed"], 86, 90), ([".release"], 80, 0)]   # ptxas: ".release ... requires PTX 8.0"
MBARRIER_NOTES = {
    "mbarrier.init": (70, 80, []), "mbarrier.inval": (70, 80, []),
    "mbarrier.expect_tx": (80, 90, []), "mbarrier.complete_tx": (80, 90, []),
    "mbarrier.arrive": (70, 80, _CLUSTER), "mbarrier.arrive_drop": (70, 80, _CLUSTER),
    "cp.async.mbarrier.arrive": (70, 80, []),
    "mbarrier.test_wait": (70, 80, [([".parity"], 71, 0), ([".relaxed"], 86, 90), ([".cluster"], 80, 90),
                                    ([".acquire"], 80, 0)]),
    "mbarrier.try_wait": (78, 90, [([".relaxed"], 86, 90), ([".acquire"], 80, 90), ([".cta"], 80, 90),
                                   ([".cluster"], 80, 90)]),
    "mbarrier.pending_count": (70, 80, []),
}

# The ISA notes of ld, st and ld.global.nc name qualifier groups (".level1::eviction_priority",
# "::cta sub-qualifier") rather than the values; here they are per value: (value, PTX version x10,
# sm), from the sections' "PTX ISA Notes" and "Target ISA Notes"
_EVICT_L1 = [(".L1::" + e, 74, 70) for e in ("evict_normal", "evict_unchanged", "evict_first", "evict_last",
                                             "no_allocate")]
_EVICT_L2 = [(".L2::" + e, 88, 100) for e in ("evict_normal", "evict_first", "evict_last")]
_HINTS = _EVICT_L1 + _EVICT_L2 + [(".L2::cache_hint", 74, 80), (".L2::64B", 74, 75), (".L2::128B", 74, 75),
                                  (".L2::256B", 74, 80)]
_SPACES = [(".shared::cta", 78, 30), (".shared::cluster", 78, 90), (".param::entry", 83, 0),
           (".param::func", 83, 0)]
_SEMS = [(q, 60, 70) for q in (".weak", ".relaxed", ".acquire", ".release", ".cta", ".gpu", ".sys")] + \
    [(".cluster", 78, 90), (".mmio", 82, 70), (".b128", 83, 70)]
QUALIFIER_NOTES = {
    "ld": _HINTS + _SPACES + _SEMS, "st": _HINTS + _SPACES + _SEMS, "ld.global.nc": _HINTS + [(".b128", 83, 70)],
    "ldu": [(".b128", 83, 70)],
    "prefetch": [(".L2::evict_last", 74, 80), (".L2::evict_normal", 74, 80)],
    "cvta": [(".shared::cta", 78, 30), (".shared::cluster", 78, 90), (".param", 77, 70), (".param::entry", 83, 70)],
    "isspacep": [(".shared::cta", 78, 30), (".shared::cluster", 78, 90), (".param", 77, 70),
                 (".param::entry", 83, 70), (".const", 31, 0)],
}

# Instructions outside the spec pack (PTX ISA 9.1 chapters 9.7.1-9.7.13), same template language.
# (syntax, PTX version, sm) ; the version/sm are those of the ISA notes of each chapter.
BODY = [
    ("bra{.uni} tgt;", "1.0", 20),
    # control and hints (ptxas 13.0 verdicts: sm_80 from 7.x, griddepcontrol from sm_90)
    ("trap;", "1.0", 20),
    ("brkpt;", "1.1", 20),
    ("nanosleep.u32 t;", "6.3", 70),
    ("griddepcontrol.action;  .action = { .launch_dependents, .wait }", "7.8", 90),
    ("membar.level;  .level = { .cta, .gl, .sys }", "1.4", 20),
    ("ret{.uni};", "1.0", 20),
    ("exit;", "1.0", 20),
    # bar / barrier (PTX ISA 9.7.13.1): .cta from PTX 7.8 (ptxas 13.0)
    ("bar{.cta}.sync a{, b};", "1.0", 20, [(".cta", 78, 0)]),
    ("bar{.cta}.arrive a, b;", "2.0", 20, [(".cta", 78, 0)]),
    ("bar{.cta}.red.popc.u32 d, a{, b}, pc;", "2.0", 20, [(".cta", 78, 0)]),
    ("bar{.cta}.red.op.pred pd, a{, b}, pc;  .op = { .and, .or }", "2.0", 20, [(".cta", 78, 0)]),
    ("barrier{.cta}.sync{.aligned} a{, b};", "6.0", 70, [(".cta", 78, 0)]),
    ("barrier{.cta}.arrive{.aligned} a, b;", "6.0", 70, [(".cta", 78, 0)]),
    ("barrier{.cta}.red.popc{.aligned}.u32 d, a{, b}, pc;", "6.0", 70, [(".cta", 78, 0)]),
    ("barrier{.cta}.red.op{.aligned}.pred pd, a{, b}, pc;  .op = { .and, .or }", "6.0", 70, [(".cta", 78, 0)]),
    ("bar.warp.sync membermask;", "6.0", 30),
    ("barrier.cluster.arrive{.sem}{.aligned};  .sem = { .release, .relaxed }", "7.8", 90),
    ("barrier.cluster.wait{.acquire}{.aligned};", "7.8", 90),
    ("elect.sync d|p, membermask;", "8.0", 90),
    ("vote.sync.mode.pred d, a, membermask;  .mode = { .all, .any, .uni }", "6.0", 70),
    ("vote.sync.ballot.b32 d, a, membermask;", "6.0", 70),
    ("activemask.b32 d;", "6.2", 30),
    ("redux.sync.op.type d, a, membermask;  .op = { .add, .min, .max }  .type = { .u32, .s32 }", "7.0", 80),
    ("redux.sync.op.b32 d, a, membermask;  .op = { .and, .or, .xor }", "7.0", 80),
    ("redux.sync.op{.abs}{.NaN}.f32 d, a, membermask;  .op = { .min, .max }", "8.6", 100, [],
     "sm_100a sm_110a sm_100f+ sm_110f+"),
    ("match.any.sync.type d, a, membermask;  .type = { .b32, .b64 }", "6.0", 70),
    ("match.all.sync.type d|p, a, membermask;  .type = { .b32, .b64 }", "6.0", 70),
    ("fence.proxy.proxykind;  .proxykind = { .alias, .async, .async.global, .async.shared::cta, "
     ".async.shared::cluster }", "7.5", 70,
     [(".async", 80, 90), (".async.global", 80, 90), (".async.shared::cta", 80, 90),
      (".async.shared::cluster", 80, 90)]),
    ("fence.proxy.tensormap::generic.release.scope;  .scope = { .cta, .cluster, .gpu, .sys }", "8.3", 90),
    ("fence.proxy.tensormap::generic.acquire.scope [addr], size;  .scope = { .cta, .cluster, .gpu, .sys }", "8.3", 90),
    ("fence.mbarrier_init.release.cluster;", "8.0", 90),
    # the spec's .cp_qualifiers / .fence_qualifiers groups, each of one value, written out
    ("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned [dst], [src], "
     "size;  .scope = { .cta, .cluster, .gpu, .sys }", "8.3", 90),
    # ptxas 13.0 takes .acquire / .release (and no .sem: .acq_rel) at every version and target it
    # knows, though the ISA dates the uni-directional fences to 8.6: the assembler decides
    ("fence{.sem}.scope;  .sem = { .sc, .acq_rel, .acquire, .release }  .scope = { .cta, .cluster, .gpu, .sys }",
     "6.0", 70, [(".cluster", 78, 90)]),      # "Feature '.cluster scope' requires .target sm_90 or higher"
    ("ldmatrix.sync.aligned.shape.num{.trans}{.ss}.type r, [p];  .shape = { .m8n8 }  "
     ".num = { .x1, .x2, .x4 }  .ss = { .shared, .shared::cta }  .type = { .b16 }", "6.5", 75),
    ("stmatrix.sync.aligned.shape.num{.trans}{.ss}.type [p], r;  .shape = { .m8n8 }  "
     ".num = { .x1, .x2, .x4 }  .ss = { .shared, .shared::cta }  .type = { .b16 }", "7.8", 90),
    ("wgmma.fence.sync.aligned;", "8.0", 90),
    ("wgmma.commit_group.sync.aligned;", "8.0", 90),
    ("wgmma.wait_group.sync.aligned N;", "8.0", 90),
    # st.async without [mbar]: outside the Syntax block of the spec (whose two-operand form is
    # the .release one, sm_100), but ptxas 13.0 assembles it from PTX 8.1 on sm_90 (rules.c
    # says which combinations, and that ptxas emits no store for it)
    ("st.async{.sem}{.scope}{.ss}{.completion_mechanism}.type [a], b;  .sem = { .weak }  "
     ".scope = { .cluster, .gpu, .sys }  .ss = { .shared::cluster, .shared::cta, .global }  "
     ".completion_mechanism = { .mbarrier::complete_tx::bytes }  "
     ".type = { .b16, .b32, .b64, .u16, .u32, .u64, .s16, .s32, .s64, .f32, .f64 }", "8.1", 90,
     [(".global", 87, 100)]),
    # st.async with [mbar] to .shared::cta: the Syntax block's .ss is .shared::cluster only, but
    # ptxas 13.0 assembles (and emits the store for) .shared::cta from PTX 8.1 on sm_90, with or
    # without the completion mechanism; .cluster needs .shared::cluster ("Modifier '.cluster'
    # requires '.shared::cluster' space")
    ("st.async{.sem}.shared::cta{.completion_mechanism}{.vec}.type [a], b, [mbar];  .sem = { .weak }  "
     ".completion_mechanism = { .mbarrier::complete_tx::bytes }  .vec = { .v2, .v4 }  "
     ".type = { .b32, .b64, .u32, .u64, .s32, .s64, .f32, .f64 }", "8.1", 90),
    # prefetch with an eviction priority through a generic address: the Syntax block names .global
    # only, ptxas 13.0 takes it without (prefetch.L2::evict_last [%rd1])
    ("prefetch.evict [a];  .evict = { .L2::evict_last, .L2::evict_normal }", "7.4", 80),
]

# what an operand name means (the spec's operand names -> the kind the C checker knows)
OPERAND_KIND = {
    "dst": "A", "src": "A", "dstMem": "A", "srcMem": "A", "mbar": "A", "addr": "A", "a": "?",
    "p": "D", "gdst": "A",
    "tensorMap, tensorCoords": "T",
    "im2colInfo": "V", "im2colInfo ": "V",
    "size": "S32", "cp-size": "I", "src-size": "S32", "ignore-src": "PR", "cache-policy": "R64",
    "ctaMask": "R16", "byteMask": "R16", "count": "S32", "txCount": "S32", "tx_count": "S32",
    "state": "R64_", "_": "_", "waitComplete": "PD", "phaseParity": "S32",
    "suspendTimeHint": "S32", "N": "I", "new_val": "S", "ord": "S32", "initval": "I0",
    "b": "S", "d": "D", "c": "S", "tgt": "L", "membermask": "S32", "r": "V", "d|p": "DP",
    "p|q": "DP", "pd": "PD", "pc": "PR", "a-desc": "R64", "b-desc": "R64", "idesc": "S32", "disable-output-lane": "V", "scale-d": "P", "sp-meta": "S32",
    "sp-sel": "I", "imm-scale-a": "I", "imm-scale-b": "I", "imm-trans-a": "I", "imm-trans-b": "I", "immLut": "I", "e": "S", "f": "S", "vd": "V", "va": "V", "vb": "V", "vc": "V",
    "(ret-param)": "LIST", "(param-list)": "LIST", "func": "FN", "fptr": "FN", "flist": "PROTO",
    "fproto": "PROTO",
    # wgmma.mma_async's immediates (1 or -1, 0 or 1)
    # texture operands that are vectors (tex's offset and gradients)
    "offset": "V", "dPdx": "V", "dPdy": "V", "depth": "S",
    "imm-scale-a": "I", "imm-scale-b": "I", "imm-trans-a": "I", "imm-trans-b": "I",
}
# optional operands present exactly when a qualifier is (else ptxas: "Arguments mismatch")
OPERAND_QUALIFIER = {
    "cache-policy": ".L2::cache_hint", "ctaMask": ".multicast::cluster", "byteMask": ".cp_mask",
}


def split_sections(text, level_re):
    """(instruction names, body) per heading."""
    out = []
    cur = None
    for line in text.splitlines():
        m = re.match(level_re, line)
        if m:
            if cur:
                out.append(cur)
            names = re.findall(r"`([a-z_][\w.:]*)`", line.split("](")[0]) or \
                re.findall(r"([a-z_][\w.:]+)", line.lstrip("#").strip())
            cur = [names, []]
        elif cur:
            cur[1].append(line)
    if cur:
        out.append(cur)
    return out


def syntax_block(lines, fenced):
    if fenced:
        try:
            i = lines.index("Syntax")
        except ValueError:
            return None
        j = i + 1
        while lines[j].strip() != "```":
            j += 1
        k = j + 1
        while lines[k].strip() != "```":
            k += 1
        return "\n".join(lines[j + 1:k])
    block = []
    started = False
    for line in lines:
        if line.startswith("    ") and line.strip():
            block.append(line.strip())
            started = True
        elif started and line.strip():
            break
    return "\n".join(block)


def parse_block(block):
    """[(template, defs)] with defs shared by the templates that precede them."""
    text = re.sub(r"//[^\n]*", "", block)
    # one statement per definition or template: join continuation lines
    items = []
    for line in text.split("\n"):
        s = line.strip()
        if not s:
            continue
        if items and (s[0] in "[{," or s.startswith("_") or
                      (items[-1][1] == "def" and items[-1][0].count("{") > items[-1][0].count("}")) or
                      (items[-1][1] == "tpl" and not items[-1][0].rstrip().endswith(";") and
                       re.match(r"^[\[{_]|^[a-zA-Z][\w-]*\s*[,;{]", s) and "=" not in s)):
            items[-1][0] += " " + s
            continue
        if re.match(r"^\.?[\w:.-]+\s*=", s):
            items.append([s, "def"])
        else:
            items.append([s, "tpl"])
    groups = []          # [templates, defs]
    for s, kind in items:
        if kind == "tpl":
            if not groups or groups[-1][1]:
                groups.append([[], {}])
            groups[-1][0].append(s)
        else:
            name, vals = s.split("=", 1)
            vals = def_values(vals)
            if not groups:
                groups.append([[], {}])
            groups[-1][1][name.strip().lstrip(".")] = vals
    return [(t, d) for ts, d in groups for t in ts]


def def_values(text):
    """'{ .shared{::cta, ::cluster}, .global }' -> ['.shared', '.shared::cta', ...]"""
    a = text.index("{")
    depth, b = 0, a
    for b in range(a, len(text)):
        depth += {"{": 1, "}": -1}.get(text[b], 0)
        if depth == 0:
            break
    body = text[a + 1:b]
    vals = []
    for m in re.finditer(r"([.\w:]+)(\{([^}]*)\})?", body):
        base = m.group(1)
        vals.append(base)
        if m.group(3):
            vals += [base + sub.strip() for sub in m.group(3).split(",") if sub.strip()]
    return vals


def parse_head(head, defs, root_names, extend_root=False):
    """Qualifier slots of a template head: [(name, values, optional)]; returns (root, slots)."""
    comps = []          # (text, optional, group id)
    i, depth, gid, group = 0, 0, 0, 0
    while i < len(head):
        c = head[i]
        if c == "{":
            if head[i + 1:i + 3] == "::" and depth == 0:    # .shared{::cta}
                j = head.index("}", i)
                comps[-1] = (comps[-1][0] + "{" + head[i + 1:j] + "}", comps[-1][1], comps[-1][2])
                i = j + 1
                continue
            depth += 1
            gid += 1
            group = gid
            i += 1
        elif c == "}":
            depth -= 1
            group = 0
            i += 1
        elif c == ".":
            i += 1
        else:
            m = re.match(r"[\w:|-]+(\{::\w+\})?", head[i:])
            comps.append((m.group(0), depth > 0, group))
            i += len(m.group(0))
    names = [c[0] for c in comps]
    root = None
    for rn in sorted(root_names, key=len, reverse=True):
        parts = rn.split(".")
        if names[:len(parts)] == parts:
            root = rn
            break
    if root is None:
        root = names[0]
    nroot = len(root.split("."))
    if extend_root:
        # mbarrier.arrive.expect_tx, mbarrier.test_wait.parity: the literal right after the name
        # stays there (ptxas: "Unknown modifier '.expect_tx'" when it comes later)
        while nroot < len(comps) and not comps[nroot][1] and comps[nroot][0] not in defs and \
                "{" not in comps[nroot][0]:
            root += "." + comps[nroot][0]
            nroot += 1
    slots = []
    for text, opt, grp in comps[nroot:]:
        m = re.match(r"([\w:|-]+)\{::(\w+)\}", text)
        if m:
            vals = ["." + m.group(1), "." + m.group(1) + "::" + m.group(2)]
            name = m.group(1)
        elif text in defs:
            vals = ["." + v.lstrip(".") for v in defs[text]]
            name = text
        else:
            vals = ["." + text]
            name = text
        slots.append((name, vals, opt, grp))
    return root, slots


def parse_operands(ops):
    """[(name, optional)] from '[dstMem], [srcMem], size {, cache-policy}'."""
    ops = ops.strip().rstrip(";").strip()
    out = []
    i = 0
    while i < len(ops):
        c = ops[i]
        if c in " ,":
            i += 1
        elif c == "{":
            j = ops.index("}", i)
            inner = ops[i + 1:j].strip().lstrip(",").strip()
            out.append((inner, True))
            i = j + 1
        elif c == "[":
            j = ops.index("]", i)
            out.append(("[" + ops[i + 1:j].strip() + "]", False))
            i = j + 1
        else:
            m = re.match(r"[^,{]+", ops[i:])      # one operand, "var + imm" included
            out.append((m.group(0).strip(), False))
            i += len(m.group(0))
    return out


def version(s):
    a, b = s.split(".")
    return int(a) * 10 + int(b)


def arch_list(bullets):
    """'* `sm_100a`', '+ `sm_100f` or higher in the same family' -> 'sm_100a sm_100f+'"""
    out = []
    for b in bullets:
        m = re.search(r"`(sm_\d+[af]?)`", b)
        if not m:
            continue
        name = m.group(1)
        if "Renamed" in b:                  # sm_101a is sm_110a from PTX 9.0: listed as such
            name = re.search(r"Renamed to `(sm_\d+[af]?)`", b).group(1)
        out.append(name + ("+" if "or higher in the same family" in b else ""))
    return " ".join(dict.fromkeys(out))


def isa_notes(lines):
    """(base version, base sm, base arch list, [(qualifiers, version, sm, context, arch list)])"""
    text = "\n".join(lines)
    base_v = re.search(r"Introduced in PTX ISA (?:version )?(\d+\.\d+)", text)
    base_v = version(base_v.group(1)) if base_v else None
    base_sm = re.search(r"^Requires `sm_(\d+)` or higher", text, re.M)
    base_sm = int(base_sm.group(1)) if base_sm else None
    short = re.search(r"^PTX (\d+\.\d+), `sm_(\d+)`", text, re.M)
    if short:
        base_v, base_sm = version(short.group(1)), int(short.group(2))
    base_arch = ""
    quals = []
    for para in re.split(r"\n\s*\n", text):
        p = " ".join(para.split())
        if not p.startswith("Support for") and not re.match(r"^`\.[\w:]+`.*require", p):
            continue
        if "sub-qualifier" in p or re.search(r"with `\.", p):      # conditional: rules.c
            continue
        qs = re.findall(r"`(\.[\w:]+)`", p)
        v = re.search(r"introduced in PTX ISA version (\d+\.\d+)", p)
        sm = re.search(r"requires? `sm_(\d+)` or higher", p)
        ctx = "dst" if "destination" in p else ""
        if qs and (v or sm):
            quals.append((qs, version(v.group(1)) if v else 0, int(sm.group(1)) if sm else 0, ctx, ""))
    # "... is supported on following architectures:" followed by a bullet list
    raw = [l for l in lines]
    for i, line in enumerate(raw):
        if "on following architectures:" not in line or "family-specific" in line:
            continue
        j = i - 1
        lead = line
        while j >= 0 and raw[j].strip() and not raw[j].startswith("*"):
            lead = raw[j] + " " + lead
            j -= 1
        bullets = []
        k = i + 1
        while k < len(raw) and (not raw[k].strip() or raw[k].lstrip()[:1] in "*+" or raw[k][:1] == " "):
            if raw[k].strip():
                bullets.append(raw[k])
            k += 1
        arch = arch_list(bullets)
        qs = re.findall(r"`(\.[\w:]+)`", lead)
        if lead.strip().startswith("Supported on following"):
            base_arch = arch
        elif qs and "corresponding to" not in lead:
            quals.append((qs, 0, 0, "", arch))
    return base_v, base_sm, base_arch, quals


def collect():
    forms = []
    dm = open(os.path.join(SPEC, "ptx-data-movement.md")).read()
    file_defs = {}
    for names, lines in split_sections(dm, r"^#{4,6} "):
        hit = [n for n in names if n in DATA_MOVEMENT]
        if not hit:
            continue
        block = syntax_block(lines, True)
        if block is None:
            continue
        base_v, base_sm, base_arch, quals = isa_notes(lines)
        section_defs = {}
        for tpl, defs in parse_block(block):
            section_defs.update(defs)
            merged = {**file_defs, **section_defs, **defs}
            f = make_form(tpl, merged, names, base_v, base_sm, base_arch, quals, "data-movement")
            if f and f["root"] in QUALIFIER_NOTES or (f and f["root"] == "ld" and "ld.global.nc" in names):
                notes = QUALIFIER_NOTES["ld.global.nc" if "ld.global.nc" in names else f["root"]]
                vals = {v for sl in f["slots"] for v in sl[1]}
                have = {(r[0], r[1] > 0, r[2] > 0) for r in f["reqs"]}
                for q, v, sm in notes:
                    if q in vals and (q, True, False) not in have and (q, False, True) not in have:
                        f["reqs"].append((q, v, sm, "", ""))
            if f and f["root"] == "cp.reduce.async.bulk.tensor":
                reduce_scatter4(f)
            if f and f["root"] == "multimem.red":
                red_acc_prec(f)
            forms.append(f)
        file_defs.update(section_defs)
    mb = open(os.path.join(SPEC, "mbarrier.md")).read()
    mb_defs = {}      # mbarrier.md states .sem/.scope/.space once for the instructions after it
    for names, lines in split_sections(mb, r"^### "):
        hit = [n for n in names if n in MBARRIER]
        if not hit:
            continue
        block = syntax_block(lines, False)
        base_v, base_sm, base_arch, quals = isa_notes(lines)
        for tpl, defs in parse_block(block):
            mb_defs.update(defs)
            # the notes of the instruction this template writes (test_wait and try_wait share a section)
            root = max((n for n in names if n in MBARRIER and tpl.startswith(n)), key=len)
            bv, bsm, extra = MBARRIER_NOTES.get(root, (base_v, base_sm, []))
            q2 = quals + [(q, v, sm, "", "") for q, v, sm in extra]
            forms.append(make_form(tpl, dict(mb_defs), names, bv, bsm, "", q2, "mbarrier"))
    for syntax, v, sm, *qreq in BODY:
        forms.append(body_form(syntax, v, sm, qreq))
    forms += semantic_forms(ptx_rows.rows())
    for syntax, v, sm, *qreq in ptx_atom_rows.ROWS:     # after the rest: the forms before keep their numbers
        forms.append(body_form(syntax, v, sm, qreq))
    for syntax, v, sm in CALL:                           # last, for the same reason
        forms.append(body_form(syntax, v, sm, []))
    forms += semantic_forms(ptx_rows.rows(late=True))    # the families added after the call forms
    return [f for f in forms if f]


def semantic_forms(rows):
    forms = []
    for syntax, v, sm, qreq, sem, arch in rows:
        tpl, *rest = syntax.split(";", 1)
        defs = {}
        for d in re.findall(r"\.(\w+)\s*=\s*\{([^}]*)\}", rest[0] if rest else ""):
            defs[d[0]] = re.findall(r"[.\w:]+", d[1])
        name = re.match(r"[\w]+(\.\w+)*?(?=[.{ ]|$)", tpl).group(0)
        f = make_form(tpl + ";", defs, [name.split(".")[0]] + ptx_rows.ROOTS, version(v), sm, arch,
                      [([q[0]], q[1], q[2], "", q[3] if len(q) > 3 else "") for q in qreq], "semantic")
        f["sem"] = sem
        forms.append(f)
    return forms


def reduce_scatter4(f):
    """ptxas 13.0 and 13.5 take .tile::scatter4 on cp.reduce.async.bulk.tensor as on the tensor
    store (PTX 8.6; sm_100a / sm_110a and their families), which the ISA's syntax block does not
    list; the overlay adds it with the store's requirements."""
    for name, vals, opt, grp in f["slots"]:
        if name == "load_mode" and ".tile::scatter4" not in vals:
            vals.insert(1, ".tile::scatter4")
    f["reqs"] += [(".tile::scatter4", 86, 0, "", ""), (".tile::scatter4", 0, 0, "", "sm_100a sm_110a sm_100f+ sm_110f+")]


def red_acc_prec(f):
    """ptxas 13.0 and 13.5 take .acc::f32 / .acc::f16 after multimem.red's operation, on every type
    and at every version and target the form has (and ignore it), though the ISA's syntax block
    gives .acc_prec to ld_reduce only; the overlay adds the optional slot, with no requirement."""
    at = next(i for i, s in enumerate(f["slots"]) if s[0] in ("op", "redop")) + 1
    f["slots"].insert(at, ("acc_prec", [".acc::f32", ".acc::f16"], True, 0))
    grp = 0
    for i, (name, vals, opt, _) in enumerate(f["slots"]):       # the optional slots' order, renumbered
        grp += bool(opt)
        f["slots"][i] = (name, vals, opt, grp if opt else 0)
    f["template"] = re.sub(r"(\.(?:red)?op)", r"\1{.acc_prec}", f["template"], count=1)


def body_form(syntax, v, sm, qreq):
    arch = qreq[1] if len(qreq) > 1 else ""     # an architecture list, as the ISA notes write one
    tpl, *rest = syntax.split(";", 1)
    defs = {}
    for d in re.findall(r"\.(\w+)\s*=\s*\{([^}]*)\}", rest[0] if rest else ""):
        defs[d[0]] = re.findall(r"[.\w:]+", d[1])
    name = re.match(r"[\w]+(\.\w+)*?(?=[.{ ]|$)", tpl).group(0)
    return make_form(tpl + ";", defs, [name.split(".")[0]] + BODY_ROOTS, version(v), sm, arch,
                     [([q], qv, qsm, "", "") for q, qv, qsm in (qreq[0] if qreq else [])], "body")


# call (PTX ISA 9.7.12.6): direct, and indirect through a register with a prototype (fproto) or a
# table of the possible targets (flist); the callee's signature is rules_call.c's business
CALL = [
    ("call{.uni} (ret-param), func, (param-list);", "2.0", 20),
    ("call{.uni} (ret-param), func;", "2.0", 20),
    ("call{.uni} func, (param-list);", "2.0", 20),
    ("call{.uni} func;", "1.0", 20),
    ("call{.uni} (ret-param), fptr, (param-list), fproto;", "2.1", 20),
    ("call{.uni} fptr, (param-list), fproto;", "2.1", 20),
    ("call{.uni} fptr, fproto;", "2.1", 20),
]

BODY_ROOTS = ["barrier.cluster.arrive", "barrier.cluster.wait", "bar.warp.sync", "elect.sync", "vote.sync",
              "redux.sync", "match.any.sync", "match.all.sync",
              "fence.proxy", "fence.mbarrier_init", "wgmma.fence", "wgmma.commit_group",
              "wgmma.wait_group", "cvt", "st.async"]


# Which lowering of the execution side runs a form (tables.h PTX_LOWER_*), by its root: the
# longest entry that is the root or a prefix of it by components wins. A row with a semantics
# entry is SEM; a root with no entry has no lowering (NONE) and must be on text/notyet.c's list.
LOWERING = {
    "ld": "LDST", "ldu": "LDST", "st": "LDST", "st.async": "ST_ASYNC", "st.bulk": "ST_BULK",
    "mbarrier": "MBARRIER", "cp": "CP", "fence": "FENCE", "membar": "FENCE", "tensormap": "TENSORMAP",
    "bar": "BAR", "barrier": "BAR", "elect": "WARP", "shfl": "WARP", "vote": "WARP", "ldmatrix": "WARP",
    "stmatrix": "WARP", "redux": "WARP_MORE", "match": "WARP_MORE", "activemask": "WARP_MORE",
    "wgmma": "WGMMA", "mma": "MMA", "atom": "ATOM", "red": "ATOM", "multimem": "MULTIMEM", "call": "CALL",
    "isspacep": "SPACE", "getctarank": "SPACE", "createpolicy": "SPACE",
    "bra": "SCALAR", "ret": "SCALAR", "exit": "SCALAR", "trap": "SCALAR", "brkpt": "SCALAR",
    "nanosleep": "SCALAR", "prefetch": "SCALAR", "prefetchu": "SCALAR", "griddepcontrol": "SCALAR",
    "pmevent": "SCALAR", "setmaxnreg": "SCALAR", "applypriority": "SCALAR", "discard": "SCALAR", "cvta": "SCALAR", "mapa": "SCALAR",
    "mov": "SCALAR", "movmatrix": "MISC", "brx": "MISC", "alloca": "MISC", "stacksave": "MISC",
    "stackrestore": "MISC",
}


def lowering_of(f):
    if f.get("sem"):
        return "SEM"
    comps = f["root"].split(".")
    for n in range(len(comps), 0, -1):
        if ".".join(comps[:n]) in LOWERING:
            return LOWERING[".".join(comps[:n])]
    return "NONE"


def make_form(tpl, defs, names, base_v, base_sm, base_arch, quals, origin):
    tpl = " ".join(tpl.split())
    m = re.match(r"(\S+)\s*(.*)$", tpl)
    head, ops = m.group(1), m.group(2)
    if head.endswith(";"):
        head, ops = head[:-1], ""
    root, slots = parse_head(head, defs, names, origin == "mbarrier")
    operands = parse_operands(ops)
    reqs = []
    base_v, base_sm = base_v or 10, base_sm or 20
    for qs, v, sm, ctx, arch in quals:
        for q in qs:
            if q[1:] in root.split(".")[1:] and not ctx:   # .expect_tx is in the root here
                base_v, base_sm = max(base_v, v), max(base_sm, sm)
        for q in qs:
            # `.cta_group` names the values .cta_group::1 and .cta_group::2
            for val in dict.fromkeys(v2 for s in slots for v2 in s[1] if v2 == q or v2.startswith(q + "::")):
                reqs.append((val, v, sm, ctx, arch))
    return dict(root=root, slots=slots, operands=operands, version=base_v or 10,
                sm=base_sm or 20, arch=base_arch, reqs=reqs, origin=origin, template=tpl)


KIND_ENUM = {"A": "A", "T": "T", "V": "V", "S32": "S32", "S3264": "S3264", "R64": "R64", "R16": "R16",
             "R64_": "R64_", "_": "SINK", "P": "P", "PR": "PR", "PD": "PD", "I": "I", "I0": "I0",
             "D": "D", "DP": "DP", "L": "L", "S": "S", "?": "ANY", "LIST": "LIST", "FN": "FN", "PROTO": "PROTO",
             "TS": "TS", **{k: k for k in ("VREG", "VSEL", "VNSEL", "VNC", "VDSEL", "VSEL2", "VSEL4", "VMASK2", "VMASK4")}}

# the video instructions' operands (9.7.18; tables.h: PTX_K_V*): scalar, vmad's (negation
# allowed), the SIMD forms' of two or four lanes
VIDEO_ROOT = re.compile(r"^v(add|sub|absdiff|min|max|shl|shr|mad|set|avrg)([24]?)$")
VIDEO_KIND = {
    "": {"d": "VREG", "d.dsel": "VDSEL", "a.asel": "VSEL", "b.bsel": "VSEL", "c": "S32"},
    "mad": {"d": "VREG", "a.asel": "VNSEL", "b.bsel": "VNSEL", "c": "VNC"},
    "2": {"d.mask": "VMASK2", "a.asel": "VSEL2", "b.bsel": "VSEL2", "c": "VREG"},
    "4": {"d.mask": "VMASK4", "a.asel": "VSEL4", "b.bsel": "VSEL4", "c": "VREG"},
}


def cstr(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


# the misc family's operands (tools/ptx_rows/misc.py), by position
MISC_KIND = {"fns": ["D", "S32", "S32", "S32"], "brx.idx": ["S32", "L"], "movmatrix": ["D", "S"],
             "alloca": ["D", "S3264", "I"], "stacksave": ["D"], "stackrestore": ["S3264"], "setmaxnreg": ["I"],
             "pmevent": ["I"], "pmevent.mask": ["I"]}


def kind_of(name, index=0, root=""):
    n = name.strip("[]").strip()
    v = VIDEO_ROOT.match(root)
    if v:
        return VIDEO_KIND["mad" if v.group(1) == "mad" else v.group(2)][n]
    if root in MISC_KIND:
        return MISC_KIND[root][index]
    if root == "st.bulk" and n == "size":     # "The 32-bit or 64-bit integer operand size"
        return "S3264"
    if n == "state" and index > 0:          # an input state (test_wait): a register, not '_'
        return "R64"
    if name.strip() == "d[|p]":              # shfl.sync's d and its optional predicate
        return "DP"
    if root.startswith("mbarrier.pending_count") and index == 0:     # the count it reads out
        return "D"
    if name.startswith("["):
        return {0: "A", 1: "T"}.get(n.count(","), "TS")
    return OPERAND_KIND.get(n, "S" if re.match(r"^[a-zA-Z_]", n) else "I")


def emit(forms):
    out = ["/* Generated by tools/ptx_tables.py from the syntax blocks in tools/ptx_spec: do not edit. */",
           '#include "ptx/text/tables.h"', ""]
    for i, f in enumerate(forms):
        for j, (name, vals, opt, grp) in enumerate(f["slots"]):
            out.append("static const char *const v%d_%d[] = {%s};" % (i, j, ", ".join(cstr(v) for v in vals) or "0"))
        if f["slots"]:
            out.append("static const ptx_slot s%d[] = {" % i)
            for j, (name, vals, opt, grp) in enumerate(f["slots"]):
                out.append("    {%s, v%d_%d, %d, %d, %d}," % (cstr(name), i, j, len(vals), int(opt), grp))
            out.append("};")
        if f["operands"]:
            out.append("static const ptx_operand_spec o%d[] = {" % i)
            for k, (name, opt) in enumerate(f["operands"]):
                q = OPERAND_QUALIFIER.get(name.strip(), "")
                out.append("    {%s, %s, %d, %s}," % (cstr(name), "PTX_K_" + KIND_ENUM[kind_of(name, k, f["root"])], int(opt), cstr(q)))
            out.append("};")
        if f["reqs"]:
            out.append("static const ptx_qual_req r%d[] = {" % i)
            for q, v, sm, ctx, arch in f["reqs"]:
                out.append("    {%s, %d, %d, %s, %s}," % (cstr(q), v, sm, cstr(ctx), cstr(arch)))
            out.append("};")
    out.append("")
    out.append("const ptx_form ptx_forms[] = {")
    for i, f in enumerate(forms):
        out.append("    {%s, %s, %s, %d, %s, %d, %s, %d, %d, %d, %s, %s, PTX_LOWER_%s}," % (
            cstr(f["root"]), cstr(f["template"]),
            "s%d" % i if f["slots"] else "0", len(f["slots"]),
            "o%d" % i if f["operands"] else "0", len(f["operands"]),
            "r%d" % i if f["reqs"] else "0", len(f["reqs"]), f["version"], f["sm"], cstr(f["arch"]),
            cstr(f.get("sem", "")), lowering_of(f)))
    out.append("};")
    out.append("const int ptx_nforms = %d;" % len(forms))
    return "\n".join(out) + "\n"


def main():
    forms = collect()
    text = emit(forms)
    if "--list" in sys.argv:
        for f in forms:
            print(f["root"], f["version"], f["sm"], [(s[0], s[1][:4], s[2]) for s in f["slots"]],
                  f["operands"], f["reqs"])
        return 0
    if "--check" in sys.argv:
        return 0 if open(OUT).read() == text else 1
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as fh:
        fh.write(text)
    print("wrote %s: %d forms" % (OUT, len(forms)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
