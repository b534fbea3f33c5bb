#!/usr/bin/python3
"""check-layers.py: the layers of the tree point one way, checked from the #include lines.

A module is a source file and its header (kernel/timers/halt.c + halt.h). Each directory
has a rank; a module may include modules of its own directory and of lower ranks only, so
no include goes up and no cycle can form across directories. Within a directory, the
include graph between modules must have no cycle either. The library (libticklab/)
includes nothing outside libticklab/include/ticklab/ and the compiler's headers.

Prints one line per violation (file:line: what), then `layers: N passed, N failed` (one
check per rule). Exit 1 on any violation. Usage: scripts/check-layers.py [--graph]
(--graph prints the directory dependency graph it found, for docs/library.md).
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Lowest first. A directory not listed is an error (a new room must be placed).
RANKS = [
    ("libticklab", 0),        # the library: drivers, time core, pure logic
    ("kernel/lib", 1),        # the kernel's own pure logic (CRC, JSON, command line)
    ("kernel/console", 1),    # the serial and screen hardware
    ("kernel/config", 2),     # the command line's settings (kernel/config.[ch])
    ("kernel/report", 2),     # records, the console text, the end of a run
    ("kernel/boot", 3),       # what the loader handed over
    ("kernel/arch", 3),       # CPU tables, paging, traps, faults, the other CPUs
    ("kernel/intr", 4),       # interrupt routing
    ("kernel/discover", 5),   # the inventory
    ("kernel/smp", 6),        # the other CPUs: started, handed work
    ("kernel/timers", 7),     # the kernel's use of the time core
    ("kernel/checks", 8),     # the self-checks
    ("kernel/exp", 9),        # the experiments and the verdict
    ("kernel/top", 10),       # main, run, the summary screen, the inventory's order
]
TOP_FILES = {"kernel/config": "kernel/config"}   # kernel/config.[ch] is its own room

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = ("libticklab", "kernel")


def room(path):
    """The directory rank key of a repository path (without extension)."""
    if path.startswith("libticklab/"):
        return "libticklab"
    base = os.path.splitext(path)[0]
    if base in TOP_FILES:
        return TOP_FILES[base]
    parts = path.split("/")
    if len(parts) == 2 and parts[0] == "kernel":
        return "kernel/top"
    return "/".join(parts[:2])


def resolve(inc, src):
    """The repository path an include names, or None for a system/compiler header."""
    if inc.startswith("ticklab/"):
        return "libticklab/include/" + inc
    if os.path.exists(os.path.join(ROOT, inc)):
        return inc
    local = os.path.join(os.path.dirname(src), inc)
    if os.path.exists(os.path.join(ROOT, local)):
        return os.path.normpath(local)
    return "?" + inc


def module(path):
    """A module: a source and its header are one node (public headers are the library's)."""
    base = os.path.splitext(path)[0]
    if base.startswith("libticklab/include/ticklab/"):
        return "libticklab/" + os.path.basename(base)
    if base.startswith("libticklab/"):
        return "libticklab/" + os.path.basename(base)
    return base


def files():
    for top in SOURCES:
        for d, _, names in os.walk(os.path.join(ROOT, top)):
            for n in sorted(names):
                if n.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(d, n), ROOT)


def sccs(graph):
    """Tarjan's strongly connected components with more than one node."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
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
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    ranks = dict(RANKS)
    lib_bad, up, unknown = [], [], []
    graph, dirgraph = {}, {}
    for f in files():
        r_from = room(f)
        if r_from not in ranks:
            unknown.append("%s: directory %s has no rank in scripts/check-layers.py" % (f, r_from))
            continue
        with open(os.path.join(ROOT, f), errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = resolve(m.group(1), f)
                if target.startswith("?"):
                    continue                      # tests' fakes etc. are not in SOURCES
                if f.startswith("libticklab/") and not target.startswith("libticklab/include/ticklab/"):
                    lib_bad.append("%s:%d: the library includes %s" % (f, lineno, target))
                r_to = room(target)
                if r_to not in ranks:
                    continue
                if ranks[r_to] > ranks[r_from]:
                    up.append("%s:%d: %s (rank %d) includes %s (%s, rank %d): an include "
                              "going up" % (f, lineno, r_from, ranks[r_from], target, r_to,
                                            ranks[r_to]))
                a, b = module(f), module(target)
                if a != b:
                    graph.setdefault(a, set()).add(b)
                if r_from != r_to:
                    dirgraph.setdefault(r_from, set()).add(r_to)
    cycles = sccs(graph)
    if "--graph" in sys.argv:
        for d in sorted(dirgraph, key=lambda d: -ranks[d]):
            print("%-16s -> %s" % (d, ", ".join(sorted(dirgraph[d], key=lambda x: -ranks[x]))))
    checks = [
        ("every directory has a rank", unknown),
        ("the library includes only its own public headers", lib_bad),
        ("no include goes up a layer", up),
        ("no include cycle between modules",
         ["cycle: " + " -> ".join(c) for c in cycles]),
    ]
    passed = failed = 0
    for name, problems in checks:
        if problems:
            failed += 1
            print("FAIL %s:" % name)
            for p in problems:
                print("  " + p)
        else:
            passed += 1
            print("PASS %s" % name)
    print("layers: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
