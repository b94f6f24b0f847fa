#!/bin/sh
# The whole Python test suite against an AddressSanitizer/UndefinedBehaviorSanitizer
# build of the extension (CI runs it after the normal suite: .ci/run).
#
#   sh tools/asan_suite.sh [pytest args]
#
# The sanitized extension is built into build/asan/pkg (the installed package
# and the source tree are left alone) and imported from there; the ASan runtime is preloaded because the Python interpreter itself
# is not instrumented. Leak detection is off here (the interpreter keeps its
# objects at exit); the C tests run with LeakSanitizer on (tests/core/test_c_core.py).
# The C-level suites that bring their own sanitizer runtime (test_c_core,
# the clang libFuzzer harnesses) run in the normal suite, not under the preload;
# so do the tests that draw with matplotlib (viz, notebooks, the CLI tour, the
# README examples, the README's commands in docs/test_user_docs.py): its
# uninstrumented C++ extension ft2font aborts in ASan's __cxa_throw interceptor
# when imported under the preload.
set -eu
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
BUILD=build/asan
rm -rf "$BUILD"
mkdir -p "$BUILD/pkg"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"
# pip builds it as the normal install does (an isolated, current setuptools), from
# a copy of the sources: no up-to-date object or library of a normal build is reused
mkdir -p "$BUILD/src"
for f in csrc src setup.py pyproject.toml README.md LICENSE MANIFEST.in; do
    [ -e "$f" ] && cp -r "$f" "$BUILD/src/"
done
rm -f "$BUILD"/src/src/ptxasync/_core*.so
CFLAGS="$SAN" LDFLAGS="-fsanitize=address,undefined" \
    "$PY" -m pip install --quiet --no-deps --no-cache-dir --target "$BUILD/pkg" "$BUILD/src" >"$BUILD/build.log" 2>&1 ||
    { cat "$BUILD/build.log"; exit 1; }
grep -q libasan "$BUILD"/pkg/ptxasync/_core*.so || { echo "the extension was not built with ASan"; exit 1; }
LIBASAN=$(gcc -print-file-name=libasan.so)
export PYTHONPATH="$PWD/$BUILD/pkg"
LD_PRELOAD="$LIBASAN" ASAN_OPTIONS=detect_leaks=0 "$PY" -c \
    "import ptxasync._core as c, sys; sys.exit(0 if c.__file__.startswith('$PWD/$BUILD') else 'not the sanitized build: ' + c.__file__)"
LD_PRELOAD="$LIBASAN" PTXASYNC_SANITIZED=1 \
    ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$PY" -m pytest -q -p no:cacheprovider \
    --ignore=tests/core/test_c_core.py --ignore=tests/core/test_fuzz_c.py \
    --ignore=tests/viz --ignore=tests/docs/test_notebooks.py --ignore=tests/cli/test_cli.py \
    --ignore=tests/docs/test_readme.py --ignore=tests/docs/test_user_docs.py "$@"
