# Shared by the whole suite: the tests' own helpers (the independent slow references,
# reference.py, modes_reference.py, ...) and tools/ import by name, with no sys.path
# edits in the test files; and the fixtures that run a test on the model and on a GPU
# (skipped without one).
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
for _d in (_HERE, os.path.join(os.path.dirname(_HERE), "tools")):
    if _d not in sys.path:
        sys.path.insert(0, _d)

from ptxasync.cuda.fixtures import both_engines, engine  # noqa: E402,F401
