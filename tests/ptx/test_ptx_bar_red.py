"""bar.red / barrier.red (PTX ISA 9.7.13.1, "bar{.cta}.red performs a reduction operation across
threads"): the predicate c (or !c) of every thread of the barrier is combined and the result is
written to the destination of every thread once the barrier's count is reached: .popc.u32 the
number of threads whose predicate is true, .and.pred whether all are, .or.pred whether any is.
The expected values are counted here from the inputs."""
import numpy as np
import pytest

from lane_kernel import lane_kernel, run_lanes

PROLOGUE = "    setp.ne.u32 %p1, %r2, 0;\n"


def kernel(lines):
    return lane_kernel(PROLOGUE + lines, words=1)


def run(lines, flags, block):
    return np.array(run_lanes(kernel(lines), flags, block, severities=("error", "warning")), np.uint32)


@pytest.mark.parametrize("block", [32, 96, 256])
def test_popc_counts_the_true_predicates_in_every_thread(block):
    flags = np.random.default_rng(block).integers(0, 2, block)
    out = run("    bar.red.popc.u32 %r1, 0, %p1;", flags, block)
    assert (out == flags.sum()).all()


def test_popc_of_the_negated_predicate():
    flags = np.random.default_rng(1).integers(0, 2, 64)
    out = run("    barrier.red.popc.aligned.u32 %r1, 1, !%p1;", flags, 64)
    assert (out == 64 - flags.sum()).all()


@pytest.mark.parametrize("op,flags,want", [
    ("and", [1] * 64, 1), ("and", [1] * 63 + [0], 0), ("or", [0] * 64, 0), ("or", [0] * 40 + [1] + [0] * 23, 1),
])
def test_and_or_of_the_predicates(op, flags, want):
    out = run(f"    bar.red.{op}.pred %p2, 2, %p1;\n    selp.u32 %r1, 1, 0, %p2;", flags, 64)
    assert (out == want).all()


def test_a_thread_count_reduces_over_the_threads_of_its_barrier():
    # 128 threads: threads 0-63 on barrier 3, 64-127 on barrier 4, each with count 64
    flags = np.random.default_rng(7).integers(0, 2, 128)
    out = run("    shr.u32 %r8, %r9, 6;\n    add.u32 %r8, %r8, 3;\n    bar.red.popc.u32 %r1, %r8, 64, %p1;", flags, 128)
    assert (out[:64] == flags[:64].sum()).all() and (out[64:] == flags[64:].sum()).all()


def test_bar_red_is_a_barrier_for_the_race_checker():
    # a store before bar.red and a load of it after, by another thread: ordered, no race
    lines = """    .shared .b32 s[64];
    mov.u32 %r3, s;
    shl.b32 %r4, %r9, 2;
    add.u32 %r5, %r3, %r4;
    st.shared.b32 [%r5], %r2;
    bar.red.popc.u32 %r6, 0, %p1;
    xor.b32 %r7, %r4, 4;
    add.u32 %r5, %r3, %r7;
    ld.shared.b32 %r1, [%r5];"""
    flags = np.arange(64, dtype=np.uint32) % 3
    out = run_lanes(kernel(lines), flags, 64, checks=True)
    assert out == [int(v) for v in flags[np.arange(64) ^ 1]]
