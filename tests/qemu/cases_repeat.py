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

REPEAT_CASES run in `make test` (the quick profile: about a minute a run). LONG holds the
full profile's check, about 20 minutes a run under that load: `make test-long`
(boottest.py --long) runs it, never `make test`.
"""
import subprocess

from cases import Case, end_status, no_errors


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


REPEAT_CASES = [
    Case("exp-quick-repeatable-icount", "the quick profile, every experiment: two more runs "
         "at once beside a busy loop give the same records byte for byte", icount=0,
         timeout_s=400, checks=[end_status("ok"), no_errors, polls_by_itself, repeatable]),
]

LONG = [
    Case("exp-full-repeatable-icount", "the full profile: two more runs at once beside a busy "
         "loop give the same records byte for byte", icount=0, timeout_s=3600,
         args="profile=full", checks=[end_status("ok"), no_errors, repeatable]),
]
