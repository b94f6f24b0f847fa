"""Build of the C core and its CPython/NumPy binding as ptxasync._core."""
import glob
import os
import tempfile

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# Link-time optimisation: the per-operation bookkeeping is many small functions
# across the core's files (issue, queue, plan, box walk, completion, mbarrier
# credit), which only then inline into each other (im2col_load 0.69 -> 0.72,
# gather4_load 0.23 -> 0.25 of memcpy, docs/performance.md). "auto": as many
# link jobs as the make server or the machine gives.
LTO = ["-flto=auto"]


def _links_with(compiler, flags):
    """Whether the compiler builds and links a shared object with flags (clang
    with a linker that lacks the LTO plugin does not: the build then goes on
    without them)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "lto.c")
        with open(src, "w") as f:
            f.write("int pa_lto_probe(int x) { return x + 1; }\n")
        try:
            objs = compiler.compile([src], output_dir=tmp, extra_postargs=flags)
            compiler.link_shared_object(objs, os.path.join(tmp, "lto.so"), extra_postargs=flags)
        except Exception:
            return False
    return True


class BuildExt(build_ext):
    def build_extensions(self):
        # PTXASYNC_NO_LTO=1: a quicker build for development (the benchmarks want LTO)
        if (self.compiler.compiler_type == "unix" and not os.environ.get("PTXASYNC_NO_LTO")
                and _links_with(self.compiler, LTO)):
            for ext in self.extensions:
                ext.extra_compile_args += LTO
                ext.extra_link_args += LTO
        super().build_extensions()


# the core may hold module folders (engines/, consumers/): take every .c below it
core = sorted(glob.glob("csrc/core/**/*.c", recursive=True))
binding = sorted(glob.glob("csrc/python/*.c"))

setup(
    cmdclass={"build_ext": BuildExt},
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
