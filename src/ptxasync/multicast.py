"""Multicast objects: one address range naming a location in each of several devices'
memories, the addresses multimem.ld_reduce / multimem.st / multimem.red work on
(PTX ISA 9.7.9.14; CUDA's cuMulticastCreate, cuMulticastBindMem and cuMemMap).

A device is a ``Machine``, or a buffer of one: the copies may be GlobalBuffers of several
Machines (one each) or of one Machine. The window is mapped at one address in every
Machine that holds a copy; a kernel launched on any of them issues multimem.* on it::

    devs = [pa.Machine() for _ in range(4)]
    bufs = [d.register(np.full(256, k, np.float32)) for k, d in enumerate(devs)]
    mc = pa.Multicast(bufs)              # mc.address: the multimem address
    kernel.launch(devs[0], 1, 32, params={"p": mc.address})

Only multimem.* instructions access the window: ld, st, atom and every other access to it
raise IllegalAddress (the ISA: undefined), and a multimem.* instruction on any other
address raises IllegalAddress naming its PTX line.
"""
import operator

from .machine import GlobalBuffer

__all__ = ["Multicast"]

MAX_COPIES = 16


class Multicast:
    """A multicast object over ``copies`` (GlobalBuffers, 1 to 16, in device order: the
    order ld_reduce and red reduce them in), ``size`` bytes (default: the smallest copy's),
    mapped at ``address`` (default: a free address of every Machine holding a copy,
    aligned to ``align``)."""

    def __init__(self, copies, size=None, address=None, align=256):
        copies = list(copies)
        if not 1 <= len(copies) <= MAX_COPIES:
            raise ValueError(f"a multicast object binds 1 to {MAX_COPIES} copies ({len(copies)} given)")
        for k, b in enumerate(copies):
            if not isinstance(b, GlobalBuffer):
                raise TypeError(f"copy {k} is a {type(b).__name__}; a multicast object binds GlobalBuffers "
                                "(Machine.register / alloc)")
            if b._id is None:
                raise ValueError(f"copy {k} ({b!r}) has been freed")
        if len({id(b) for b in copies}) != len(copies):
            raise ValueError("a buffer is bound twice: each copy is another device's memory")
        size = min(b.nbytes for b in copies) if size is None else operator.index(size)
        if size <= 0:
            raise ValueError(f"a multicast object needs at least 1 byte (size {size})")
        for k, b in enumerate(copies):
            if b.nbytes < size:
                raise ValueError(f"copy {k} has {b.nbytes} bytes, fewer than the multicast object's {size}")
        machines = []
        for b in copies:
            if not any(m is b._machine for m in machines):
                machines.append(b._machine)
        if address is None:
            address = machines[0]._pick_address(size, align)
        address = operator.index(address)
        self.copies = copies
        self.nbytes = size
        self.address = address
        self._maps = []                      # (machine, window id)
        try:
            for m in machines:
                local = [b.address if b._machine is m else None for b in copies]
                self._maps.append((m, m._add_multicast(address, size, [b.bytes for b in copies], local)))
        except BaseException:
            self.free()
            raise
        for m in machines:
            m._multicasts.append(self)
        for b in copies:
            b._bound.append(self)

    @property
    def machines(self):
        """The Machines the window is mapped in."""
        return [m for m, _ in self._maps]

    def free(self):
        """Unmap the window from every Machine and unbind the copies (they keep their bytes)."""
        for m, wid in self._maps:
            m._remove_buffer(wid)
            if self in m._multicasts:
                m._multicasts.remove(self)
        self._maps = []
        for b in self.copies:
            if self in b._bound:
                b._bound.remove(self)

    def __repr__(self):
        return (f"Multicast(address=0x{self.address:x}, nbytes={self.nbytes}, copies={len(self.copies)}, "
                f"machines={len(self._maps)})")
