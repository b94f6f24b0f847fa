"""Immediates and targets ptxas bounds beyond the syntax tables (rules.c), each verdict written as
ptxas 13.0 and 13.5 give it (a message in the comment) and, where a ptxas is installed, asked of
it live."""
import pytest

from ptxasync import ptx
from ptx_forms import judges, ptxas_verdict


def module(line, target="sm_90a", version="8.7"):
    return (f".version {version}\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n"
            "  .reg .b64 rd<4>;\n  .reg .b32 r<8>;\n" + f"  {line}\n  ret;\n}}\n")


BULK = "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [r1], [rd1], {}, [r2];"
CASES = [
    # cp.async.bulk's size: a multiple of 16 in [0, 1048560], read as a 32-bit integer
    (BULK.format(32), "sm_90a", "8.7", True),
    (BULK.format(0), "sm_90a", "8.7", True),
    (BULK.format(4294967296), "sm_90a", "8.7", {"13.0": True, "13.5": False}),   # 13.0 reads 2^32 as 0
    (BULK.format(20), "sm_90a", "8.7", False),                 # "expected to be multiple of 16"
    (BULK.format(-16), "sm_90a", "8.7", False),                # "expected to be in range [0..1048560]"
    (BULK.format(4294967280), "sm_90a", "8.7", False),         # "value '-16' out of range"
    ("cp.async.bulk.global.shared::cta.bulk_group [rd1], [r1], 1048576;", "sm_90a", "8.7", False),
    ("cp.async.bulk.global.shared::cta.bulk_group [rd1], [r1], 1048560;", "sm_90a", "8.7", True),
    ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [rd1], [r1], 20;", "sm_90a", "8.7", False),
    ("cp.async.bulk.prefetch.L2.global [rd1], 20;", "sm_90a", "8.7", False),
    ("cp.async.bulk.prefetch.L2.global [rd1], 0;", "sm_90a", "8.7", True),
    # tensormap.replace.elemtype 13-15 (the sub-byte types): not on sm_90a ("expected to be in range [0..12]")
    ("tensormap.replace.tile.global.b1024.elemtype.b32 [rd1], 13;", "sm_90a", "8.7", False),
    ("tensormap.replace.tile.global.b1024.elemtype.b32 [rd1], 12;", "sm_90a", "8.7", True),
    ("tensormap.replace.tile.global.b1024.elemtype.b32 [rd1], 15;", "sm_100a", "8.7", True),
    # mbarrier.arrive.noComplete with a count on sm_80 (noComplete is in the root, not a slot)
    ("mbarrier.arrive.noComplete.shared.b64 rd1, [r1], 1;", "sm_80", "7.0", True),
    ("mbarrier.arrive.shared.b64 rd1, [r1], 1;", "sm_80", "7.0", False),   # "requires .noComplete"
    # cp.reduce.async.bulk.tensor takes .tile::scatter4 as the tensor store does (not in the ISA's
    # syntax block; ptxas 13.0 and 13.5 assemble it on sm_100a from PTX 8.6)
    ("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile::scatter4.bulk_group [rd1, {r1, r2, r3, r4, r5}], [r6];",
     "sm_100a", "8.6", True),
    ("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile::scatter4.bulk_group [rd1, {r1, r2, r3, r4, r5}], [r6];",
     "sm_90a", "8.7", False),     # "not supported on .target 'sm_90a'"
    # st.bulk's address: a register, named with or without %
    ("st.bulk.weak [rd1], 32, 0;", "sm_100a", "8.6", True),
]


def verdict(ok, release):
    return ok[release] if isinstance(ok, dict) else ok


@pytest.mark.parametrize("release", ["13.0", "13.5"])
@pytest.mark.parametrize("line,target,version,ok", CASES)
def test_check_gives_ptxas_s_verdict(line, target, version, ok, release):
    d = ptx.check(module(line, target, version), ptxas=release)
    assert (not any(x.severity == "error" for x in d)) == verdict(ok, release), d


@pytest.mark.parametrize("release,path", judges())
def test_the_verdicts_are_ptxas_s(release, path):
    for line, target, version, ok in CASES:
        v = ptxas_verdict(module(line, target, version), target, path)
        if v.crash:
            continue
        assert v.accepted == verdict(ok, release), (release, line, target, v.message)
