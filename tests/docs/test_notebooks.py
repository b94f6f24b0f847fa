"""Every notebook in notebooks/ runs headless without error."""
import glob
import os

import pytest

from testpaths import REPO as ROOT  # noqa: E402
NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb")))


def test_notebooks_exist():
    assert NOTEBOOKS, "notebooks/ holds no notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[os.path.basename(p) for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch):
    import ptxasync
    # the kernel imports the package this process imported (installed, or built in place)
    monkeypatch.setenv("PYTHONPATH", os.path.dirname(os.path.dirname(os.path.abspath(ptxasync.__file__))))
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": os.path.dirname(path)}}).execute()
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.get("output_type") != "error", out


@pytest.mark.parametrize("name,pictures", [("tour.ipynb", 4), ("swizzle-modes.ipynb", 5), ("consumers.ipynb", 2),
                                           ("ptx_kernel.ipynb", 2)])
def test_notebook_committed_with_pictures(name, pictures):
    import json
    nb = json.load(open(os.path.join(ROOT, "notebooks", name), encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c.get("outputs") or c.get("execution_count") for c in code)
    images = [o for c in code for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(images) >= pictures


def test_async_notebook_committed_with_its_tables():
    import json
    nb = json.load(open(os.path.join(ROOT, "notebooks", "async_pipeline.ipynb"), encoding="utf-8"))
    html = ["".join(o["data"]["text/html"]) for c in nb["cells"] if c["cell_type"] == "code"
            for o in c.get("outputs", []) if "text/html" in o.get("data", {})]
    assert any("pending operation" in h and "<table>" in h for h in html)       # pending_ops() and the load
    assert any("TensorLoad(" in h and "complete)" in h and "<svg" in h for h in html)
