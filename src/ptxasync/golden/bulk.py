"""Non-tensor bulk families: bulk_reduce."""
import numpy as np

from .. import _core
from ..machine import Machine
from .common import SMEM_BYTES, Unsupported, expect_error, first_diff, hexbytes


def check_bulk_reduce(case):
    """cp.reduce.async.bulk.global.shared::cta.bulk_group.<op>.<type>: the recorded
    window reduced with the shared region, after commit_group; wait_group 0."""
    p = case["params"]
    if p.get("probe"):
        raise Unsupported(f"probe {p['probe']!r}")
    before = hexbytes(case["global_before_hex"])
    window = np.frombuffer(before, dtype=np.uint8).copy()
    m = Machine(ctas=1, smem_bytes=SMEM_BYTES)
    addr = int(case["global_address"], 16)
    m.register(window, address=addr)
    region = case["smem_region_addr"]
    src = hexbytes(case["smem_before_hex"])
    m.smem[region:region + len(src)] = np.frombuffer(src, dtype=np.uint8)
    try:
        m.cp_reduce_async_bulk(p["redop"], p["type"], addr + p["global_dst_offset"],
                               region + p["smem_src_offset"], p["size"], noftz=p["noftz"])
        m.cp_async_bulk_commit_group()
        m.cp_async_bulk_wait_group(0)
    except (_core.IllegalInstruction, _core.IllegalAddress, _core.MisalignedAddress) as e:
        return expect_error(case, e)
    if case.get("error"):
        return f"hardware raised {case['error']}; model completed"
    d = first_diff(window, hexbytes(case["global_after_hex"]))
    if d:
        return f"global memory {d} (window offset)"
    d = first_diff(m.smem[region:region + len(src)], src)
    return f"source region changed: {d}" if d else None


FAMILIES = {
    "bulk_reduce": check_bulk_reduce,
}
