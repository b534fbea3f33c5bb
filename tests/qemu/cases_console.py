"""Boot-test cases for output that never disturbs a measurement.

QEMU's 16550 takes every byte at once, so these boot with `uart_pace=1`: the kernel's UART
driver holds each byte for its 86.8 us at 115200 baud on the TSC, as a real transmitter
would. Under `-icount shift=0,sleep=off` (exact, repeatable virtual time):

- the output path never holds interrupts off for as long as a FIFO's worth of bytes takes
  (1.4 ms), no console time falls inside a measurement window, and every phase says so in a
  `console_phase` record;
- the measured figures do not depend on the console: the whole quick profile's `result` and
  `verdict` records, paced, equal byte for byte those of the same boot unpaced, booted beside
  it at the same time (`console-paced-quick-icount`).
- With `console_log=off` (lines written whole with interrupts off, as before the log) the
  same records show what that cost: the check that it is long proves the figure is measured.

The two command lines differ in one digit (uart_pace=1 against =0: a number, which the
parser reads in the same instructions either way); the boot record that echoes them differs
in its CRC, printed in a few instructions more or fewer, which is why every phase a window
depends on is set against the TSC, never against the boot's own timeline (the HPET is
enabled on a TSC phase, kernel/timers/clocks.c; windows start on TSC grid points,
kernel/exp/harness.c). Both run with make run's defaults: the TSC and LAPIC rates are
calibrated, and the rate applied is the roundest one inside the calibration's uncertainty
(lib/time/calibrate.h, calibrate_roundest), so the phase at which calibration started does
not move it (docs/experiments.md, "How repeatable exact mode is").
"""
import concurrent.futures
import json
from dataclasses import replace

from ticklablib import records
from cases import Case, end_status, no_errors

FIFO_NS_115200 = 16 * 86806          # one FIFO's worth of bytes on the line
# The long tier's pair: another first experiment (periodic-jitter's first phase differed
# when it ran first, before the HPET's phase was set on the TSC) and a later one.
PJ_FIRST = "exp=periodic-jitter,sleep-accuracy,itimer-error"


def _phases(ctx):
    return ctx.recs("console_phase")


def output_stays_out_of_windows(ctx):
    """Every phase after the log started: no console time inside a window, no full log,
    the output path's interrupts-off stretch under one FIFO's worth; the totals agree."""
    phases = _phases(ctx)
    if len(phases) < 3:
        return "expected console_phase records for the boot and the experiments, got %d" % len(
            phases)
    for p in phases:
        where = "%s:%s" % (p.get("exp"), p.get("phase"))
        if p.get("in_window_ns") != 0:
            return "console time inside a measurement window in %s: %s ns" % (
                where, p.get("in_window_ns"))
        if p.get("full_drains"):
            return "the log was full in %s (%s drains)" % (where, p.get("full_drains"))
        if p.get("phase") == "inventory and calibration":
            continue                   # before the log: written at once, unpaced
        if not p.get("paced"):
            return "%s was not paced" % where
        if not 0 < p.get("irqoff_max_ns", 0) < FIFO_NS_115200:
            return "%s: output path held interrupts off %s ns (a FIFO's worth is %d ns)" % (
                where, p.get("irqoff_max_ns"), FIFO_NS_115200)
    cost = ctx.one("console_cost")
    if cost.get("in_window_ns") != 0 or cost.get("lost_bytes") or cost.get("serial_timeouts"):
        return "console_cost: %s" % dict(cost)
    if not cost.get("paced") or cost.get("serial_fifo_bytes") != 16:
        return "console_cost says paced=%r fifo=%r" % (cost.get("paced"),
                                                      cost.get("serial_fifo_bytes"))
    # the line's real cost was paid: 86.8 us a byte of what went out paced (less the last
    # FIFO's worth of each drain, which is still on the wire when the drain returns)
    paced_bytes = sum(p.get("serial_bytes", 0) for p in phases
                      if p.get("phase") != "inventory and calibration")
    paced_ns = sum(p.get("console_ns", 0) for p in phases
                   if p.get("phase") != "inventory and calibration")
    if paced_ns < 0.9 * paced_bytes * 86806:
        return "%d paced bytes took %d ns of console time: less than the line needs" % (
            paced_bytes, paced_ns)


def _measured(runs):
    out = []
    for r in runs[0].records:
        if r.type in ("result", "verdict"):
            out.append(json.dumps(dict(r), sort_keys=True))
    return out


def ref_log(log):
    return log + ".ref"


def run_beside(ref_args, ref_extra=None):
    """Case.run: the case's boot and a reference boot with ref_args (and ref_extra as its
    QEMU arguments when given, else the case's), at the same time (exact mode does not
    depend on the host), the reference's serial log beside the case's (ref_log). A
    reference that does not end as the case must is a failure."""
    def run(case, log, h):
        ref = replace(case, name=case.name + "-ref", args=ref_args, run=None, checks=[],
                      qemu_extra=case.qemu_extra if ref_extra is None else ref_extra)
        rlog = ref_log(log)
        h.fresh(rlog)
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            mine = pool.submit(h.run_qemu, h.qemu_command(case, log), log, case.timeout_s,
                               case.end_grace_s)
            theirs = pool.submit(h.run_qemu, h.qemu_command(ref, rlog), rlog,
                                 ref.timeout_s, ref.end_grace_s)
            out, ref_out = mine.result(), theirs.result()
        if ref_out[2] or ref_out[0] != case.exit_code:
            return (out[0], out[1], "the reference boot (%r): %s" % (ref_args, (
                ref_out[2] or "QEMU exit %s" % ref_out[0])))
        return out
    return run


def reference_runs(ctx):
    with open(ref_log(ctx.log), "rb") as f:
        return records.parse_stream(f.read())


def same_figures_as_reference(ctx):
    """The `result` and `verdict` records equal, byte for byte, those of the reference boot
    run beside it (run_beside)."""
    mine = _measured(ctx.runs)
    theirs = _measured(reference_runs(ctx))
    if not mine:
        return "no result or verdict records"
    if mine != theirs:
        i = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b),
                 min(len(mine), len(theirs)))
        return ("this run and the reference differ at measured record %d of %d/%d:\n  this "
                "%s\n  ref  %s" % (i, len(mine), len(theirs),
                                     mine[i][:400] if i < len(mine) else None,
                                     theirs[i][:400] if i < len(theirs) else None))


def sync_output_is_seen_long(ctx):
    """console_log=off, paced: a line written whole keeps interrupts off for its bytes'
    time, and the records say so (the measurement can see what the log prevents)."""
    cost = ctx.one("console_cost")
    if cost.get("buffered") is not False:
        return "console_cost.buffered is %r with console_log=off" % cost.get("buffered")
    if cost.get("irqoff_max_ns", 0) < 10 * FIFO_NS_115200:
        return ("console_log=off at a paced 115200 baud: the longest interrupts-off stretch "
                "is only %s ns" % cost.get("irqoff_max_ns"))


CONSOLE_CASES = [
    Case("console-paced-quick-icount", "the quick profile paced at 115200 baud under -icount, "
         "beside the same boot unpaced: its result and verdict records equal the unpaced "
         "run's byte for byte; no console time inside a window, no full log, the output "
         "path's interrupts-off stretches under a FIFO's worth, the line's cost paid",
         icount=0, timeout_s=1200, args="uart_pace=1",
         run=run_beside("uart_pace=0"),
         checks=[end_status("ok"), no_errors, output_stays_out_of_windows,
                 same_figures_as_reference]),
    Case("console-sync-paced-icount", "console_log=off, paced: written whole with interrupts "
         "off, a line's bytes keep them off (the way before the in-memory log)", icount=0,
         timeout_s=300, args="idle=poll exp=none console_log=off uart_pace=1",
         checks=[end_status("ok"), no_errors, sync_output_is_seen_long]),
]

# Another order of experiments, in the long tier (make test-long).
LONG_CONSOLE = [
    Case("console-paced-same-figures-icount", "uart_pace=1 against uart_pace=0 under "
         "-icount, periodic-jitter first: equal result and verdict records", icount=0,
         timeout_s=900, args=PJ_FIRST + " uart_pace=1",
         run=run_beside(PJ_FIRST + " uart_pace=0"),
         checks=[end_status("ok"), no_errors, output_stays_out_of_windows,
                 same_figures_as_reference]),
]
