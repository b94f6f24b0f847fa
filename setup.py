"""Build of the C core and its CPython/NumPy binding as ptxasync._core."""
import glob
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor

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


def _compile_in_parallel(compiler, jobs):
    """The sources of one extension compiled by `jobs` compiler processes at once
    (distutils compiles them one after another; `-j` only spreads whole extensions).
    The same steps as CCompiler.compile, its per-object step run from a thread pool."""
    def compile(sources, output_dir=None, macros=None, include_dirs=None, debug=0,
                extra_preargs=None, extra_postargs=None, depends=None):
        macros, objects, extra_postargs, pp_opts, build = compiler._setup_compile(
            output_dir, macros, include_dirs, sources, depends, extra_postargs)
        cc_args = compiler._get_cc_args(pp_opts, debug, extra_preargs)

        def one(obj):
            if obj in build:
                src, ext = build[obj]
                compiler._compile(obj, src, ext, cc_args, extra_postargs, pp_opts)
        with ThreadPoolExecutor(jobs) as pool:
            list(pool.map(one, objects))
        return objects
    compiler.compile = compile


class BuildExt(build_ext):
    def build_extensions(self):
        jobs = self.parallel if isinstance(self.parallel, int) and self.parallel > 1 else os.cpu_count()
        if jobs and jobs > 1:
            _compile_in_parallel(self.compiler, jobs)
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
