"""The include graph among the modules of the C core, and its loops.

A module is a source file's path below csrc/core without its extension:
copy/plan.c and copy/plan.h are the module copy/plan. Module A depends on B
when a file of A includes a header of B (#include "..." only). The core's
layers point one way (DESIGN.md), so the graph must have no loop:

    python tools/deps.py [--root csrc/core] [--quiet]

prints each module and what it includes, then every loop (a strongly
connected set of more than one module, or a module that includes itself
through another), and exits 1 if there is one.
"""
import argparse
import os
import re
import sys

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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", "csrc", "core"))
    ap.add_argument("--quiet", action="store_true", help="print only the loops")
    args = ap.parse_args(argv)
    g = graph(args.root)
    if not args.quiet:
        for mod in sorted(g):
            print(f"{mod} -> {', '.join(sorted(g[mod])) or '(nothing)'}")
    found = loops(g)
    print(f"{len(g)} modules, {sum(len(v) for v in g.values())} edges, {len(found)} loop(s)")
    for comp in found:
        print("loop: " + " <-> ".join(comp))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
