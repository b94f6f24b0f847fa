"""The C core's vector levels (csrc/core/simd.h), for tests that run one path at
each level the CPU has: every level must compute the same bytes."""
import contextlib

import pytest

from ptxasync import _core

SIMD_NAMES = ["none", "sse2", "avx2", "avx512"]
CPU_LEVEL = SIMD_NAMES.index(_core.simd_level()[1])


@contextlib.contextmanager
def vector_level(level):
    """The core capped at `level` inside the block (the test skipped where the CPU
    lacks it), and no cap after it."""
    if level > CPU_LEVEL:
        pytest.skip(f"this CPU has no {SIMD_NAMES[level]}")
    _core.simd_level(level)
    assert _core.simd_level()[0] == SIMD_NAMES[level]
    try:
        yield level
    finally:
        _core.simd_level(len(SIMD_NAMES) - 1)
