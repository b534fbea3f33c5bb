"""Boot-test cases for exact mode's promise: under `-icount shift=0,sleep=off` a
run's records are the same, byte for byte, however busy the host is.

How: a first run alone, then two more at the same time beside a CPU-bound loop (three
processes on the test machine's two cores, besides the other cases boottest.py runs), and
every `TLR` line of the three must be equal. No allowance and no third-run rule. The run
is exact mode as `make run` makes it: one CPU, the serial port to a file (a slow reader never
holds the UART), the RTC on the virtual clock, and no `idle=` word: the kernel sees virtual
time and polls by itself (idle=auto; no CPU halts, so QEMU's idle warp out of HLT, its one
host-dependent path, never happens: kernel/timers/idle.h). docs/experiments.md ("How
repeatable exact mode is") has the measurements behind it.

Two more cases hold that the figures depend only on the measurement's own settings: the
default command line against the same defaults spelled out in another order with other
whitespace, and two runs without `-rtc clock=vm` (the RTC on the host's clock: the kernel
finds its events off virtual time, does not use it, and says so in the environment record).
Each boots its pair at the same time and compares their `result` and `verdict` records.

REPEAT_CASES run in `make test` (the quick profile: about a minute a run). LONG holds the
full profile's check, about 20 minutes a run under that load: `make test-long`
(boottest.py --long) runs it, never `make test`.
"""
import subprocess

from cases import Case, end_status, no_errors
from cases_console import reference_runs, run_beside, same_figures_as_reference

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


def _env_of(runs):
    env = [r for r in runs[0].records if r.type == "environment"] if runs else []
    return env[0] if env else {}


def both_say_rtc_off_virtual_time(ctx):
    """Both runs found the RTC's events off virtual time and said so (environment record)."""
    for name, runs in (("this run", ctx.runs), ("the reference", reference_runs(ctx))):
        env = _env_of(runs)
        if env.get("off_virtual_time") != "rtc":
            return ("%s: environment off_virtual_time is %r with the RTC on the host clock "
                    "under -icount" % (name, env.get("off_virtual_time")))


def says_nothing_off_virtual_time(ctx):
    """With -rtc clock=vm nothing is off virtual time (the check does not fire on its own)."""
    env = ctx.one("environment")
    if "off_virtual_time" in env:
        return "environment says %r is off virtual time under -rtc clock=vm" % (
            env["off_virtual_time"],)


REPEAT_CASES = [
    Case("exp-quick-spelled-out-icount", "the quick profile with no words against make run's "
         "defaults spelled out (another order, runs of spaces), booted at once: equal result "
         "and verdict records", icount=0, timeout_s=600,
         run=run_beside(SPELLED_OUT),
         checks=[end_status("ok"), no_errors, says_nothing_off_virtual_time,
                 same_figures_as_reference]),
    Case("exp-quick-rtc-host-icount", "the quick profile under -icount with the RTC on the "
         "host's clock, twice at once: both say the RTC is off virtual time and leave it "
         "out; their result and verdict records are equal", icount=0, timeout_s=600,
         qemu_extra=RTC_ON_HOST, run=run_beside(""),
         checks=[end_status("ok"), no_errors, both_say_rtc_off_virtual_time,
                 same_figures_as_reference]),

    Case("exp-quick-repeatable-icount", "the quick profile, every experiment: two more runs "
         "at once beside a busy loop give the same records byte for byte", icount=0,
         timeout_s=400, checks=[end_status("ok"), no_errors, polls_by_itself, repeatable]),
]

LONG = [
    Case("exp-full-repeatable-icount", "the full profile: two more runs at once beside a busy "
         "loop give the same records byte for byte", icount=0, timeout_s=3600,
         args="profile=full", checks=[end_status("ok"), no_errors, repeatable]),
]
