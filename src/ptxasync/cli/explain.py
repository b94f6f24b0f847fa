"""Explain a tensor map: its fields, its box in shared memory, every rule it breaks.

Give the map one of three ways:
  --hex HEX         the 128-byte CUtensorMap (256 hex digits, spaces allowed)
  --json FILE|TEXT  the driver parameters as JSON, e.g.
                    {"dtype": "bf16", "global_dim": [256, 128], "global_strides": [512],
                     "box_dim": [64, 8], "swizzle": "128B"}
                    (driver names such as globalDim, boxDim, tensorDataType work too;
                     an im2col map has pixel_box_lower/upper, channels_per_pixel,
                     pixels_per_column)
  flags             --dtype --global-dim --global-strides --box-dim ... (driver order:
                    dimension 0 innermost, as cuTensorMapEncodeTiled takes them)

examples:
  ptxasync explain --dtype bf16 --global-dim 256 128 --global-strides 512 --box-dim 64 8 --swizzle 128B
  ptxasync explain --json '{"dtype": "f32", "global_dim": [100], "box_dim": [3]}'
  ptxasync explain --hex "$(xxd -p map.bin)" -o map.png

exit status: 0 a valid map, 1 the map breaks a rule (each one is listed),
2 unreadable input.
"""
import json
import os
import re

from .common import add_output, integer, shared_address, write_picture

NAME = "explain"
HELP = "explain a tensor map (flags, JSON or 128 bytes of hex): fields, box, rules it breaks"

ALIASES = {"tensorDataType": "dtype", "tensorRank": "rank", "globalAddress": "global_address",
           "globalDim": "global_dim", "globalStrides": "global_strides", "boxDim": "box_dim",
           "elementStrides": "element_strides", "l2Promotion": "l2_promotion", "oobFill": "oob_fill",
           "pixelBoxLowerCorner": "pixel_box_lower", "pixelBoxUpperCorner": "pixel_box_upper",
           "channelsPerPixel": "channels_per_pixel", "pixelsPerColumn": "pixels_per_column"}
KEYS = {"kind", "dtype", "rank", "global_address", "global_dim", "global_strides", "box_dim",
        "element_strides", "interleave", "swizzle", "l2_promotion", "oob_fill", "pixel_box_lower",
        "pixel_box_upper", "channels_per_pixel", "pixels_per_column"}
IM2COL_ONLY = {"pixel_box_lower", "pixel_box_upper", "channels_per_pixel", "pixels_per_column"}
ENUMS = {"dtype": "DataType", "interleave": "Interleave", "swizzle": "Swizzle", "l2_promotion": "L2Promotion",
         "oob_fill": "OOBFill"}


def add_arguments(p):
    src = p.add_argument_group("the map")
    src.add_argument("--hex", help="the 128 bytes of a CUtensorMap as hex")
    src.add_argument("--json", help="driver parameters as a JSON object, or a file holding one")
    src.add_argument("--im2col", action="store_true", help="flags describe cuTensorMapEncodeIm2col")
    src.add_argument("--dtype", help="tensorDataType (bf16, f32, u8, CU_TENSOR_MAP_DATA_TYPE_*, ...)")
    src.add_argument("--global-address", type=integer, default=None)
    src.add_argument("--global-dim", type=integer, nargs="+", metavar="N")
    src.add_argument("--global-strides", type=integer, nargs="*", metavar="BYTES", default=None)
    src.add_argument("--box-dim", type=integer, nargs="+", metavar="N")
    src.add_argument("--element-strides", type=integer, nargs="+", metavar="N")
    src.add_argument("--interleave", default=None)
    src.add_argument("--swizzle", default=None)
    src.add_argument("--l2-promotion", default=None)
    src.add_argument("--oob-fill", default=None)
    src.add_argument("--pixel-box-lower", type=integer, nargs="+", metavar="N")
    src.add_argument("--pixel-box-upper", type=integer, nargs="+", metavar="N")
    src.add_argument("--channels-per-pixel", type=integer)
    src.add_argument("--pixels-per-column", type=integer)
    p.add_argument("--dst", type=integer, default=0, help="shared destination for the picture")
    add_output(p, "layout")


def _flag(key):
    return "--" + key.replace("_", "-")


def params_from_args(args):
    """The driver parameters the flags give (None for --hex), checked for what
    is a usage error rather than a driver rule: flags beside --hex / --json,
    a parameter the map's kind does not take, a name no enum has."""
    from . import UsageError
    given = [_flag(k) for k in sorted(KEYS - {"kind", "rank"}) if getattr(args, k, None) is not None]
    given += ["--im2col"] if args.im2col else []
    if args.hex is not None or args.json is not None:
        src = "--hex" if args.hex is not None else "--json"
        if args.hex is not None and args.json is not None:
            raise UsageError("give the map once: --hex or --json, not both")
        if given:
            raise UsageError(f"{src} gives the whole map: drop {', '.join(given)}"
                             + (" (or put them in the JSON)" if src == "--json" else ""))
    if args.hex is not None:
        return None
    if args.json is not None:
        text = args.json
        if os.path.isfile(text):
            with open(text, encoding="utf-8") as f:
                text = f.read()
        elif not text.lstrip().startswith(("{", "[")):
            raise UsageError(f"--json {text!r}: no such file (give a file name or the JSON itself)")
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise UsageError(f"--json: not JSON ({e})") from None
        if not isinstance(obj, dict):
            raise UsageError("--json: expected a JSON object of driver parameters")
        p = {}
        for k, v in obj.items():
            k2 = ALIASES.get(k, k)
            if k2 not in KEYS:
                raise UsageError(f"--json: unknown parameter {k!r} (known: {', '.join(sorted(KEYS))})")
            p[k2] = v
        if "kind" not in p:
            p["kind"] = "im2col" if "pixels_per_column" in p else "tiled"
        return _checked(p, lambda k: f"--json {k!r}")
    p = {"kind": "im2col" if args.im2col else "tiled"}
    for k in KEYS - {"kind", "rank"}:
        v = getattr(args, k, None)
        if v is not None:
            p[k] = v
    return _checked(p, _flag)


def _checked(p, name):
    """``p`` with its enum names parsed; a usage error for a parameter the kind
    of map does not take, a rank that is not the number of dimensions, or a name
    no enum has (``name(key)`` says how the user wrote the key)."""
    import ptxasync as pa
    from . import UsageError
    if p["kind"] not in ("tiled", "im2col"):
        raise UsageError(f"{name('kind')}: {p['kind']!r} is not a kind explain takes (tiled, im2col)")
    wrong = sorted(k for k in p if (k == "box_dim") == (p["kind"] == "im2col") and k in IM2COL_ONLY | {"box_dim"})
    if wrong:
        if p["kind"] == "im2col":
            raise UsageError(f"{', '.join(name(k) for k in wrong)}: an im2col map has no box dimensions "
                             "(cuTensorMapEncodeIm2col takes the pixel box corners, channels per pixel and "
                             "pixels per column)")
        raise UsageError(f"{', '.join(name(k) for k in wrong)}: parameters of an im2col map (add --im2col, or "
                         '"kind": "im2col" in JSON)')
    if "rank" in p:
        if not isinstance(p["rank"], int) or p["rank"] != len(p.get("global_dim") or []):
            raise UsageError(f"{name('rank')}: {p['rank']!r} is not the number of global dimensions "
                             f"({len(p.get('global_dim') or [])})")
        del p["rank"]
    for k, cls in ENUMS.items():
        if isinstance(p.get(k), str):
            try:
                p[k] = pa.enums.parse(getattr(pa, cls), p[k])
            except ValueError as e:
                raise UsageError(f"{name(k)}: {e}") from None
    return p


def _encode(p):
    import ptxasync as pa
    need = ["dtype", "global_dim"] + (["box_dim"] if p["kind"] == "tiled" else
                                      ["pixel_box_lower", "pixel_box_upper", "channels_per_pixel",
                                       "pixels_per_column"])
    missing = [k for k in need if k not in p]
    if missing:
        from . import UsageError
        raise UsageError(f"missing parameter(s): {', '.join(missing)}")
    kw = {k: v for k, v in p.items() if k not in ("kind",)}
    kw.setdefault("global_address", 0)
    kw.setdefault("global_strides", _packed_strides(p))
    fn = pa.TensorMap.tiled if p["kind"] == "tiled" else pa.TensorMap.im2col
    return fn(**kw)


def _packed_strides(p):
    """Strides of a packed tensor when none are given (bytes, rounded up to 16)."""
    import ptxasync as pa
    try:
        es = pa._core.dtype_info(int(pa.enums.parse(pa.DataType, p["dtype"])))["bytes"] or 1
    except Exception:
        es = 1
    dims = list(p["global_dim"])
    acc = -(-dims[0] * es // 16) * 16
    out = []
    for d in dims[1:]:
        out.append(acc)
        acc *= d
    return out


_NAME = re.compile(r"(tensorDataType|interleave|swizzle|l2Promotion|oobFill|globalAddress|globalDim|"
                   r"globalStrides|elementStrides|boxDim|pixelBoxLowerCorner|pixelBoxUpperCorner|"
                   r"channelsPerPixel|pixelsPerColumn)(?:\[(\d+)\])?")


def _neutralise(p, name, idx, msg):
    """Set the parameter a rule named to a harmless value, so that encoding again
    reports the next rule (the core reports one rule per call, in driver order)."""
    import ptxasync as pa
    key = ALIASES.get(name, name)
    if key == "dtype":
        p["dtype"] = "f16"
    elif key in ("interleave", "swizzle", "l2_promotion", "oob_fill"):
        p[key] = 0
    elif key == "global_address":
        p[key] = 0
    elif key in ("pixel_box_lower", "pixel_box_upper"):
        p[key] = [0] * len(p[key])
    elif key == "channels_per_pixel" or (key == "box_dim" and idx == 0 and "elementSize" in msg):
        es = pa._core.dtype_info(int(pa.enums.parse(pa.DataType, p["dtype"])))["bytes"] or 1
        if key == "box_dim":
            p[key] = list(p[key])
            p[key][0] = max(1, 16 // es)
        else:
            p[key] = max(1, 16 // es)
    elif key == "pixels_per_column":
        p[key] = min(max(1, int(p[key])), 1024)
    elif idx is not None and key in p:
        vals = list(p[key] if key != "global_strides" else p.get(key, _packed_strides(p)))
        i = int(idx)
        if i >= len(vals):
            return False
        v = int(vals[i])
        vals[i] = {"global_dim": min(max(v, 1), 1 << 32), "global_strides": max(0, min(v, (1 << 40) - 32)) // 32 * 32,
                   "element_strides": 1, "box_dim": min(max(v, 1), 256)}[key]
        p[key] = vals
    else:
        return False
    return True


def _params_of(tm):
    """Driver parameters of a decoded map (what cuTensorMapEncode* would be given)."""
    f = tm.fields
    p = {k: f[k] for k in ("dtype", "global_address", "global_dim", "global_strides", "element_strides",
                           "interleave", "swizzle", "l2_promotion", "oob_fill")}
    p = {k: (int(v) if hasattr(v, "value") else v) for k, v in p.items()}
    p["kind"] = f["kind"]
    if f["kind"] == "tiled":
        p["box_dim"] = f["box_dim"]
    else:
        for k in ("pixel_box_lower", "pixel_box_upper", "channels_per_pixel", "pixels_per_column"):
            p[k] = f[k]
    return p


def broken_rules(p):
    """(rules, map): every rule the parameters break, each as the core words it,
    and the map when none is broken."""
    import ptxasync as pa
    from . import UsageError
    p = dict(p)
    rules, seen = [], set()
    for _ in range(24):
        try:
            tm = _encode(p)
            return rules, (tm if not rules else None)
        except (TypeError, ValueError) as e:
            if not isinstance(e, pa.InvalidValue):   # no driver rule: parameters of the wrong shape or type
                raise UsageError(str(e)) from None
            msg = str(e)
            if msg in rules:       # neutralising its parameter did not lift it: said once
                return rules, None
            rules.append(msg)
            m = _NAME.search(msg)
            if m is None or (m.group(1), m.group(2)) in seen:
                return rules, None
            seen.add((m.group(1), m.group(2)))
            if not _neutralise(p, m.group(1), m.group(2), msg):
                return rules, None
    return rules, None


def differing_bytes(given, driver):
    """The note for bytes that decode to valid fields but are not what the
    driver writes for them: each differing byte, and whether bits are set that
    the driver leaves clear or clear that it sets."""
    diff = [i for i in range(128) if given[i] != driver[i]]
    extra = any(given[i] & ~driver[i] for i in diff)
    missing = any(driver[i] & ~given[i] for i in diff)
    how = " and ".join(w for w, on in (("set bits the driver leaves clear", extra),
                                      ("clear bits the driver sets", missing)) if on)
    shown = ", ".join(f"byte {i}: 0x{given[i]:02x} here, 0x{driver[i]:02x} from the driver" for i in diff[:8])
    return (f"note: cuTensorMapEncode* writes different bytes for these fields; these bytes {how} "
            f"({shown}{', ...' if len(diff) > 8 else ''})")


def run(args):
    import ptxasync as pa
    from .. import viz
    from . import UsageError
    shared_address(args.dst)
    p = params_from_args(args)
    if p is None:
        digits = re.sub(r"\s+", "", args.hex)
        try:
            raw = bytes.fromhex(digits)
        except ValueError:
            raise UsageError("--hex: not hexadecimal") from None
        if len(raw) != 128:
            raise UsageError(f"--hex: a CUtensorMap is 128 bytes, got {len(raw)}")
        try:
            tm = pa.TensorMap.from_bytes(raw)
        except (pa.PtxAsyncError, ValueError) as e:
            print("the bytes hold no valid tensor map:")
            print(f"  - {e}")
            return 1
        if not tm.decodes:
            rules = ["the bytes decode to no map (rank field 5-7)"]
        else:
            # the decoded fields through the driver's checks: every rule they break,
            # and whether the driver would write these very bytes
            rules, again = broken_rules(_params_of(tm))
            if not rules and bytes(again) != raw:
                print(differing_bytes(raw, bytes(again)) + "\n")
    else:
        rules, tm = broken_rules(p)
    if rules:
        print(f"this map breaks {len(rules)} rule{'s' if len(rules) > 1 else ''} "
              "(as cuTensorMapEncode* checks them, in its order):")
        for r in rules:
            print(f"  - {r}")
        if len(rules) > 1:
            print("  (each rule after the first was found with the parameters named before it set to "
                  "a valid value)")
        return 1
    print(repr(tm))
    lay = tm.box_layout
    addrs = tm.smem_addresses(args.dst)
    foot = int(addrs.max()) + lay["esize"] - args.dst
    print(f"\nbox in shared memory: {lay['rows']} rows of {lay['row_bytes']} B, pitch {lay['pitch']} B; "
          f"the load credits {lay['tx_bytes']} B to the mbarrier and spans {foot} B from dst 0x{args.dst:x}")
    print("rules broken: none (the driver encodes this map)")
    if args.output:
        write_picture(viz.layout_scene(tm, args.dst), args.output)
    else:
        print()
        print(viz.layout_text(tm, args.dst))
    return 0
