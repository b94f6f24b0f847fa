"""The include graph among the modules of the C core, and its loops.

A module is a source file's path below csrc/core without its extension:
copy/plan.c and copy/plan.h are the module copy/plan. Module A depends on B
when a file of A includes a header of B (#include "..." only). The core's
layers point one way (DESIGN.md), so the graph must have no loop:

    python tools/deps.py [--root csrc/core] [--quiet]

prints each module and what it includes, then every loop (a strongly
connected set of more than one module, or a module that includes itself
through another), and exits 1 if there is one.

    python tools/deps.py --calls [--root csrc/core] [--allow A,B,...]

the same for calls between the .c files of one folder: each file is compiled
alone (cc -c) and file A depends on file B of its folder when A uses a symbol
B defines (nm). A loop there is two files of a folder that call each other,
directly or round a circle, which the include graph does not show (both may
include one shared header). --allow names loops (their files joined by
commas) that are known and reported but do not fail.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module_of(root, path):
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    return os.path.splitext(rel)[0]


def graph(root):
    """{module: set(modules it includes)} for the .c and .h files under root."""
    g = {}
    for d, _, files in os.walk(root):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(d, f)
            mod = module_of(root, path)
            deps = g.setdefault(mod, set())
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            for inc in INCLUDE.findall(text):
                target = os.path.normpath(os.path.join(d, inc))
                if not os.path.exists(target):
                    target = os.path.normpath(os.path.join(root, inc))
                if not os.path.exists(target):
                    continue   # a header outside the core (or a generated one)
                if os.path.commonpath([os.path.abspath(target), os.path.abspath(root)]) != os.path.abspath(root):
                    continue
                dep = module_of(root, target)
                if dep != mod:
                    deps.add(dep)
    return g


def loops(g):
    """Strongly connected sets of more than one module (Tarjan), each sorted."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    return sorted(out)


def call_graph(root, include=()):
    """{file: set(files of the same folder it calls)}, files as paths below root without .c."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc or not shutil.which("nm"):
        raise SystemExit("--calls needs a C compiler and nm on PATH")
    defs, uses = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for d, _, files in os.walk(root):
            for f in sorted(files):
                if not f.endswith(".c"):
                    continue
                src = os.path.join(d, f)
                mod = module_of(root, src)
                obj = os.path.join(tmp, mod.replace("/", "__") + ".o")
                flags = ["-std=c11", "-O0", "-c", "-I" + root] + ["-I" + i for i in include]
                subprocess.run([cc, *flags, src, "-o", obj], check=True)
                out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
                defs[mod], uses[mod] = set(), set()
                for line in out.splitlines():
                    p = line.split()
                    if len(p) == 3 and p[1] in "TDBRC":
                        defs[mod].add(p[2])
                    elif len(p) == 2 and p[0] == "U":
                        uses[mod].add(p[1])
    owner = {sym: mod for mod, ds in defs.items() for sym in ds}
    g = {}
    for mod, us in uses.items():
        folder = os.path.dirname(mod)
        g[mod] = {owner[u] for u in us if u in owner and owner[u] != mod and os.path.dirname(owner[u]) == folder}
    return g


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", "csrc", "core"))
    ap.add_argument("--quiet", action="store_true", help="print only the loops")
    ap.add_argument("--calls", action="store_true", help="calls between the files of a folder")
    ap.add_argument("--allow", action="append", default=[], help="a known loop: its files, comma-separated")
    args = ap.parse_args(argv)
    if args.calls:
        inc = os.path.join(os.path.dirname(os.path.abspath(args.root)), "include")
        g = call_graph(args.root, [inc] if os.path.isdir(inc) else [])
    else:
        g = graph(args.root)
    if not args.quiet:
        for mod in sorted(g):
            print(f"{mod} -> {', '.join(sorted(g[mod])) or '(nothing)'}")
    found = loops(g)
    allowed = [sorted(a.split(",")) for a in args.allow]
    print(f"{len(g)} modules, {sum(len(v) for v in g.values())} edges, {len(found)} loop(s)")
    for comp in found:
        print("loop: " + " <-> ".join(comp) + (" (known)" if comp in allowed else ""))
    return 1 if any(comp not in allowed for comp in found) else 0


if __name__ == "__main__":
    sys.exit(main())
