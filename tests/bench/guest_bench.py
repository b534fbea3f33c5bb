#!/usr/bin/python3
"""make bench, guest part: boots ticklab under QEMU q35 with -icount shift=0,sleep=off (one
guest instruction = 1 virtual ns, so the figures are instruction counts, exact and the same
on every host) and prints wakeup latency p50/p99 per device and path, the cost of one tick
interrupt and its overhead at HZ=1000, beside the goals issue 7 sets against Linux 6.1 on
the same QEMU settings. It prints numbers; it does not pass or fail.

Usage: tests/bench/guest_bench.py [--kernel build/ticklab.elf] [--samples N]
"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from ticklablib import records  # noqa: E402

# Linux 6.1 under the same QEMU settings (issue 7): cyclictest wakes a user thread in
# 3.8 us on average (p99 4.35 us); timerlat (PREEMPT_RT) sees the timer IRQ handler 0.73 us
# after the deadline (p99 0.78 us).
LINUX_IRQ_P99_NS = 780
LINUX_CYCLICTEST_P99_NS = 4350
GOAL_IRQ_P99_NS = LINUX_IRQ_P99_NS / 5          # "at least 5 times lower"
GOAL_CALLBACK_P99_NS = LINUX_CYCLICTEST_P99_NS / 20   # "at least 20 times lower"
GOAL_TICK_PCT_AT_1000HZ = 0.05

# The same figures at 19bd55f, before the clock event device redesign (issue 16), with its
# aims: every figure no worse, the HPET callback p99 at or under 150 ns, the LAPIC's at or
# under 300 ns. Keys: (device, path, wait) -> p99 ns; "tick" -> ns per tick at HZ=1000.
BEFORE_REDESIGN = {("hpet", "hrtimer_irq", "hlt"): 20, ("hpet", "callback", "hlt"): 216,
                   ("lapic", "callback", "hlt"): 404, "tick": 392}
AIM_REDESIGN = {("hpet", "callback", "hlt"): 150, ("lapic", "callback", "hlt"): 300}


def boot(kernel, args, timeout):
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "serial.log")
        cmd = ["qemu-system-x86_64", "-machine", "q35", "-m", "256M", "-display", "none",
               "-no-reboot", "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
               "-icount", "shift=0,sleep=off", "-rtc", "clock=vm", "-nic", "none",
               "-kernel", kernel, "-append", args, "-serial", "file:" + log]
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=timeout, check=False)
        with open(log, "rb") as f:
            return f.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernel", default=os.path.join(ROOT, "build", "ticklab.elf"))
    ap.add_argument("--samples", type=int, default=2000)
    a = ap.parse_args()
    data = boot(a.kernel, "exp=tick-overhead,wakeup-latency samples=%d" % a.samples, 600)
    runs = records.parse_stream(data)
    if not runs:
        print("guest bench: no ticklab run in the serial output", file=sys.stderr)
        return 1
    res = [r for r in runs[-1].records if r.type == "result"]
    print("guest bench: QEMU q35, -icount shift=0,sleep=off (virtual ns = guest instructions)")
    print("\nwakeup latency, deadline -> point reached, %d samples each (time_ns)" % a.samples)
    print("  (each figure is the middle of the interval the TSC-to-time_ns mapping allows, +- its")
    print("  resolution; at 19bd55f the figures were that interval's low end, less the pair's own")
    print("  read delay, so set them beside the 'low end' column)")
    print("  %-6s %-12s %-5s %8s %8s %8s %5s %8s %13s %9s" % (
        "device", "path", "wait", "p50 ns", "p99 ns", "max ns", "+-", "low end", "p99 at 19bd55f",
        "aim p99"))
    best = {}
    for r in res:
        if r.get("exp") != "wakeup-latency" or r.get("status") == "skip":
            continue
        key3 = (r["device"], r["path"], r["wait"])
        before = BEFORE_REDESIGN.get(key3)
        aim = AIM_REDESIGN.get(key3)
        resol = r.get("resolution_ns", 0)
        print("  %-6s %-12s %-5s %8d %8d %8d %5d %8d %13s %9s" % (
            r["device"], r["path"], r["wait"], r["p50_ns"], r["p99_ns"], r["max_ns"], resol,
            r["p99_ns"] - resol, "-" if before is None else before,
            "-" if aim is None else "<= %d" % aim))
        key = (r["path"], r["wait"])
        best[key] = min(best.get(key, 1 << 62), r["p99_ns"])
    print("\ntick cost (tick-overhead, TSC; %d ns per tick at 19bd55f)" % BEFORE_REDESIGN["tick"])
    print("  %-9s %-6s %10s %12s %s" % ("tick ns", "device", "overhead %", "per tick ns",
                                         "entry/handler/eoi/return cycles"))
    at_1000 = None
    for r in res:
        if r.get("exp") != "tick-overhead" or not r.get("tick_ns"):
            continue
        print("  %-9d %-6s %10s %12d %d/%d/%d/%d" % (
            r["tick_ns"], r["device"], r["overhead_pct"], r["per_tick_ns"], r["entry_cyc"],
            r["handler_cyc"], r["eoi_cyc"], r["return_cyc"]))
        if 900000 <= r["tick_ns"] <= 1100000:
            at_1000 = float(r["overhead_pct"])
    print("\ngoals (issue 7), best device, CPU halted:")
    irq = best.get(("hrtimer_irq", "hlt"))
    cb = best.get(("callback", "hlt"))

    def line(name, got, goal, unit):
        verdict = "n/a" if got is None else ("met" if got <= goal else "NOT met")
        print("  %-44s %10s %s  goal <= %s %s" % (name, "-" if got is None else got, unit,
                                                  round(goal, 3), unit) + "  " + verdict)
    line("handler entry p99 (Linux timerlat 780 / 5)", irq, GOAL_IRQ_P99_NS, "ns")
    line("hrtimer callback p99 (Linux cyclictest 4350 / 20)", cb, GOAL_CALLBACK_P99_NS, "ns")
    line("tick overhead at HZ=1000", at_1000, GOAL_TICK_PCT_AT_1000HZ, "%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
