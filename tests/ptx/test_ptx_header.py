"""The module header as ptxas reads it: which .version each ptxas release takes, which .target
it knows and from which .version, what must come first. tests/data/ptx/header_verdicts.jsonl.gz
holds the verdicts of ptxas 13.0 and 13.5 on a minimal module for every target they know (and some
they do not) at every .version 1.0 to 9.9, assembled for the target (-arch=<target>; a target
below sm_75, which no -arch takes, for the default sm_75): checked here without ptxas; each
installed release is asked again about the boundaries. Record again with
`PYTHONPATH=tests:tools python tests/ptx/test_ptx_header.py OUT.jsonl.gz`."""
import gzip
import json
import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

import testpaths

from ptxasync import ptx

import ptx_forms as pf

DATA = os.path.join(testpaths.DATA, "ptx", "header_verdicts.jsonl.gz")

# every target ptxas 13.0 or 13.5 knows (without -arch: "Unsupported .target" for any other
# sm_N{,a,f} below sm_200), and some it does not
TARGETS = ("sm_10 sm_11 sm_12 sm_13 sm_20 sm_21 sm_30 sm_32 sm_35 sm_37 sm_50 sm_52 sm_53 sm_60 sm_61 "
           "sm_62 sm_70 sm_72 sm_75 sm_80 sm_82 sm_86 sm_87 sm_88 sm_89 sm_90 sm_90a sm_100 sm_100a "
           "sm_100f sm_101 sm_101a sm_101f sm_103 sm_103a sm_103f sm_107 sm_107a sm_107f sm_110 "
           "sm_110a sm_110f sm_120 sm_120a sm_120f sm_121 sm_121a sm_121f "
           "sm_75a sm_80a sm_90f sm_91 sm_102 sm_108 sm_111 sm_122 sm_130 sm_130a").split()
VERSIONS = ["%d.%d" % (a, b) for a in range(1, 10) for b in range(10)]


def header(target, version):
    return pf.HEADER_MODULE.format(target=target, version=version)


def error_lines(message):
    """the lines ptxas names in its errors (a fatal error without one: 0)"""
    lines = []
    for ln in message.splitlines():
        if re.search(r"\b(error|fatal)\s*:", ln) and "aborted due to errors" not in ln:
            m = re.search(r", line (\d+);", ln)
            lines.append(int(m.group(1)) if m else 0)
    return lines


def rows():
    with gzip.open(DATA, "rt") as fh:
        out = [json.loads(line) for line in fh]
    assert out[0]["n"] == len(out) - 1
    return out[1:]


@pytest.mark.parametrize("release", ptx.PTXAS_RELEASES)
def test_every_recorded_verdict_is_ours(release):
    mine = [r for r in rows() if r["ptxas"] == release]
    assert len(mine) == len(TARGETS) * len(VERSIONS)
    wrong = []
    for r in mine:
        errors = [d for d in ptx.check(header(r["target"], r["version"]), ptxas=release) if d.severity == "error"]
        if (not errors) != r["assembles"] or (errors and errors[0].line not in r["lines"] and r["lines"] != [0]):
            wrong.append((r["target"], r["version"], r["message"], [str(d) for d in errors]))
    assert not wrong, (len(wrong), wrong[:10])


# (target, .version, accepted by ptxas 13.0, by ptxas 13.5), from the recorded runs
@pytest.mark.parametrize("target,version,by130,by135", [
    ("sm_90a", "9.0", True, True), ("sm_90a", "9.1", False, True), ("sm_90a", "9.4", False, True),
    ("sm_90a", "9.5", False, True), ("sm_90a", "9.6", False, False), ("sm_90a", "7.9", False, False),
    ("sm_90a", "7.8", False, False), ("sm_90", "7.8", True, True), ("sm_80", "7.0", True, True),
    ("sm_88", "7.3", True, False), ("sm_88", "8.8", True, False), ("sm_88", "9.0", True, True),
    ("sm_100a", "8.5", False, False), ("sm_100a", "8.6", True, True), ("sm_100f", "8.7", False, False),
    ("sm_100f", "8.8", True, True), ("sm_103a", "8.7", False, False), ("sm_103a", "8.8", True, True),
    ("sm_107a", "9.3", False, False), ("sm_107a", "9.4", False, True), ("sm_107f", "9.5", False, True),
    ("sm_110a", "8.8", False, False), ("sm_110a", "9.0", True, True), ("sm_120a", "8.6", False, False),
    ("sm_120a", "8.7", True, True), ("sm_120f", "8.7", False, False), ("sm_121a", "8.8", True, True),
    ("sm_101a", "9.0", False, False), ("sm_82", "9.0", False, False), ("sm_91", "9.0", False, False),
    ("sm_70", "5.1", True, True), ("sm_70", "5.0", False, False), ("sm_90a", "5.5", False, False),
    ("sm_35", "2.3", False, False), ("sm_30", "3.0", True, True),
])
def test_header_expectations(target, version, by130, by135):
    text = header(target, version)
    assert (ptx.accepts(text, ptxas="13.0"), ptx.accepts(text, ptxas="13.5")) == (by130, by135)
    assert ptx.accepts(text) == by135          # 13.5 unless told otherwise


# headers ptxas refuses for their order or .address_size (a minimal module each)
ODD_HEADERS = [
    ".target sm_90a\n.version 9.0\n.address_size 64\n",
    ".version 9.0\n.address_size 64\n",
    ".version 9.0\n.address_size 64\n.target sm_90a\n",
    ".version 9.0\n.target sm_90a\n.address_size 32\n",
    ".version 9.0\n.target sm_90a\n.address_size 48\n",
    "// a comment\n\n.version 7.5\n.target sm_90a\n.address_size 64\n",
    "// a comment\n\n.version 9.0\n.target sm_90a\n.address_size 64\n",
    ".version 2.2\n.target sm_30\n.address_size 64\n",
    ".version 9.0\n.target sm_90a\n",
    ".target sm_90a\n\n\n.version 9.0\n.address_size 64\n",
    "\n\n.address_size 64\n.version 9.0\n.target sm_90a\n",
]
BODY = "\n.visible .entry k()\n{\n}\n"


@pytest.mark.parametrize("head,ok,line", [(ODD_HEADERS[0], False, 2), (ODD_HEADERS[1], False, 2),
                                          (ODD_HEADERS[2], False, 2), (ODD_HEADERS[3], False, 0),
                                          (ODD_HEADERS[4], False, 3), (ODD_HEADERS[5], False, 4),
                                          (ODD_HEADERS[6], True, None), (ODD_HEADERS[7], False, 3),
                                          (ODD_HEADERS[8], True, None), (ODD_HEADERS[9], False, 4),
                                          (ODD_HEADERS[10], False, 3)])
def test_odd_headers(head, ok, line):
    for release in ptx.PTXAS_RELEASES:
        errors = [d for d in ptx.check(head + BODY, ptxas=release) if d.severity == "error"]
        assert (not errors) == ok, (release, errors)
        if line:
            assert errors[0].line == line, errors


@pytest.mark.parametrize("head", ODD_HEADERS)
@pytest.mark.parametrize("release,path", pf.judges())
def test_odd_headers_follow_the_installed_ptxas(release, path, head):
    text = head + BODY
    v = pf.ptxas_verdict(text, "sm_90a", path)
    errors = [d for d in ptx.check(text, ptxas=release) if d.severity == "error"]
    assert (not errors) == v.accepted, (release, v.message, errors)
    lines = error_lines(v.message)
    assert v.accepted or errors[0].line in lines or lines == [0], (release, v.message, errors)


def _boundaries(release):
    """per target: the lowest .version ptxas took and the one below, the newest and one above"""
    by = {}
    for r in rows():
        if r["ptxas"] == release:
            by.setdefault(r["target"], []).append(r)
    out = []
    for target, rs in by.items():
        ok = [i for i, r in enumerate(rs) if r["assembles"]]
        picks = {0, len(rs) - 1} | ({ok[0], max(ok[0] - 1, 0), ok[-1], min(ok[-1] + 1, len(rs) - 1)} if ok else set())
        out += [rs[i] for i in sorted(picks)]
    return out


@pytest.mark.parametrize("release,path", pf.judges())
def test_recorded_boundaries_are_the_installed_ptxas(release, path):
    picks = _boundaries(release)

    def ask(r):
        return r, pf.ptxas_verdict(header(r["target"], r["version"]), r["target"], path)

    with ThreadPoolExecutor(4) as ex:
        results = list(ex.map(ask, picks))
    wrong = [(r["target"], r["version"], r["assembles"], v.message) for r, v in results
             if v.accepted != r["assembles"]]
    assert not wrong, (f"ptxas {release} ({path})", wrong[:10])


def test_a_module_at_9_4_reads():
    # what a compiler of PTX ISA 9.4 writes (Triton 3.9) reads past its first line with ptxas 13.5
    with open(os.path.join(testpaths.DATA, "ptx", "triton_tma_copy.ptx")) as fh:
        text = re.sub(r"^\.version \d\.\d", ".version 9.4", fh.read(), flags=re.M)
    assert not [d for d in ptx.check(text) if d.severity == "error"]
    errors = [d for d in ptx.check(text, ptxas="13.0") if d.severity == "error"]
    assert [(d.line, d.message) for d in errors] == [(text.splitlines().index(".version 9.4") + 1,
                                                      "unsupported .version 9.4; ptxas 13.0 reads up to 9.0")]


def test_an_unmodelled_release_is_refused():
    with pytest.raises(ValueError, match="13.0 and 13.5"):
        ptx.check(header("sm_90a", "9.0"), ptxas="12.8")


def record(out):
    found = ptx.ptxas_installed()
    jobs = [(rel, t, v) for rel in ptx.PTXAS_RELEASES for t in TARGETS for v in VERSIONS]
    missing = sorted({rel for rel, _, _ in jobs} - set(found))
    if missing:
        sys.exit(f"ptxas {', '.join(missing)} not installed")

    def run(job):
        rel, t, v = job
        verdict = pf.ptxas_verdict(header(t, v), t, found[rel])
        assert not verdict.crash, verdict.crash
        msg = verdict.message.strip()
        return {"ptxas": rel, "target": t, "version": v, "assembles": verdict.accepted,
                "lines": error_lines(msg), "message": msg.splitlines()[0] if msg else ""}

    with ThreadPoolExecutor(4) as ex:
        results = list(ex.map(run, jobs))
    builds = {rel: found[rel] for rel in ptx.PTXAS_RELEASES}
    about = {"about": "ptxas verdicts on a minimal module (tests/ptx_forms.py HEADER_MODULE) for each "
             "target and .version, assembled with -arch=<target> (below sm_75: ptxas's default sm_75); "
             "lines: the lines its errors name (0: none named)",
             "ptxas": {rel: " ".join(os.popen(f"'{p}' --version").read().split()[-1:]) for rel, p in builds.items()},
             "n": len(results)}
    with gzip.open(out, "wt") as fh:
        for r in [about] + results:
            fh.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    record(sys.argv[1])
