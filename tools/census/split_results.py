"""Split run_gpu.py's one .npz into tests/data/census/<name>.<arch>.npz (inputs ``in/<buf>``,
the GPU's outputs ``out/<buf>``, the tensor maps it encoded, or ``error``).

    python tools/census/split_results.py census_gpu.npz
    python tools/census/split_results.py --data tests/data/nvrtc nvrtc_gpu.npz
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import census_lib as cl  # noqa: E402


def main(path):
    with np.load(path) as z:
        groups = {}
        for k in z.files:
            case, rest = k.split("/", 1)
            groups.setdefault(case, {})[rest] = z[k]
    for case, arrays in sorted(groups.items()):
        np.savez_compressed(os.path.join(cl.DATA, case + ".npz"), **arrays)
        print(case, "error: " + str(arrays["error"]) if "error" in arrays else "ok")


if __name__ == "__main__":
    if sys.argv[1] == "--data":
        cl.DATA = sys.argv[2]
        del sys.argv[1:3]
    main(sys.argv[1])
