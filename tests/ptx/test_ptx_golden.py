"""Every golden family as PTX text. Cases of each family's file in tests/data/ are replayed by
the golden runner on machines whose trace is on (the runner passes each case: the model equals
the recorded bytes); each machine's trace printed as PTX (Machine.trace_ptx, the generator every
trace shares) must have no error diagnostic and assemble with the local ptxas; run by ptx.Kernel
on a fresh machine (the same buffers, shared memory as it was before the first operation, the
same policy and hazard mode), it must leave the same shared and global memory, hence the recorded
bytes. Cases with undefined behaviour (a hazard in report mode) are printed, not replayed."""
import gzip
import json
import os
from collections import defaultdict

import numpy as np
import pytest

import ptxasync as pa
from ptxasync import golden, ptx
from ptxasync.ptxtrace import trace_launch

import ptx_forms as pf
from testpaths import DATA

PER_FAMILY = 6
# families of no operation to print: descriptor encodes and edits, consumer reads
NO_OPERATIONS = {"encode_errors", "tensormap_replace", "bank_conflicts", "ldmatrix_read", "wgmma_smem_read"}
# what ptx.Kernel does not run as the API does yet (strict expected failures of the replay)
NOT_REPLAYED = {
    "cluster_bulk_copy": "the interpreter runs a shared::cta mbarrier.init of CTA 1 on CTA 0",
    "cluster_bulk_reduce": "the interpreter runs a shared::cta mbarrier.init of CTA 1 on CTA 0",
    "cluster_tile_load": "the interpreter runs a shared::cta mbarrier.init of CTA 1 on CTA 0",
    "st_async": "the interpreter runs a shared::cta mbarrier.init of CTA 1 on CTA 0",
}
FILES = sorted(f for f in os.listdir(DATA) if f.endswith(".jsonl.gz") and not f.startswith(("gpu_h100", "ptx_"))
               and "device" not in f)


def _samples():
    """family -> its first PER_FAMILY cases (each family's own file)."""
    out = defaultdict(list)
    for name in FILES:
        with gzip.open(os.path.join(DATA, name), "rt") as fh:
            for line in fh:
                case = json.loads(line)
                fam = case.get("family")
                if isinstance(fam, str) and len(out[fam]) < PER_FAMILY:
                    out[fam].append(case)
                if out and all(len(v) >= PER_FAMILY for v in out.values()) and name.startswith(tuple(out)):
                    break
    return dict(out)


SAMPLES = _samples()
FAMILIES = sorted(SAMPLES)


class _Traced:
    """Machines made while it is on have their trace on and keep their initial memory."""

    def __init__(self):
        self.made = []

    def __enter__(self):
        init, register, recorder = pa.Machine.__init__, pa.Machine.register, pa.Machine._recorder
        made = self.made

        def traced_init(self, *args, **kw):
            kw["trace"] = True
            self._replay_kw = {k: kw[k] for k in ("policy", "seed", "hazards") if k in kw}
            self._initial = []
            init(self, *args, **kw)
            made.append(self)

        def keep(self, array, address=None, align=256):
            buf = register(self, array, address=address, align=align)
            self._initial.append((buf.address, np.array(buf.bytes, copy=True)))
            return buf

        def snapshot(m):
            if not hasattr(m, "_smem0"):
                m._smem0 = [np.array(c.smem, copy=True) for c in m.ctas]

        def first_call(self, name):
            call = recorder(self, name)

            def wrapped(*args, **kw):
                snapshot(self)
                return call(*args, **kw)
            return wrapped

        mbar_init = pa.machine.Mbarrier.init

        def first_init(self, count=1, *, thread=0):
            snapshot(pa.machine._RECORDING[id(self._m)]())
            return mbar_init(self, count, thread=thread)
        self._saved = init, register, recorder, mbar_init
        pa.Machine.__init__, pa.Machine.register, pa.Machine._recorder = traced_init, keep, first_call
        pa.machine.Mbarrier.init = first_init
        return self

    def __exit__(self, *exc):
        pa.Machine.__init__, pa.Machine.register, pa.Machine._recorder, pa.machine.Mbarrier.init = self._saved


def _machines(family):
    """The machines of the family's sampled cases that issued operations (each case passes)."""
    out = []
    for case in SAMPLES[family]:
        with _Traced() as t:
            status, msg = golden.check_case(case)
        if status == "unsupported":
            continue
        assert status == "passed", (family, case.get("id"), msg)
        out += [m for m in t.made if hasattr(m, "_smem0")]
    return out


def test_every_family_is_sampled():
    assert len(FAMILIES) >= 20, FAMILIES
    assert NO_OPERATIONS <= set(FAMILIES) and set(NOT_REPLAYED) <= set(FAMILIES)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_family_prints_as_ptx_that_check_accepts(family):
    machines = _machines(family)
    if family in NO_OPERATIONS:
        assert not machines
        return
    assert machines, family
    for m in machines:
        text = m.trace_ptx()
        errors = [str(d) for d in ptx.check(text) if d.severity == "error"]
        assert not errors, (family, errors, text)


@pytest.mark.skipif(pf.ptxas_path() is None, reason="ptxas is not installed")
@pytest.mark.parametrize("family", sorted(set(FAMILIES) - NO_OPERATIONS))
def test_the_family_ptx_assembles(family):
    for m in _machines(family)[:2]:
        ok, message = pf.ptxas_accepts(m.trace_ptx(), m.target)
        assert ok, (family, message)


def _replay(m):
    launch = trace_launch(m)
    text = launch.pop("text")
    m2 = pa.Machine(ctas=m.nctas, smem_bytes=len(m.smem), target=m.target, **m._replay_kw)
    for address, data in m._initial:
        m2.register(data.copy(), address=address)
    for cta, smem0 in zip(m2.ctas, m._smem0):
        cta.smem[:] = smem0
    ptx.Kernel(text).launch(m2, **launch)
    return m2


@pytest.mark.parametrize("family", [pytest.param(f, marks=pytest.mark.xfail(strict=True, reason=NOT_REPLAYED[f],
                                                                           raises=(pa.PtxAsyncError, ptx.PtxSyntaxError)))
                                    if f in NOT_REPLAYED else f for f in sorted(set(FAMILIES) - NO_OPERATIONS)])
def test_the_family_replayed_through_ptx_gives_the_same_bytes(family):
    replayed = 0
    for m in _machines(family):
        if m.hazards:            # undefined behaviour recorded on purpose (tx over-delivered, ...)
            continue
        m2 = _replay(m)
        for c1, c2 in zip(m.ctas, m2.ctas):
            np.testing.assert_array_equal(c2.smem, c1.smem)
        for b1, b2 in zip(m._buffers, m2._buffers):
            np.testing.assert_array_equal(b2.bytes, b1.bytes)
        replayed += 1
    assert replayed, family
