"""The Python package's layers (DESIGN.md): the model's modules import no picture code (the
pictures import the model and install how it shows itself in Jupyter), and no module borrows
the model's private helpers."""
import ast
import os

import ptxasync as pa

from testpaths import REPO  # noqa: E402
PKG = os.path.join(REPO, "src", "ptxasync")
MODEL = ["machine.py", "tensormap.py", "check.py", "oplist.py", "enums.py", "arrays.py"]


def imports(name):
    tree = ast.parse(open(os.path.join(PKG, name), encoding="utf-8").read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            yield node.module or "", [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, []


def test_the_model_imports_no_pictures():
    for name in MODEL:
        for module, names in imports(name):
            assert "viz" not in module.split(".") and "viz" not in names, (name, module, names)


def test_no_private_helper_of_the_model_is_borrowed():
    # oplist.py once took machine.py's parsing helpers; shared parsing lives in enums.py
    for name in os.listdir(PKG):
        if not name.endswith(".py"):
            continue
        for module, names in imports(name):
            if module.split(".")[-1] not in ("machine", "tensormap", "check", "oplist"):
                continue
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            assert not private, (name, module, private)


def test_pictures_still_show_the_model():
    m = pa.Machine(ctas=1, smem_bytes=4096)
    assert "<svg" in m.cta(0)._repr_svg_()
    assert "CTA" in m._repr_html_()
    bar = m.mbarrier(0).init(1)
    assert "<svg" in bar._repr_svg_()
