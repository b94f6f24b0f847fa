"""What every golden family checker shares: decoding a case, encoding its
tensor map the way the driver did, and naming the first differing byte."""
import numpy as np

from .. import _core
from ..tensormap import TensorMap

PREFILL = 0xA5
SMEM_BYTES = 200 * 1024     # every recorded single-CTA launch had 200 KiB
MBAR = 1024                  # below the recorded regions (which start at 2048)
# Padding around a recorded global window: interleaved maps read and write past it.
PAD = 64 * 1024
PAD_AFTER = 1024 * 1024


# The most global memory one case may ask for: a case whose windows lie
# further apart is refused as bad input rather than allocated.
MAX_WINDOW_SPAN = 64 * 1024 * 1024


class Unsupported(Exception):
    """The case uses something the model does not cover yet."""


class BadInput(Exception):
    """The file or case is not in the recorded format (a message naming it)."""


class NoCase(BadInput):
    """The file reads, but holds no case: it is not a file of recorded results
    (tests/data/ also keeps other data, e.g. the ptxas probe)."""


def hexbytes(s):
    return bytes.fromhex(s)


def first_diff(got, want):
    got, want = bytes(got), bytes(want)
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return f"byte {i}: model 0x{a:02x}, hardware 0x{b:02x}"
    if len(got) != len(want):
        return f"length: model {len(got)}, hardware {len(want)}"
    return None


def register_window(m, case, pad_byte):
    """Make a load case's recorded global windows the machine's global memory
    (tensormap_replace_load records a second tensor, global_address2), in one
    buffer padded with pad_byte: interleaved maps read past the window (their
    dim-0 bound may exceed the row stride), and those bytes are unknown."""
    windows = []
    for sfx in ("", "2"):
        if f"global_window{sfx}_hex" in case:
            addr = int(case[f"global_address{sfx}"], 16) + case["global_window_offset"]
            windows.append((addr, hexbytes(case[f"global_window{sfx}_hex"])))
    start = min(a for a, _ in windows) - PAD
    end = max(a + len(w) for a, w in windows) + PAD + PAD_AFTER
    if end - start > MAX_WINDOW_SPAN:
        raise BadInput(f"the global windows span {end - start} bytes, more than the "
                       f"{MAX_WINDOW_SPAN}-byte limit of one case")
    mem = np.full(end - start, pad_byte, dtype=np.uint8)
    for a, w in windows:
        mem[a - start:a - start + len(w)] = np.frombuffer(w, dtype=np.uint8)
    return m.register(mem, address=start)


def encode(p, address):
    """The tensor map of a recorded case, encoded by the model."""
    common = dict(dtype=p["tensorDataType_value"], global_address=address,
                  global_dim=p["globalDim"], global_strides=p["globalStrides"],
                  element_strides=p["elementStrides"], interleave=p["interleave_value"],
                  swizzle=p["swizzle_value"], l2_promotion=p["l2Promotion_value"],
                  oob_fill=p["oobFill_value"], rank=p["tensorRank"])
    if p["encode_function"] == "cuTensorMapEncodeTiled":
        return TensorMap.tiled(box_dim=p["boxDim"], **common)
    return TensorMap.im2col(pixel_box_lower=p["pixelBoxLowerCorner"],
                            pixel_box_upper=p["pixelBoxUpperCorner"],
                            channels_per_pixel=p["channelsPerPixel"],
                            pixels_per_column=p["pixelsPerColumn"], **common)


def check_map(case, tm):
    want = case.get("tensormap_hex")
    if want:
        d = first_diff(bytes(tm), hexbytes(want))
        if d:
            return f"tensor map bytes differ at {d}"
    return None


def encode_as_recorded(case, p, addr):
    """(map, None) when both the driver and the model accepted the parameters;
    (None, None) when both rejected them (nothing more to run); else a failure."""
    try:
        tm = encode(p, addr)
    except _core.InvalidValue as e:
        if case.get("encode_result", 0) != 0:
            return None, None
        return None, f"model rejected the map the driver accepted: {e}"
    if case.get("encode_result", 0) != 0:
        return None, f"model accepted the map the driver rejected ({case.get('encode_result_name')})"
    return tm, None


def expect_error(case, exc):
    """None if the hardware recorded the error that the model raised."""
    want = case.get("error")
    names = {_core.IllegalInstruction: "cudaErrorIllegalInstruction",
             _core.IllegalAddress: "cudaErrorIllegalAddress",
             _core.MisalignedAddress: "cudaErrorMisalignedAddress"}
    got = next((n for cls, n in names.items() if isinstance(exc, cls)), None)
    if want and want == got:
        return None
    if want:
        return f"hardware raised {want}; model raised {type(exc).__name__}: {exc}"
    return f"model raised {type(exc).__name__} ({exc}); hardware completed"


