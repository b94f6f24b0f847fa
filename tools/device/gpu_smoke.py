"""Smoke test of ptxasync.cuda on a GPU machine: environment, one program of
every operation kind, a few stored cases of each family re-recorded."""
import glob
import json
import os
import sys
import time

import numpy as np

import ptxasync.cuda as pc
from ptxasync.cuda import record

out = os.environ.get("OUT", "/tmp")
print("available:", pc.available(), pc.why_unavailable())
print(json.dumps(pc.gpu_info()))
p = pc.Program(smem_bytes=32 * 1024)
g = p.register(np.arange(64 * 64, dtype=np.uint16))
o = p.alloc(8192)
tm = p.tensor_map_tiled(g, dtype="u16", global_dim=(64, 64), global_strides=(128,), box_dim=(16, 8), swizzle="32B")
p.mbarrier_init(1024, 1)
p.mbarrier_arrive_expect_tx(1024, 256)
p.cp_async_bulk_tensor_load(tm, (16, 8), 2048, 1024)
p.mbarrier_wait(1024, 0)
t = time.time()
d = pc.diff(p)
print("tile load diff:", d, f"{time.time() - t:.2f}s")
open(os.path.join(out, "smoke.ptx"), "w").write(d.gpu.ptx)
print("probes", {hex(k): hex(v) for k, v in d.gpu.probes.items()}, {hex(k): hex(v) for k, v in d.model.probes.items()})
# a fault, then recovery
q = pc.Program(smem_bytes=32 * 1024)
g = q.register(np.arange(64 * 64, dtype=np.uint16))
tm = q.tensor_map_tiled(g, dtype="u16", global_dim=(64, 64), global_strides=(128,), box_dim=(16, 8))
q.mbarrier_init(1024, 1)
q.mbarrier_arrive_expect_tx(1024, 256)
q.cp_async_bulk_tensor_load(tm, (3, 8), 2048, 1024)
q.mbarrier_wait(1024, 0)
d = pc.diff(q)
print("fault diff:", d, "| gpu:", d.gpu.verdict, d.gpu.message[:200])
t = time.time()
d = pc.diff(p)
print("after the fault:", d, f"{time.time() - t:.2f}s")
files = sorted(glob.glob("tests/data/*.jsonl.gz"))
t = time.time()
tally = record.rerecord(files, out=os.path.join(out, "smoke_rerecorded.jsonl.gz"), limit=int(sys.argv[1]) if len(sys.argv) > 1 else 3)
print(f"rerecord {time.time() - t:.1f}s")
print(json.dumps(tally.fam, indent=1))
print("\n".join(tally.notes[:60]))
