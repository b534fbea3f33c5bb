"""Boot-test cases for exact mode's promise: under `-icount shift=0,sleep=off` a
run's records are the same, byte for byte, however busy the host is, and its figures depend
only on the measurement's own settings.

How: a first run alone (whose figures the quick profile's checks read, exp_checks.QUICK_ICOUNT), then four more at the same time beside a CPU-bound loop (five
processes on the test machine's two cores, besides the other cases boottest.py runs):

- the same boot again: every `TLR` line equal to the first run's, no allowance, no
  third-run rule;
- make run's defaults spelled out in another order with runs of spaces: `result` and
  `verdict` records equal to the first run's (its cmdline record differs, by design);
- the RTC on the host's clock (`-rtc clock=host`), twice: each finds the RTC's events off
  virtual time, leaves the RTC out and says so in its environment record, and the two give
  equal `result` and `verdict` records (not the first run's: without the RTC's interrupts
  some figures differ, by design).

The run is exact mode as `make run` makes it: one CPU, the serial port to a file (a slow
reader never holds the UART), the RTC on the virtual clock, and no `idle=` word: the kernel
sees virtual time and polls by itself (idle=auto; no CPU halts, so QEMU's idle warp out of
HLT, its one host-dependent path, never happens: kernel/timers/idle.h). docs/experiments.md
("How repeatable exact mode is") has the measurements behind it.

REPEAT_CASES run in `make test` (the quick profile: about a minute a run). LONG holds the
full profile's check, about 20 minutes a run under that load: `make test-long`
(boottest.py --long) runs it, never `make test`.
"""
import subprocess

from dataclasses import replace

import exp_checks
from ticklablib import records
from cases import Case, end_status, no_errors
from cases_console import _measured

# make run's defaults, spelled out, in another order and with runs of spaces
SPELLED_OUT = ("nohz=on   idle=auto hz=1000 exp=all profile=quick console_log=on    "
               "uart_pace=0 qr=auto wrapcheck=auto hpet_access=auto raw_samples=on")
RTC_ON_HOST = ("-rtc", "clock=host")


def _tlr(data):
    return [l for l in data.split(b"\n") if l.startswith(b"TLR ")]


def _first_diff(a, b):
    if a == b:
        return None
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return "record %d of %d/%d: %r vs %r" % (i, len(a), len(b),
                                             a[i][:240] if i < len(a) else None,
                                             b[i][:240] if i < len(b) else None)


def polls_by_itself(ctx):
    """No idle= word was given: the kernel chose to poll, and said why."""
    env = ctx.one("environment")
    if env.get("idle") != "poll" or not str(env.get("idle_reason", "")).startswith(
            "idle=auto, virtual time"):
        return "environment idle %r (%r): the kernel did not poll by itself under icount" % (
            env.get("idle"), env.get("idle_reason"))


def repeatable(ctx):
    """The first run's records, and those of two more run at the same time beside a
    CPU-bound loop on the host, are the same byte for byte. The first difference is named."""
    a = _tlr(ctx.data)
    if not a:
        return "no records to compare"
    busy = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        others = ctx.rerun(together=2)
    finally:
        busy.kill()
        busy.wait()
    for k, data in enumerate(others, 2):
        d = _first_diff(a, _tlr(data))
        if d:
            return "run %d (two at once beside a busy loop) differs from run 1 at %s" % (k, d)
    return None


def says_nothing_off_virtual_time(ctx):
    """With -rtc clock=vm nothing is off virtual time (the check does not fire on its own)."""
    env = ctx.one("environment")
    if "off_virtual_time" in env:
        return "environment says %r is off virtual time under -rtc clock=vm" % (
            env["off_virtual_time"],)


def _variant(case, suffix, args, qemu_extra):
    return replace(case, name=case.name + "-" + suffix, args=args, qemu_extra=qemu_extra,
                   checks=[], run=None)


def _off_virtual_time(runs):
    env = [r for r in runs[0].records if r.type == "environment"]
    return env[0].get("off_virtual_time") if env else None


def repeatable_and_alike(ctx):
    """At once beside a CPU-bound loop: the same boot again gives the first run's records
    byte for byte; make run's defaults spelled out give its result and verdict records; two
    boots with the RTC on the host's clock each say the RTC is off virtual time and give
    equal result and verdict records. The first difference is named."""
    a = _tlr(ctx.data)
    mine = _measured(ctx.runs)
    if not a or not mine:
        return "no records to compare"
    spelled = _variant(ctx.case, "spelled-out", SPELLED_OUT, ctx.case.qemu_extra)
    rtc_host = [_variant(ctx.case, "rtc-host%d" % k, ctx.case.args,
                         tuple(ctx.case.qemu_extra or ()) + RTC_ON_HOST) for k in (1, 2)]
    busy = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        again, spelled_data, rtc1, rtc2 = ctx.rerun(together=1, variants=[spelled] + rtc_host)
    finally:
        busy.kill()
        busy.wait()
    d = _first_diff(a, _tlr(again))
    if d:
        return "the same boot again (beside a busy loop) differs from the first at %s" % d
    parsed = {}
    for what, data in (("the defaults spelled out", spelled_data),
                       ("the first boot with the RTC on the host clock", rtc1),
                       ("the second boot with the RTC on the host clock", rtc2)):
        runs = records.parse_stream(data)
        if len(runs) != 1:
            return "%s: %d runs in its log" % (what, len(runs))
        parsed[what] = runs
    d = _first_diff(mine, _measured(parsed["the defaults spelled out"]))
    if d:
        return ("the defaults spelled out (%r) differ from the first run's result/verdict "
                "records at %s" % (SPELLED_OUT, d))
    first, second = (parsed[w] for w in list(parsed)[1:])
    for what, runs in list(parsed.items())[1:]:
        if _off_virtual_time(runs) != "rtc":
            return ("%s under -icount: environment off_virtual_time is %r, not \"rtc\"" %
                    (what, _off_virtual_time(runs)))
    d = _first_diff(_measured(first), _measured(second))
    if d:
        return ("the two boots with the RTC on the host clock differ in their result/verdict "
                "records at %s" % d)
    return None


REPEAT_CASES = [
    Case("exp-quick-all-icount", "the quick profile, every experiment: records, predicted "
         "figures and verdict; then at once beside a busy loop, the same boot again gives "
         "the same records byte for byte, make run's defaults spelled out (another order, "
         "runs of spaces) give the same result and verdict records, and so do two boots "
         "with the RTC on the host's clock (each says it is off virtual time)",
         icount=0, timeout_s=600,
         checks=[end_status("ok"), no_errors] + exp_checks.QUICK_ICOUNT +
                [polls_by_itself, says_nothing_off_virtual_time, repeatable_and_alike]),
]

LONG = [
    Case("exp-full-repeatable-icount", "the full profile: two more runs at once beside a busy "
         "loop give the same records byte for byte", icount=0, timeout_s=3600,
         args="profile=full", checks=[end_status("ok"), no_errors, repeatable]),
]
