#!/usr/bin/python3
"""What the host tool costs on this machine: `report` of each committed quick-profile capture
and `compare -o` of two, each run several times in a row, its CPU (user + system of the
child, from getrusage) and wall time as the lowest, median and highest, beside the goals
(a quick run's report in at most 3 s of CPU, compare in at most 5 s).

The figures are this machine's at this moment: on a shared machine they move with its other
load, which is why the spread is printed and a goal is judged on the median and the
highest apart. Run by `make bench` (about a minute); alone:
    /usr/bin/python3 tests/bench/report_cost.py [--runs N]
"""

import argparse
import gzip
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "ticklab")
FIXTURES = os.path.join(ROOT, "tools", "tests", "fixtures")
REPORTS = (("exact quick run (icount)", "icount0-quick-f7e080e.log.gz"),
           ("plain-TCG quick run", "tcg-quick-f7e080e-1.log.gz"))
COMPARED = ("tcg-quick-f7e080e-1.log.gz", "tcg-quick-f7e080e-2.log.gz")
REPORT_GOAL_S = 3.0
COMPARE_GOAL_S = 5.0


def unpacked(folder, name):
    """A fixture as the plain log a capture writes, with its capture record beside it."""
    log = os.path.join(folder, name[:-3])
    with gzip.open(os.path.join(FIXTURES, name), "rb") as src, open(log, "wb") as dst:
        shutil.copyfileobj(src, dst)
    record = os.path.join(FIXTURES, name[:-3] + ".capture.json")
    if os.path.exists(record):
        shutil.copy(record, log + ".capture.json")
    return log


def timed(argv):
    """(CPU s, wall s) of one run of the tool; exits on its failure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):   # 1: a capture with problems, reported all the same
        sys.exit("report_cost: %s exited %d: %s" % (" ".join(argv[1:3]), done.returncode,
                                                    done.stderr.strip()[-300:]))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def judged(cpus, goal):
    median, top = statistics.median(cpus), max(cpus)
    if top <= goal:
        return "within the goal in every run"
    if median <= goal:
        return "within the goal at the median; %d of %d runs over it (the machine's other " \
               "load moves these)" % (sum(c > goal for c in cpus), len(cpus))
    return "OVER the goal at the median"


def line(what, samples, goal):
    cpus = sorted(c for c, _ in samples)
    walls = sorted(w for _, w in samples)
    return ("  %-28s CPU %.2f / %.2f / %.2f s, wall %.2f / %.2f / %.2f s (lowest / median / "
            "highest of %d); goal %.0f s of CPU: %s" % (
                what, cpus[0], statistics.median(cpus), cpus[-1], walls[0],
                statistics.median(walls), walls[-1], len(samples), goal, judged(cpus, goal)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="runs of each command (default 5)")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    print("report_cost: the host tool on this machine (CPU = user + system, getrusage)")
    with tempfile.TemporaryDirectory(prefix="ticklab-bench-") as tmp:
        for what, name in REPORTS:
            log = unpacked(tmp, name)
            out = os.path.join(tmp, "report")
            samples = [timed([TOOL, "report", "--force", log, "-o", out])
                       for _ in range(args.runs)]
            print(line("report, " + what, samples, REPORT_GOAL_S))
        logs = [unpacked(tmp, name) for name in COMPARED]
        samples = []
        for _ in range(args.runs):
            out = os.path.join(tmp, "compare")
            shutil.rmtree(out, ignore_errors=True)
            samples.append(timed([TOOL, "compare"] + logs + ["-o", out]))
        print(line("compare -o of two quick runs", samples, COMPARE_GOAL_S))
    return 0


if __name__ == "__main__":
    sys.exit(main())
