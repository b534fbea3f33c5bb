#!/usr/bin/python3
"""check-layers.py: the layers of the tree point one way, checked from the #include lines.

A module is a source file and its header (kernel/timers/idle.c + idle.h). Each directory
has a rank; a module may include modules of its own directory and of lower ranks only, so
no include goes up and no cycle can form across directories. Within a directory, the
include graph between modules must have no cycle either. The library (drivers/ and lib/)
includes nothing but its own headers (as "ticklab/NAME.h") and the compiler's; those names
are unique across drivers/, lib/, lib/time/ and lib/port/ (scripts/headers.mk maps them); and
lib/ outside the porting layer touches no hardware: no port, MMIO, MSR, TSC or CPUID access of its own and no inline asm
(it reaches hardware through a driver's function, or the porting layer's irq_save,
irq_restore and cpu_relax from lib/port/io.h).

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
    ("lib/port", 0),          # the porting layer: the hardware primitives (io.h) and what
                              # the host kernel defines (port.h)
    ("lib", 1),               # pure logic: integer maths, statistics, formatting, JSON, CRC
    ("lib/time", 2),          # the time core: clocksource, clock events, tick, wheel, hrtimers
    ("drivers", 3),           # one file per chip, registering with the time core
    ("kernel/console", 4),    # the screen
    ("kernel/config", 5),     # the command line's settings (kernel/config.[ch])
    ("kernel/report", 5),     # records, the console text, the end of a run
    ("kernel/boot", 6),       # what the loader handed over
    ("kernel/arch", 6),       # CPU tables, paging, traps, faults, mem*
    ("kernel/intr", 7),       # interrupt routing
    ("kernel/discover", 8),   # the inventory
    ("kernel/smp", 9),        # the other CPUs: started, handed work
    ("kernel/timers", 10),    # the kernel's use of the time core
    ("kernel/checks", 11),    # the self-checks
    ("kernel/exp", 12),       # the experiments and the verdict
    ("kernel/top", 13),       # main, run, the summary screen, the inventory's order
]
TOP_FILES = {"kernel/config": "kernel/config"}
LIBRARY = ("drivers/", "lib/")
HEADER_DIRS = ("drivers", "lib", "lib/time", "lib/port")
# What lib/ may not contain: hardware access is the drivers' (lib/port/io.h's primitives).
HARDWARE = re.compile(r"\b(inb|inw|inl|outb|outw|outl|mmio_read(8|16|32|64)|mmio_write(8|16|32|64)|"
                      r"rdmsr|rdmsr_safe|wrmsr|wrmsr_fence|rdtsc|rdtsc_ordered|rdtscp|cpuid|"
                      r"__asm__|asm)\b\s*\(")

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = ("drivers", "lib", "kernel")


def header_map():
    """NAME -> the repository paths of every library header called NAME.h."""
    out = {}
    for d in HEADER_DIRS:
        for n in sorted(os.listdir(os.path.join(ROOT, d))):
            if n.endswith(".h"):
                out.setdefault(n[:-2], []).append(d + "/" + n)
    return out


HEADERS = header_map()


def room(path):
    """The directory rank key of a repository path (without extension)."""
    base = os.path.splitext(path)[0]
    if base in TOP_FILES:
        return TOP_FILES[base]
    parts = path.split("/")
    if len(parts) == 2 and parts[0] == "kernel":
        return "kernel/top"
    if parts[0] in ("drivers", "lib") and len(parts) == 2:
        return parts[0]
    return "/".join(parts[:2])


def resolve(inc, src):
    """The repository path an include names, or None for a system/compiler header."""
    if inc.startswith("ticklab/"):
        name = os.path.splitext(inc[len("ticklab/"):])[0]
        return HEADERS[name][0] if name in HEADERS else "?" + inc
    if os.path.exists(os.path.join(ROOT, inc)):
        return inc
    local = os.path.join(os.path.dirname(src), inc)
    if os.path.exists(os.path.join(ROOT, local)):
        return os.path.normpath(local)
    return "?" + inc


def module(path):
    """A module: a source and its header are one node."""
    return os.path.splitext(path)[0]


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


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def hardware_in_lib():
    bad = []
    for f in files():
        if not f.startswith("lib/") or f.startswith("lib/port/"):
            continue
        with open(os.path.join(ROOT, f), errors="replace") as fh:
            for lineno, line in enumerate(strip_comments(fh.read()).split("\n"), 1):
                m = HARDWARE.search(line)
                if m:
                    bad.append("%s:%d: %s( in lib/: hardware access belongs to a driver"
                               % (f, lineno, m.group(1)))
    return bad


def main():
    ranks = dict(RANKS)
    lib_bad, up, unknown = [], [], []
    dup_names = ["ticklab/%s.h is %s" % (n, " and ".join(p)) for n, p in sorted(HEADERS.items())
                 if len(p) > 1]
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
                if f.startswith(LIBRARY) and not (m.group(1).startswith("ticklab/")
                                                  and target.startswith(LIBRARY)):
                    lib_bad.append("%s:%d: the library includes %s" % (f, lineno, m.group(1)))
                elif target.startswith(LIBRARY) and not m.group(1).startswith("ticklab/"):
                    lib_bad.append("%s:%d: includes %s by its path, not as ticklab/%s"
                                   % (f, lineno, m.group(1), os.path.basename(target)))
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
        ("the library includes only its own headers, as ticklab/NAME.h", lib_bad),
        ("library header names are unique", dup_names),
        ("lib/ touches no hardware", hardware_in_lib()),
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
