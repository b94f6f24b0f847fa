"""Random straight-line programs of every register-instruction family (tests/randprog.py), run on
the model and compared bit for bit with what an H200 gave for the same PTX and inputs
(tests/data/randprog/h200.npz, recorded by tools/random_programs.py with ptxas 13.0 -arch=sm_90a).

Every register a program writes is in its output, so a difference is blamed on the first
instruction whose result differs while its sources agree; KNOWN_DIFFERENCES lists the opcodes
where the model is known to differ, with the reason, and the test fails when one of them no longer
differs (the list must shrink with the model's fixes)."""
import json
import os

import numpy as np
import pytest

import randprog as R
from testpaths import DATA

_Z = np.load(os.path.join(DATA, "randprog", "h200.npz"))
META = json.loads(str(_Z["meta"]))
SEEDS = [int(s) for s in _Z["seeds"]]

from randprog_known import KNOWN_DIFFERENCES  # noqa: E402


def _run(i):
    from ptxasync import ptx
    import ptxasync as pa
    seed = SEEDS[i]
    p = R.program(seed)
    inputs = _Z["inputs"][_Z["in_off"][i]:_Z["in_off"][i + 1]]
    want = _Z["outputs"][_Z["out_off"][i]:_Z["out_off"][i + 1]]
    m = pa.Machine()
    out = np.zeros(R.THREADS * p.out_stride, np.uint8)
    ptx.Kernel(p.text).launch(m, grid=1, block=R.THREADS,
                              params={p.entry + "_in": m.register(inputs.copy()), p.entry + "_out": m.register(out)})
    return p, out, want


def test_generator_unchanged():
    """The recording's programs are what the generator writes today (else: record them again)."""
    assert META["generator"] == R.GENERATOR_VERSION
    changed = [s for s, h in zip(SEEDS, _Z["hashes"]) if R.program(s).hash != str(h)]
    assert not changed, "the generator writes other programs for seeds %s: record again" % changed[:10]


def test_inputs_are_the_generators():
    for i in range(0, len(SEEDS), 25):
        p = R.program(SEEDS[i])
        assert np.array_equal(p.inputs.reshape(-1), _Z["inputs"][_Z["in_off"][i]:_Z["in_off"][i + 1]])


@pytest.fixture(scope="module")
def compared():
    """Every recorded program on the model: (unexplained differences, {known opcode: count})."""
    problems, seen = [], {}
    for i in range(len(SEEDS)):
        p, got, want = _run(i)
        if np.array_equal(got, want):
            continue
        bad, s = R.differences(p, got, want, KNOWN_DIFFERENCES)
        for op, n in s.items():
            seen[op] = seen.get(op, 0) + n
        g, w = R.registers(p, got), R.registers(p, want)
        for k, t in bad[:3]:
            _, line, dests, srcs = p.instructions[k]
            problems.append("seed %d thread %d: %s  sources %s  model %s  H200 %s" % (
                p.seed, t, line, srcs, ["0x%x" % int(g[d][t]) for d, _ in dests],
                ["0x%x" % int(w[d][t]) for d, _ in dests]))
    return problems, seen


def test_programs_match_the_h200(compared):
    problems, _ = compared
    assert not problems, "\n".join(problems)


def test_known_differences_still_differ(compared):
    gone = sorted(set(KNOWN_DIFFERENCES) - set(compared[1]))
    assert not gone, "no longer different from the H200: %s (remove from KNOWN_DIFFERENCES)" % gone


def test_recording_covers_every_family():
    fams = {f["key"]: f["family"] for f in R.forms()}
    keys = {k for s in SEEDS for k, _, _, _ in R.program(s).instructions}
    assert {fams[k] for k in keys} == set(R.FAMILIES)
