"""A tensor load's result, as a notebook shows it.

``TensorLoad(machine, tmap, coords, dst)`` names one load a kernel issued (or
will issue): while the machine still has it pending it shows that (what tracks
it, the mbarrier's state) and where its box will land; once complete, the box at
its destination: where each element is in shared memory (the layout picture) and
which global coordinate it came from (the provenance picture). The load itself
returns nothing (a handle per issue would cost every tight loop); make one where
you want to look::

    gpu.cp_async_bulk_tensor_load(tmap, (0, 0), 0x400, bar)
    pa.TensorLoad(gpu, tmap, (0, 0), 0x400)      # in Jupyter: pending, then the pictures
"""
__all__ = ["TensorLoad"]

_LOADS = ("cp.async.bulk.tensor (load)",)


class TensorLoad:
    """The load of ``tmap`` at ``coords`` (driver order) to shared address ``dst``
    by CTA ``cta`` on ``machine`` (``load_mode`` / ``im2col_offsets`` as the
    load took them). In a cluster, ``dst`` names the receiving CTA the way the
    instruction does (``mapa(offset, rank)``)."""

    def __init__(self, machine, tmap, coords, dst, cta=0, load_mode="tile", im2col_offsets=None):
        self.machine, self.tmap = machine, tmap
        self.coords = tuple(int(c) for c in coords)
        self.dst, self.cta = int(dst), int(cta)
        # the CTA whose shared memory receives the box: in a cluster, the rank in dst's bits 24+
        self.dst_cta = self.dst >> 24 if machine.nctas > 1 else 0
        self.load_mode, self.im2col_offsets = load_mode, im2col_offsets

    @property
    def pending(self):
        """The machine's pending tensor loads that write this destination
        (a PendingOps list; empty once the load has completed)."""
        from .check import PendingOps
        off = self.dst & 0xFFFFFF
        return PendingOps(op for op in self.machine.pending_ops()
                          if op.kind in _LOADS and op.destination is not None
                          and op.destination["cta"] == self.dst_cta and op.destination["offset"] == off)

    @property
    def complete(self):
        """No load to this destination is pending."""
        return not self.pending

    def box(self, dtype=None):
        """The box as it now sits at the destination, NumPy order, unswizzled (``read_box``)."""
        from .boxes import read_box
        return read_box(self.machine, self.tmap, self.dst & 0xFFFFFF, dtype=dtype, cta=self.dst_cta)

    def provenance(self):
        """Which global coordinate each box element came from (``viz.provenance``)."""
        from .viz import provenance
        return provenance(self.tmap, self.coords, self.load_mode, self.im2col_offsets)

    def __repr__(self):
        p = self.pending
        state = (f"pending ({len(p)} operation{'s' if len(p) != 1 else ''}, tracked by "
                 f"{_tracker(p[0])})" if p else "complete")
        return (f"TensorLoad({self.load_mode} at {self.coords} -> smem[CTA {self.dst_cta}][0x{self.dst & 0xFFFFFF:x}:"
                f"+{self.tmap.box_bytes}]: {state})")

    def _repr_html_(self):
        from .viz.objects import tensor_load_html
        return tensor_load_html(self)


def _tracker(op):
    t = op.tracked_by
    if t is None:
        return "nothing yet"
    if t["kind"] == "mbarrier":
        return f"mbarrier 0x{t['offset']:x}@CTA{t['cta']}"
    return t["kind"]
