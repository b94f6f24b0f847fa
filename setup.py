"""Build of the C core and its CPython/NumPy binding as ptxasync._core."""
import glob

import numpy
from setuptools import Extension, setup

# the core may hold module folders (engines/, consumers/): take every .c below it
core = sorted(glob.glob("csrc/core/**/*.c", recursive=True))
binding = sorted(glob.glob("csrc/python/*.c"))

setup(
    ext_modules=[
        Extension(
            "ptxasync._core",
            sources=core + binding,
            include_dirs=["csrc/core", "csrc/include", numpy.get_include()],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            # hidden: only PyInit__core is exported, so calls inside the module are
            # direct and inlinable (no PLT, no symbol interposition)
            extra_compile_args=["-std=c11", "-O2", "-fvisibility=hidden", "-Wall", "-Wextra", "-pthread"],
            extra_link_args=["-pthread"],   # replay threads (csrc/core/defer.c)
        )
    ],
)
