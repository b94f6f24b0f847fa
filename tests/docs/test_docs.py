"""Every public function and method of the user-facing modules says what it does."""
import inspect

import ptxasync as pa
import ptxasync.arrays
import ptxasync.boxes
import ptxasync.driver
import ptxasync.testing
import ptxasync.viz


def _undocumented(obj, name):
    out = []
    if (inspect.isfunction(obj) or inspect.isclass(obj)) and not obj.__doc__:
        out.append(name)
    if inspect.isclass(obj):
        for m, f in vars(obj).items():
            if m.startswith("_"):
                continue
            target = f.fget if isinstance(f, property) else getattr(f, "__func__", f)
            if inspect.isfunction(target) and not target.__doc__:
                out.append(f"{name}.{m}")
    return out


def test_public_api_has_docstrings():
    missing = []
    for mod in (ptxasync.viz, ptxasync.testing, ptxasync.driver, ptxasync.arrays, ptxasync.boxes):
        for n in mod.__all__:
            missing += _undocumented(getattr(mod, n), f"{mod.__name__}.{n}")
    for cls in (pa.Machine, pa.CTA, pa.Mbarrier, pa.GlobalBuffer, pa.TensorMap, pa.TensorLoad):
        missing += _undocumented(cls, cls.__name__)
    assert not missing, missing


def test_help_is_a_guide():
    doc = pa.__doc__
    for words in ("Start here", "Coordinate order", "Rules that bite", "read_box", "ptxasync.testing",
                  "ptxasync.viz", "the ptxasync command"):
        assert words in doc
