"""The libFuzzer harnesses of the C core (fuzz/), built with clang under
AddressSanitizer and UndefinedBehaviorSanitizer and run for a short while
each over their corpus (seeded from the golden data). A crash, sanitizer
report or broken property (fuzz.h: FZ_CHECK) fails the test with libFuzzer's
output. The run is reproducible: a fixed seed and a fixed number of inputs
(PTXASYNC_FUZZ_RUNS, default 20000, capped by PTXASYNC_FUZZ_SECONDS, default
30), so a CI result does not depend on luck; docs/robustness.md gives the
longer, unseeded run. Inputs that once crashed stay in the corpus."""
import glob
import os
import shutil
import subprocess

import pytest

from testpaths import REPO as ROOT  # noqa: E402
CORE = sorted(glob.glob(os.path.join(ROOT, "csrc", "core", "**", "*.c"), recursive=True))
HARNESSES = sorted(os.path.basename(p)[:-2] for p in glob.glob(os.path.join(ROOT, "fuzz", "fuzz_*.c")))
SECONDS = int(os.environ.get("PTXASYNC_FUZZ_SECONDS", "30"))
RUNS = int(os.environ.get("PTXASYNC_FUZZ_RUNS", "20000"))
FLAGS = ["-std=c11", "-g", "-O1", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer",
         "-I", os.path.join(ROOT, "csrc", "core"), "-I", os.path.join(ROOT, "csrc", "include"),
         "-I", os.path.join(ROOT, "fuzz")]


@pytest.fixture(scope="module")
def core_objects(tmp_path_factory):
    """The core compiled once for every harness (instrumented, not linked with libFuzzer)."""
    if shutil.which("clang") is None:
        pytest.skip("needs clang (apt-get install clang) for libFuzzer")
    out = tmp_path_factory.mktemp("fuzzcore")
    probe = out / "probe.c"
    probe.write_text("#include <stdint.h>\n#include <stddef.h>\n"
                     "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n")
    if subprocess.run(["clang", "-fsanitize=fuzzer", str(probe), "-o", str(out / "probe")],
                      capture_output=True).returncode != 0:
        pytest.skip("clang cannot link libFuzzer here")
    objs = []
    for i, src in enumerate(CORE):
        obj = out / f"{i}_{os.path.basename(src)[:-2]}.o"
        r = subprocess.run(["clang", *FLAGS, "-Wall", "-Wextra", "-Werror",
                            "-fsanitize=fuzzer-no-link,address,undefined", "-c", src, "-o", str(obj)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        objs.append(str(obj))
    return objs


@pytest.mark.parametrize("harness", HARNESSES)
def test_libfuzzer_harness_finds_nothing(harness, core_objects, tmp_path):
    exe = tmp_path / harness
    r = subprocess.run(["clang", *FLAGS, "-Wall", "-Wextra", "-Werror", "-fsanitize=fuzzer,address,undefined",
                        os.path.join(ROOT, "fuzz", harness + ".c"), *core_objects, "-lm", "-pthread", "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    corpus = os.path.join(ROOT, "fuzz", "corpus", harness)
    assert os.listdir(corpus), f"{corpus} holds no seeds (python fuzz/make_corpus.py)"
    new = tmp_path / "new"     # inputs found now stay out of the repository
    new.mkdir()
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    run = subprocess.run([str(exe), "-seed=1", f"-runs={RUNS}", f"-max_total_time={SECONDS}", "-timeout=10", "-rss_limit_mb=1024",
                          "-print_final_stats=1", f"-artifact_prefix={tmp_path}/", str(new), corpus],
                         capture_output=True, text=True, env=env, timeout=SECONDS + 120)
    assert run.returncode == 0, run.stderr[-6000:]
    assert "stat::number_of_executed_units" in run.stderr
