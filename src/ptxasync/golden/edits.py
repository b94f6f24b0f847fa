"""Tensor-map edit families: tensormap_replace, tensormap_replace_load.

Rules cited are the golden README's R1-R5 (section "Tensor-map edits and
mbarrier semantics")."""
from .. import _core
from .common import encode, encode_as_recorded, first_diff, hexbytes
from .tensor import _check_one_load

# R3: the readings of new_val under which the edited map is the driver's map
# (interpretation names up to the first space; the other readings never matched).
R3_READINGS = {"address", "zero_based", "value", "bytes", "ptx_table", "target"}
# Rejected forms ran nowhere, so no address was recorded: any aligned one will do.
ARENA = 0x7F0000000000


def _replay(tm, replacements, values):
    """Apply the recorded replacements in order (ord is null for fields without one)."""
    for r, v in zip(replacements, values):
        tm.replace(r["field"], v, ord=r["ord"] or 0)
    return tm


def _load_view(tm):
    """What a tile load reads of a map (R3, R5): the decoded fields within the
    rank (words 64 / 72 and fields of higher ords are not among them). Strides of
    extent-1 dimensions never reach memory, so they are left out (a rank increase
    leaves the new stride 0 where the driver writes a dense one)."""
    f = dict(tm.fields)
    dims = f["global_dim"]
    f["global_strides"] = [s if dims[k + 1] > 1 else None for k, s in enumerate(f["global_strides"])]
    return f


def _same_load_view(edited, equivalent):
    if not edited.decodes:
        return "the edited map does not decode, the driver encoded the same parameters"
    a, b = _load_view(edited), _load_view(equivalent)
    diff = [k for k in a if a[k] != b[k]]
    return f"edited map reads differently from the driver's map: {', '.join(diff)}" if diff else None


def _check_rejected(case, p):
    """R4: ptxas rejected the form for sm_90a; the model must refuse it too."""
    base = p["base_map"]
    tm = encode(base, ARENA + base["global_address_offset"])
    values = [ARENA + r.get("new_val_address_offset", 0) if r["new_val"] is None else r["new_val"]
              for r in p["replacements"]]
    try:
        _replay(tm, p["replacements"], values)
    except _core.InvalidValue:
        return None
    return f"ptxas rejected it for sm_90a ({case['ptxas_message'].splitlines()[0]}); the model accepted it"


def _check_equivalent(edited, base_params, e):
    """R3: the driver's map of the changed parameters, encoded by the model; for
    the readings R3 names, the edited map must read as that map."""
    params = {**base_params, **e["params_changed"]}
    tm, d = encode_as_recorded(e, params, int(e["global_address"], 16))
    if tm is None:
        return d
    d = first_diff(bytes(tm), hexbytes(e["tensormap_hex"]))
    if d:
        return f"driver's map bytes differ at {d}"
    if e["interpretation"].split(" ")[0] in R3_READINGS:
        return _same_load_view(edited, tm)
    return None


def check_replace(case):
    """R1 edited bytes (the whole 128, addresses as recorded), R3 equivalents, R4 refusals."""
    p = case["params"]
    if p["kind"] == "ptxas_rejected":
        return _check_rejected(case, p)
    base, d = encode_as_recorded(case, p["base_map"], int(case["global_address"], 16))
    if base is None:
        return d
    problems = []
    d = first_diff(bytes(base), hexbytes(case["tensormap_hex"]))
    if d:
        problems.append(f"base map bytes differ at {d}")
    # The shared-memory forms edit a copy: the global slot keeps its bytes.
    if case.get("global_copy_unchanged") is False:
        problems.append("hardware changed the global copy of an edit made in shared memory")
    edited = _replay(base.copy(), p["replacements"], case["new_values_used"])
    d = first_diff(bytes(edited), hexbytes(case["after_hex"]))
    if d:
        problems.append(f"edited map bytes differ at {d}")
    for e in case["equivalents"]:
        d = _check_equivalent(edited, p["base_map"], e)
        if d:
            problems.append(f"equivalent {e['interpretation']!r}: {d}")
    return "; ".join(problems) or None


def check_replace_load(case):
    """R5: the three recorded loads (original, driver's equivalent, edited map)
    replayed through the model, every shared byte and tx count compared."""
    p = case["params"]
    base, d = encode_as_recorded(case, p["base_map"], int(case["global_address"], 16))
    if base is None:
        return d
    eq_rec = {"encode_result": case["equivalent_encode_result"],
              "encode_result_name": case["equivalent_encode_result_name"]}
    equivalent, d = encode_as_recorded(eq_rec, p["equivalent_map"],
                                       int(case["equivalent_global_address"], 16))
    if equivalent is None:
        return d
    edited = _replay(base.copy(), p["replacements"], case["new_values_used"])
    maps = {"base": (base, "tensormap_hex", p["load_rank_base"]),
            "equivalent": (equivalent, "equivalent_tensormap_hex", p["load_rank_replaced"]),
            "replaced": (edited, "replaced_tensormap_hex", p["load_rank_replaced"])}
    problems = []
    for name, (tm, key, rank) in maps.items():
        d = first_diff(bytes(tm), hexbytes(case[key]))
        if d:
            problems.append(f"{name} map bytes differ at {d}")
        # A lower-rank load (rank edits) takes the leading coordinates.
        load = dict(case["loads"][name], coords=p["coords"][:rank])
        d = _check_one_load(case, tm, load, p)
        if d:
            problems.append(f"{name} load: {d}")
    d = _same_load_view(edited, equivalent)
    if d:
        problems.append(d)
    return "; ".join(problems) or None


FAMILIES = {
    "tensormap_replace": check_replace,
    "tensormap_replace_load": check_replace_load,
}
