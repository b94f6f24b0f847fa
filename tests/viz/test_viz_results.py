"""How a load's result and the pending operations show themselves (Jupyter and terminal)."""
import re
import sys

import numpy as np
import pytest

import ptxasync as pa


def _setup():
    t = np.arange(64 * 128, dtype=np.uint16).reshape(64, 128)
    gpu = pa.Machine(smem_bytes=64 * 1024)
    g = gpu.register(t)
    tm = pa.TensorMap.from_array(t, (8, 64), g.address, swizzle="128B")
    bar = gpu.mbarrier(0x8000).init(1)
    return t, gpu, tm, bar


def _cells(html):
    """The table's rows as lists of cell texts (tags stripped)."""
    rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)
    return [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<t[dh]>(.*?)</t[dh]>", r, re.S)] for r in rows]


def test_pending_ops_table_lists_each_operation():
    t, gpu, tm, bar = _setup()
    bar.arrive_expect_tx(2 * tm.box_bytes)
    gpu.cp_async_bulk_tensor_load(tm, (0, 0), 0x400, bar)
    gpu.cp_async_bulk_tensor_load(tm, (64, 8), 0x800, bar)
    src = gpu.alloc(64)
    gpu.cp_async(0x2000, src.address, 16, thread=3)
    ops = gpu.pending_ops()
    assert isinstance(ops, list) and len(ops) == 3 and [o.op for o in ops] == [0, 1, 2]
    rows = _cells(ops._repr_html_())
    assert rows[0] == ["#", "kind", "issuer", "source", "destination", "tracked by", "notes"]
    assert rows[1] == ["0", "cp.async.bulk.tensor (load)", "CTA 0 thread 0", "tensor (global side)",
                       "smem[CTA 0] 0x400 .. 0x800 (1024 B)", "mbarrier 0x8000 @ CTA 0 (1024 tx bytes)", ""]
    assert rows[2][4] == "smem[CTA 0] 0x800 .. 0xc00 (1024 B)"
    assert rows[3][1:6] == ["cp.async", "CTA 0 thread 3", f"global 0x{src.address:x} .. 0x{src.address + 16:x} (16 B)",
                            "smem[CTA 0] 0x2000 .. 0x2010 (16 B)", "cp.async-group not committed"]
    assert "3 pending operations, in issue order" in ops._repr_html_()
    text = repr(ops).splitlines()
    assert text[0] == "3 pending operations:" and text[1].startswith("  <#0 cp.async.bulk.tensor (load) by CTA 0")
    gpu.run()
    done = gpu.pending_ops()
    assert done == [] and repr(done) == "no pending operations" and "no pending operations" in done._repr_html_()


def test_tensor_load_pending_then_complete(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)      # Jupyter pictures need no matplotlib
    t, gpu, tm, bar = _setup()
    bar.arrive_expect_tx(tm.box_bytes)
    gpu.cp_async_bulk_tensor_load(tm, (64, 8), 0x400, bar)
    ld = pa.TensorLoad(gpu, tm, (64, 8), 0x400)
    other = pa.TensorLoad(gpu, tm, (0, 0), 0x800)                 # nothing was issued there
    assert not ld.complete and other.complete
    assert repr(ld) == ("TensorLoad(tile at (64, 8) -> smem[CTA 0][0x400:+1024]: pending "
                        "(1 operation, tracked by mbarrier 0x8000@CTA0))")
    h = ld._repr_html_()
    rows = _cells(h)
    assert len(rows) == 2 and rows[1][4] == "smem[CTA 0] 0x400 .. 0x800 (1024 B)"
    assert "tx-count 1024 (bytes still expected)" in h                # the mbarrier picture
    assert "where the box will land" in h and h.count(">(1, 8)<") == 1   # the layout at 0x400
    assert bar.try_wait(0)
    assert ld.complete and repr(ld).endswith(": complete)")
    assert (ld.box() == t[8:16, 64:128]).all()
    h = ld._repr_html_()
    assert "<table>" not in h and h.count("<svg") == 2
    # the provenance picture names the global coordinates (NumPy order) of the box
    assert ">(8, 64)<" in h and ">(8, 71)<" in h and "512 elements from the tensor, 0 out-of-bounds fill" in h


def test_tensor_load_in_a_cluster_and_oob():
    t = np.arange(16 * 64, dtype=np.uint16).reshape(16, 64)
    gpu = pa.Machine(ctas=2, smem_bytes=16 * 1024)
    g = gpu.register(t)
    tm = pa.TensorMap.from_array(t, (8, 64), g.address)
    bar = gpu.cta(1).mbarrier(0x1000).init(1)
    gpu.barrier_cluster()      # the inits ordered before another CTA's operation signals them
    bar.arrive_expect_tx(tm.box_bytes)
    gpu.cp_async_bulk_tensor_load(tm, (0, 12), pa.mapa(0x200, 1), bar, cta=1)
    ld = pa.TensorLoad(gpu, tm, (0, 12), pa.mapa(0x200, 1), cta=1)
    assert "tracked by mbarrier 0x1000@CTA1" in repr(ld)
    assert "mbarrier at 0x1001000 (CTA 1)" in ld._repr_html_()
    assert bar.try_wait(0)
    assert ld.complete
    box = ld.box()
    assert (box[:4] == t[12:16]).all() and (box[4:] == 0).all()      # rows 16..19 are out-of-bounds fill
    assert "256 elements from the tensor, 256 out-of-bounds fill" in ld._repr_html_()
    # CTA 0 loads into CTA 1's shared memory (shared::cluster): the load is tracked there
    bar.arrive_expect_tx(tm.box_bytes)
    gpu.cp_async_bulk_tensor_load(tm, (0, 0), pa.mapa(0x600, 1), bar, cta=0, dst_space="shared::cluster")
    remote = pa.TensorLoad(gpu, tm, (0, 0), pa.mapa(0x600, 1), cta=0)
    assert repr(remote).startswith("TensorLoad(tile at (0, 0) -> smem[CTA 1][0x600:+1024]: pending")
    assert bar.try_wait(1)
    assert remote.complete and (remote.box() == t[0:8]).all()


def test_pending_op_alone_shows_its_row():
    t, gpu, tm, bar = _setup()
    bar.arrive_expect_tx(tm.box_bytes)
    gpu.cp_async_bulk_tensor_load(tm, (0, 0), 0x400, bar)
    rows = _cells(gpu.pending_ops()[0]._repr_html_())
    assert len(rows) == 2 and rows[1][0] == "0"
