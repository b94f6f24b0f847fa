"""A slow, obvious statement of cp.async and cp.async.bulk, written from the PTX
ISA text and the golden README (observation 13, C4, C5, C9, C10, C13-C16) alone,
for the property tests. Plain Python on bytearrays; nothing from ptxasync.

Memory: global is one bytearray at GBASE; shared memory is one bytearray per
CTA; a shared::cluster address is rank << 24 | offset.
"""
GBASE = 0x100000


class Rejected(Exception):
    """The operation breaks a rule; kind is 'value', 'align', 'address' or 'instruction'."""

    def __init__(self, kind, why):
        super().__init__(why)
        self.kind = kind


class World:
    def __init__(self, nctas, smem_bytes, gbytes):
        self.smem = [bytearray(smem_bytes) for _ in range(nctas)]
        self.glob = bytearray(gbytes)
        self.tx = [dict() for _ in range(nctas)]       # offset -> bytes credited
        self.pending = []                              # copies not yet done, in issue order
        self.committed = {}                            # thread -> groups committed
        self.nctas = nctas

    # --- cp.async ----------------------------------------------------------------
    def cp_async(self, thread, dst, src, cp_size, src_size=None, ignore_src=False, cg=False):
        if cp_size not in (4, 8, 16):
            raise Rejected("value", "cp-size")
        if cg and cp_size != 16:
            raise Rejected("value", ".cg needs 16")
        n = cp_size if src_size is None else src_size
        if n > cp_size:
            raise Rejected("value", "src-size > cp-size")
        if dst % cp_size or src % cp_size:
            raise Rejected("align", "cp-size alignment")
        if dst + cp_size > len(self.smem[0]):
            raise Rejected("address", "dst outside shared memory")
        if ignore_src:
            n = 0
        if n and not (GBASE <= src and src + n <= GBASE + len(self.glob)):
            raise Rejected("address", "src outside global memory")
        self.pending.append({"thread": thread, "group": None, "dst": dst, "data_src": (src, n, cp_size)})

    def commit(self, thread):
        g = self.committed.get(thread, 0)
        for op in self.pending:
            if op["thread"] == thread and op["group"] is None:
                op["group"] = g
        self.committed[thread] = g + 1

    def wait_group(self, thread, n):
        limit = self.committed.get(thread, 0) - n
        keep = []
        for op in self.pending:
            if op["thread"] == thread and op["group"] is not None and op["group"] < limit:
                self._do_cp(op)
            else:
                keep.append(op)
        self.pending = keep

    def _do_cp(self, op):
        src, n, size = op["data_src"]
        data = bytes(self.glob[src - GBASE:src - GBASE + n]) + bytes(size - n)
        self.smem[0][op["dst"]:op["dst"] + size] = data

    # --- cp.async.bulk (done at once: the property tests wait for everything) ------
    def bulk(self, issuer, direction, dst, src, size, mbar=None, cta_mask=None):
        """direction: 'g2s_cta', 'g2s_cluster', 's2s', 's2g'."""
        if size % 16:
            raise Rejected("value", "size not a multiple of 16")
        if dst % 16 or src % 16:
            raise Rejected("align", "16-byte alignment")
        smem_bytes = len(self.smem[0])
        if direction in ("g2s_cta", "g2s_cluster"):
            if not (GBASE <= src and src + size <= GBASE + len(self.glob)):
                raise Rejected("address", "src outside global memory")
            data = bytes(self.glob[src - GBASE:src - GBASE + size])
            # a CTA sees its own shared memory at rank << 24 | offset (golden C1);
            # .shared::cta names the executing CTA only
            rank, off = dst >> 24, dst & 0xFFFFFF
            if direction == "g2s_cta" and rank != issuer or rank >= self.nctas or off + size > smem_bytes:
                raise Rejected("address", "dst outside shared memory")
            if cta_mask is None:
                ranks = [rank]
            else:
                if cta_mask >> self.nctas:
                    raise Rejected("instruction", "ctaMask beyond the cluster")
                ranks = [r for r in range(self.nctas) if (cta_mask >> r) & 1]
        else:
            s_rank, s_off = src >> 24, src & 0xFFFFFF
            if s_rank != issuer or s_off + size > smem_bytes:
                raise Rejected("address", "src outside shared memory")
            data = bytes(self.smem[issuer][s_off:s_off + size])
            if direction == "s2g":
                if not (GBASE <= dst and dst + size <= GBASE + len(self.glob)):
                    raise Rejected("address", "dst outside global memory")
                self.glob[dst - GBASE:dst - GBASE + size] = data
                return
            rank, off = dst >> 24, dst & 0xFFFFFF
            if rank >= self.nctas or off + size > smem_bytes:
                raise Rejected("address", "dst outside shared memory")
            ranks = [rank]
        for r in ranks:
            self.smem[r][off:off + size] = data
            b = mbar & 0xFFFFFF
            self.tx[r][b] = self.tx[r].get(b, 0) + size
