"""Encode diff: cuTensorMapEncodeTiled / Im2col / Im2colWide through the real
driver next to the model's encoder, with the same parameters and address.

Both must give the same verdict (CUDA_SUCCESS or not) and, on success, the same
128 bytes. The tensor map embeds the global address; both encoders are given
the same one, so every byte compares as it is (``address_bytes`` says where it
sits, for comparisons against a recording made at another address).
"""
from .. import _core
from .program import MapRef

__all__ = ["EncodeDiff", "encode_driver", "encode_diff", "ADDRESS_BYTES"]

ADDRESS_BYTES = range(0, 8)     # bytes 0-7 of a tensor map hold the global address


def encode_driver(kind, args):
    """(CUresult name, 128 bytes or None) from the driver (in the GPU worker)."""
    from .runner import _require, worker
    _require()
    ans = worker().request({"op": "encode", "kind": kind, "args": args})
    if ans.get("error") == "not_expressible":
        from ._driver import NotExpressible
        raise NotExpressible(ans["message"])
    if ans.get("error"):
        raise RuntimeError(ans.get("message", ans["error"]))
    return tuple(ans["result"])


class EncodeDiff:
    """``.same``; ``.driver`` (result name, bytes); ``.model`` (ok, bytes or the message)."""

    def __init__(self, kind, args, driver, model):
        self.kind, self.args, self.driver, self.model = kind, args, driver, model
        name, raw = driver
        ok, mraw, msg = model
        if (raw is not None) != ok:
            self.problem = (f"verdict: driver {name}, model "
                            f"{'CUDA_SUCCESS' if ok else 'CUDA_ERROR_INVALID_VALUE (' + msg + ')'}")
        elif ok and raw != mraw:
            k = next(j for j in range(128) if raw[j] != mraw[j])
            self.problem = f"byte {k}: driver 0x{raw[k]:02x}, model 0x{mraw[k]:02x}"
        else:
            self.problem = None

    @property
    def same(self):
        return self.problem is None

    def __bool__(self):
        return self.same

    def __str__(self):
        return f"{self.kind}: " + ("driver and model agree" if self.same else self.problem)


def encode_model(kind, args):
    """(ok, 128 bytes or None, message) from the model."""
    m = MapRef(0, kind, int(args["global_address"]), {k: v for k, v in args.items() if k != "global_address"})
    try:
        return True, bytes(m.model([])), "CUDA_SUCCESS"
    except _core.InvalidValue as e:
        return False, None, str(e)


def encode_diff(kind="tiled", **args):
    """Encode with both: ``kind`` "tiled", "im2col" or "im2col_wide"; ``args`` the
    driver's parameters in driver order as plain integers (``dtype``, ``rank``,
    ``global_address``, ``global_dim``, ``global_strides``, ``box_dim`` or the
    im2col ones, ``element_strides``, ``interleave``, ``swizzle``,
    ``l2_promotion``, ``oob_fill``; im2col_wide adds ``mode``)."""
    args = dict(args)
    args.setdefault("rank", len(args["global_dim"]))
    args.setdefault("element_strides", [1] * len(args["global_dim"]))
    for k in ("interleave", "swizzle", "l2_promotion", "oob_fill"):
        args.setdefault(k, 0)
    return EncodeDiff(kind, args, encode_driver(kind, args), encode_model(kind, args))
