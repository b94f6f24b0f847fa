"""Two pipelines that do the same work, staged two ways (bench key cp_async_vs_tma).

One CTA of 128 threads streams a 64 x (64 * iters) f16 matrix through a 3-stage ring of 8 KiB
tiles (64 rows of 128 bytes, unswizzled) and folds every 16-byte chunk into a per-thread XOR
checksum (thread t reads chunks 4t .. 4t + 3 of each tile: bytes other threads copied):

  cp.async   every thread copies 4 chunks of a tile with cp.async.cg, commit_group;
             wait_group 1 + bar.sync before a stage is read (Ampere's multistage loop)
  TMA        thread 0 arms the stage's mbarrier (arrive.expect_tx) and issues one
             cp.async.bulk.tensor tile load; every thread waits on the mbarrier, bar.sync
             before a stage is loaded again

Both store the checksums to out[tid]: the same words.
"""
import numpy as np

import ptxasync as pa
from ptxasync import ptx

STAGES, ROWS, TILE = 3, 64, 64 * 128

_HEAD = """.version 8.0
.target sm_90a
.address_size 64
"""

CP_ASYNC = _HEAD + """.visible .entry staged(.param .u64 a, .param .u64 out, .param .u32 iters)
{
  .reg .b32 %r<40>;
  .reg .b64 %rd<16>;
  .reg .pred %p<8>;
  .shared .align 128 .b8 stage[24576];
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [iters];
  ld.param.u64 %rd1, [a];
  mov.u32 %r3, stage;
  shl.b32 %r4, %r2, 7;               // bytes of a matrix row: 128 * iters
  mov.u32 %r6, 0;                    // checksum
  mov.u32 %r7, 0;                    // tile to read
  mov.u32 %r5, 0;                    // tile to load
PRO:                                 // tiles 0 and 1, a group each
  setp.ge.u32 %p3, %r5, %r2;
  @%p3 bra PCHUNKC;
  rem.u32 %r15, %r5, 3;
  shl.b32 %r15, %r15, 13;
  add.u32 %r15, %r15, %r3;
  mov.u32 %r16, 0;
PCHUNK:                               // chunk c = tid + 128 j: row c / 8, 16 bytes c % 8
  shl.b32 %r17, %r16, 7;
  add.u32 %r17, %r17, %r1;
  shr.u32 %r18, %r17, 3;
  and.b32 %r19, %r17, 7;
  shl.b32 %r19, %r19, 4;
  shl.b32 %r20, %r17, 4;
  add.u32 %r20, %r20, %r15;
  mul.wide.u32 %rd2, %r18, %r4;
  shl.b32 %r21, %r5, 7;
  add.u32 %r21, %r21, %r19;
  cvt.u64.u32 %rd3, %r21;
  add.s64 %rd2, %rd2, %rd3;
  add.s64 %rd2, %rd2, %rd1;
  cp.async.cg.shared.global [%r20], [%rd2], 16;
  add.u32 %r16, %r16, 1;
  setp.lt.u32 %p4, %r16, 4;
  @%p4 bra PCHUNK;
PCHUNKC:
  cp.async.commit_group;
  add.u32 %r5, %r5, 1;
  setp.lt.u32 %p1, %r5, 2;
  @%p1 bra PRO;
LOOP:
  setp.ge.u32 %p2, %r7, %r2;
  @%p2 bra DONE;
  cp.async.wait_group 1;             // this thread's copies of tile %r7 are done
  bar.sync 0;                        // ... and everyone's; stage (%r7 - 1) % 3 read by all
  add.u32 %r5, %r7, 2;
  setp.ge.u32 %p3, %r5, %r2;
  @%p3 bra LCHUNKC;
  rem.u32 %r15, %r5, 3;
  shl.b32 %r15, %r15, 13;
  add.u32 %r15, %r15, %r3;
  mov.u32 %r16, 0;
LCHUNK:                               // chunk c = tid + 128 j: row c / 8, 16 bytes c % 8
  shl.b32 %r17, %r16, 7;
  add.u32 %r17, %r17, %r1;
  shr.u32 %r18, %r17, 3;
  and.b32 %r19, %r17, 7;
  shl.b32 %r19, %r19, 4;
  shl.b32 %r20, %r17, 4;
  add.u32 %r20, %r20, %r15;
  mul.wide.u32 %rd2, %r18, %r4;
  shl.b32 %r21, %r5, 7;
  add.u32 %r21, %r21, %r19;
  cvt.u64.u32 %rd3, %r21;
  add.s64 %rd2, %rd2, %rd3;
  add.s64 %rd2, %rd2, %rd1;
  cp.async.cg.shared.global [%r20], [%rd2], 16;
  add.u32 %r16, %r16, 1;
  setp.lt.u32 %p4, %r16, 4;
  @%p4 bra LCHUNK;
LCHUNKC:
  cp.async.commit_group;
  rem.u32 %r9, %r7, 3;
  shl.b32 %r9, %r9, 13;
  add.u32 %r9, %r9, %r3;
  shl.b32 %r10, %r1, 6;
  add.u32 %r9, %r9, %r10;
  ld.shared.v4.u32 {%r11, %r12, %r13, %r14}, [%r9+0];
  xor.b32 %r6, %r6, %r11;
  xor.b32 %r6, %r6, %r12;
  xor.b32 %r6, %r6, %r13;
  xor.b32 %r6, %r6, %r14;
  ld.shared.v4.u32 {%r11, %r12, %r13, %r14}, [%r9+16];
  xor.b32 %r6, %r6, %r11;
  xor.b32 %r6, %r6, %r12;
  xor.b32 %r6, %r6, %r13;
  xor.b32 %r6, %r6, %r14;
  ld.shared.v4.u32 {%r11, %r12, %r13, %r14}, [%r9+32];
  xor.b32 %r6, %r6, %r11;
  xor.b32 %r6, %r6, %r12;
  xor.b32 %r6, %r6, %r13;
  xor.b32 %r6, %r6, %r14;
  ld.shared.v4.u32 {%r11, %r12, %r13, %r14}, [%r9+48];
  xor.b32 %r6, %r6, %r11;
  xor.b32 %r6, %r6, %r12;
  xor.b32 %r6, %r6, %r13;
  xor.b32 %r6, %r6, %r14;
  add.u32 %r7, %r7, 1;
  bra LOOP;
DONE:
  cp.async.wait_group 0;
  ld.param.u64 %rd4, [out];
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd4, %rd4, %rd5;
  st.global.u32 [%rd4], %r6;
  ret;
}
"""

TMA = _HEAD + """.visible .entry staged(.param .align 64 .b8 amap[128], .param .u64 out, .param .u32 iters)
{
  .reg .b32 %r<40>;
  .reg .b64 %rd<16>;
  .reg .pred %p<8>;
  .shared .align 128 .b8 stage[24576];
  .shared .align 8 .b64 full[3];
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [iters];
  mov.u32 %r3, stage;
  mov.u32 %r4, full;
  mov.u32 %r6, 0;                    // checksum
  mov.u32 %r7, 0;                    // tile to read
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra SYNC;
  mbarrier.init.shared::cta.b64 [%r4], 1;
  mbarrier.init.shared::cta.b64 [%r4+8], 1;
  mbarrier.init.shared::cta.b64 [%r4+16], 1;
  mov.u32 %r5, 0;
PRO:                                 // tiles 0 and 1
  setp.ge.u32 %p2, %r5, %r2;
  @%p2 bra SYNC;
  shl.b32 %r15, %r5, 13;
  add.u32 %r15, %r15, %r3;
  shl.b32 %r16, %r5, 3;
  add.u32 %r16, %r16, %r4;
  shl.b32 %r17, %r5, 6;
  mov.u32 %r18, 0;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r16], 8192;
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r15], [amap, {%r17, %r18}], [%r16];
  add.u32 %r5, %r5, 1;
  setp.lt.u32 %p3, %r5, 2;
  @%p3 bra PRO;
SYNC:
  bar.sync 0;
LOOP:
  setp.ge.u32 %p2, %r7, %r2;
  @%p2 bra DONE;
  rem.u32 %r8, %r7, 3;
  shl.b32 %r9, %r8, 3;
  add.u32 %r9, %r9, %r4;             // full[stage]
  div.u32 %r10, %r7, 3;
  and.b32 %r10, %r10, 1;             // its phase's parity
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r9], %r10;
  @!%p4 bra WAIT;
  bar.sync 0;
  add.u32 %r5, %r7, 2;               // tile 2 ahead, into the stage read last time
  setp.ge.u32 %p5, %r5, %r2;
  or.pred %p5, %p5, %p1;
  @%p5 bra READ;
  rem.u32 %r11, %r5, 3;
  shl.b32 %r15, %r11, 13;
  add.u32 %r15, %r15, %r3;
  shl.b32 %r16, %r11, 3;
  add.u32 %r16, %r16, %r4;
  shl.b32 %r17, %r5, 6;
  mov.u32 %r18, 0;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r16], 8192;
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r15], [amap, {%r17, %r18}], [%r16];
READ:
  shl.b32 %r12, %r8, 13;
  add.u32 %r12, %r12, %r3;
  shl.b32 %r13, %r1, 6;
  add.u32 %r12, %r12, %r13;
  ld.shared.v4.u32 {%r20, %r21, %r22, %r23}, [%r12];
  xor.b32 %r6, %r6, %r20;
  xor.b32 %r6, %r6, %r21;
  xor.b32 %r6, %r6, %r22;
  xor.b32 %r6, %r6, %r23;
  ld.shared.v4.u32 {%r20, %r21, %r22, %r23}, [%r12+16];
  xor.b32 %r6, %r6, %r20;
  xor.b32 %r6, %r6, %r21;
  xor.b32 %r6, %r6, %r22;
  xor.b32 %r6, %r6, %r23;
  ld.shared.v4.u32 {%r20, %r21, %r22, %r23}, [%r12+32];
  xor.b32 %r6, %r6, %r20;
  xor.b32 %r6, %r6, %r21;
  xor.b32 %r6, %r6, %r22;
  xor.b32 %r6, %r6, %r23;
  ld.shared.v4.u32 {%r20, %r21, %r22, %r23}, [%r12+48];
  xor.b32 %r6, %r6, %r20;
  xor.b32 %r6, %r6, %r21;
  xor.b32 %r6, %r6, %r22;
  xor.b32 %r6, %r6, %r23;
  add.u32 %r7, %r7, 1;
  bra LOOP;
DONE:
  bar.sync 0;
  ld.param.u64 %rd4, [out];
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd4, %rd4, %rd5;
  st.global.u32 [%rd4], %r6;
  @%p1 ret;
  mbarrier.inval.shared::cta.b64 [%r4];
  mbarrier.inval.shared::cta.b64 [%r4+8];
  mbarrier.inval.shared::cta.b64 [%r4+16];
  ret;
}
"""


def matrix(iters, seed=0):
    return np.random.default_rng(seed).integers(0, 1 << 16, (ROWS, 64 * iters), dtype=np.uint16).view(np.float16)


def want(a):
    """The checksums as NumPy computes them: thread t folds chunks 4t..4t+3 of every tile."""
    iters = a.shape[1] // 64
    w = a.view(np.uint32).reshape(ROWS, iters, 32).transpose(1, 0, 2).reshape(iters, 128, 16)
    return np.bitwise_xor.reduce(np.bitwise_xor.reduce(w, axis=2), axis=0)


def launcher(kind, a, race_checks):
    """A function that runs the kernel once on a fresh machine; its out array."""
    k = ptx.Kernel(CP_ASYNC if kind == "cp_async" else TMA)
    out = np.zeros(128, np.uint32)

    def run():
        m = pa.Machine(smem_bytes=32 * 1024, race_checks=race_checks)
        ga, go = m.register(a), m.register(out)
        params = {"out": go, "iters": a.shape[1] // 64}
        if kind == "cp_async":
            params["a"] = ga
        else:
            params["amap"] = pa.TensorMap.tiled("f16", ga.address, [a.shape[1], ROWS], [a.shape[1] * 2], [64, ROWS])
        k.launch(m, block=128, params=params)
        if m.races or m.hazards:
            raise RuntimeError(f"{kind}: {(m.races or m.hazards)[0]}")
    return run, out
