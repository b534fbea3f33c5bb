"""What a real PC sends that QEMU does not by itself: boot cases (docs/real-hardware.md,
"What a PC does to a run").

Each event is made the way QEMU can make it: NMIs through the monitor's `nmi` (HMP; it goes to
every CPU's LINT1, which ticklab sets as the MADT says), machine checks through `mce`, an
interrupt at a vector nobody handles through the `stray_irq=` test aid (a self IPI), a level
line held asserted through QEMU's `edu` teaching device. A case that needs the monitor boots
through run_monitored(): QEMU with the monitor on a socket, a script that watches the
serial log and sends commands when the kernel gets somewhere, then QEMU's own end as usual.

The run must go on to `ok` (or, for an uncorrected machine check, end with a fault record
naming the bank), and the records must say what came: the `machine_events` totals, a
`window_events` record for each measurement window something fell in, hwlat's `nmi_count`.
"""
import os
import re
import subprocess
import threading
import time

from cases import CLEAN, EXIT_FAILED, EXIT_OK, Case, end_status, has_record, no_errors
from cases_qr import Monitor, end_qemu, start_monitored

POLL_S = 0.02


class Run:
    """A running QEMU, its serial log and its monitor, for a case's script."""

    def __init__(self, p, mon, log, deadline, case=None):
        self.p, self.mon, self.log, self.deadline, self.case = p, mon, log, deadline, case
        self.lock = threading.Lock()

    def data(self):
        return open(self.log, "rb").read() if os.path.exists(self.log) else b""

    def wait(self, pattern, what=None):
        """Waits until the serial log matches pattern (bytes regex); the match, or raises."""
        rx = re.compile(pattern)
        while True:
            m = rx.search(self.data())
            if m:
                return m
            if self.p.poll() is not None:
                raise TimeoutError("QEMU ended (exit %s) before %s" % (
                    self.p.returncode, what or pattern))
            if time.monotonic() > self.deadline:
                raise TimeoutError("timeout waiting for %s" % (what or pattern))
            time.sleep(POLL_S)

    def cmd(self, line):
        """Sends a monitor command: True, or False when QEMU ended meanwhile (its monitor
        closes with it: a run may end between the poll and the command); raises when the
        monitor fails while QEMU still runs."""
        with self.lock:
            try:
                self.mon.cmd(line)
                return True
            except (OSError, TimeoutError) as e:
                try:
                    self.p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    raise e from None
                return False

    def nmis(self, n, gap_s=0.0):
        for _ in range(n):
            if self.p.poll() is not None or not self.cmd("nmi"):
                return
            if gap_s:
                time.sleep(gap_s)

    def nmis_until(self, pattern, gap_s):
        """NMIs every gap_s until the log matches pattern (or QEMU ends): how many."""
        rx, sent = re.compile(pattern), 0
        while self.p.poll() is None and not rx.search(self.data()):
            if time.monotonic() > self.deadline:
                raise TimeoutError("timeout sending NMIs until %s" % pattern)
            if not self.cmd("nmi"):
                break
            sent += 1
            time.sleep(gap_s)
        return sent


def run_monitored(script, until_exit=True):
    """A Case.run: boots with the monitor, runs script(run), then lets QEMU end by itself
    (until_exit) or stops it. Returns (exit code, stderr, why stopped) as boottest.run_qemu."""
    def run(case, log, h):
        mon_path = os.path.join(h.out, case.name + ".mon")
        h.fresh(mon_path)
        p, err = start_monitored(case, log, h, mon_path)
        deadline = time.monotonic() + case.timeout_s
        why, rc = None, None
        try:
            mon = Monitor(mon_path, deadline)
            r = Run(p, mon, log, deadline, case)
            script(r)
            if until_exit:
                while p.poll() is None and time.monotonic() < deadline:
                    time.sleep(POLL_S)
                if p.poll() is None:
                    why = "QEMU still running after %d s" % case.timeout_s
                else:
                    rc = p.returncode
            else:
                rc = EXIT_OK
            mon.close()
        except (OSError, TimeoutError) as e:
            why = "%s (the monitor script)" % e
        finally:
            stderr = end_qemu(p, err)
        return (None if why else rc), stderr, why
    return run


# ---- checks -------------------------------------------------------------------------------

def no_fault(ctx):
    if ctx.recs("fault") or b"*** fault" in ctx.data:
        return "a fault was reported: %r" % [dict(r) for r in ctx.recs("fault")]


def machine_events(**at_least):
    """The run's totals: each named count at least the given value, the others as given by
    exact=... (a dict of counts that must be equal)."""
    def check(ctx):
        m = ctx.one("machine_events")
        for k, v in at_least.items():
            if m.get(k, 0) < v:
                return "machine_events %s = %r, expected at least %d: %r" % (k, m.get(k), v,
                                                                            dict(m))
    return check


def machine_events_exact(**want):
    def check(ctx):
        m = ctx.one("machine_events")
        for k, v in want.items():
            if m.get(k) != v:
                return "machine_events %s = %r, expected %r: %r" % (k, m.get(k), v, dict(m))
    return check


def record_index(ctx, rec):
    for i, r in enumerate(ctx.runs[0].records):
        if r is rec:
            return i
    return None


def window_covers(rtype, pred, key):
    """Some `window_events` record with key > 0 covers (first_record .. + records) a record
    of rtype for which pred holds: the figure is marked by the window it was measured in."""
    def check(ctx):
        rows = [r for r in ctx.recs(rtype) if pred(r)]
        if not rows:
            return "no %s record to look for" % rtype
        idx = [record_index(ctx, r) for r in rows]
        for w in ctx.recs("window_events"):
            lo, n = w.get("first_record"), w.get("records")
            if w.get(key, 0) > 0 and any(lo <= i < lo + n for i in idx):
                return None
        return "no window_events record with %s covers the %s records %r: %r" % (
            key, rtype, idx, [dict(w) for w in ctx.recs("window_events")])
    return check


def hwlat_counted_nmis(ctx):
    rows = [r for r in ctx.recs("result") if r.get("exp") == "hwlat"]
    if len(rows) != 1 or rows[0].get("nmi_count", 0) < 1 or rows[0].get("nmi_total_ns", 0) <= 0:
        return "hwlat row without NMIs counted in its sample windows: %r" % [dict(r) for r in rows]


def nmi_totals_agree(ctx):
    """Every window's NMIs are in the run's total (the total may hold more: NMIs outside any
    window, at boot or between windows)."""
    total = ctx.one("machine_events").get("nmi")
    windows = sum(w.get("nmi", 0) for w in ctx.recs("window_events"))
    if windows > total:
        return "windows count %d NMIs, the run %d" % (windows, total)


def calibration_chosen_ok(ctx):
    tsc = [r for r in ctx.recs("calibration") if r.get("target") == "tsc" and r.get("chosen")]
    if len(tsc) != 1 or tsc[0].get("status") != "ok":
        return "no TSC calibration chosen: %r" % [dict(r) for r in ctx.recs("calibration")]


BANNER = rb"ticklab [0-9.]+ \("
INTERRUPTS_LINE = rb"  interrupts  through"
END = rb'TLR [0-9a-f]{8} \{"type":"end"'


def nmis_at_boot(r):
    r.wait(BANNER, "the kernel's first line")
    r.nmis(5, 0.002)


def nmis_in_calibration(r):
    """From the line just before the calibration (written at once: the log is not up yet)
    until its records come out (they wait in RAM until it is done)."""
    r.wait(INTERRUPTS_LINE, "the interrupts line")
    r.nmis_until(rb'"type":"calibration"', 0.005)


def nmis_throughout(r):
    r.wait(BANNER, "the kernel's first line")
    r.nmis_until(END, 0.02)


QR_PART = rb"qr: part (\d+) of (\d+) on screen"
HOLD = rb"qr: summary on screen until a key"


def nmis_on_last_screens(r):
    """After the end record (the summary screen), then on the QR codes' screens: the codes
    must go on coming."""
    r.wait(END, "the end record")
    r.nmis(5, 0.01)
    r.wait(HOLD, "the summary's hold")
    r.nmis(5, 0.01)
    r.cmd("sendkey spc")          # the hold ends by the key, not after its 60 s
    r.wait(rb"qr: part 1 of \d+ on screen", "the first code")
    r.nmis(5, 0.01)
    r.wait(rb"qr: part 3 of \d+ on screen", "the third code, after the NMIs")


def screens_went_on(ctx):
    parts = re.findall(QR_PART, ctx.data)
    if len(parts) < 3:
        return "the codes stopped after %d: %r" % (len(parts), parts)
    tail = ctx.data.split(b'"type":"end"', 1)[1]
    if b"TLR " in tail or b"fault" in tail:
        return "records or a fault after the end record: %r" % tail[:300]


def stray_pit_class(ctx):
    """The stray vector 0x3f (priority class 3, the PIT's 0x30 and the RTC's 0x38) was
    acknowledged: the PIT's tick kept coming (none lost under icount, every one taken), and
    period-compare's wheel timers ran every 250 and 256 ticks as the source predicts. Left in
    service, it blocked the PIT for the rest of the run (the tick lost 1321 of 1335, and the
    Linux-rounded wheel timer ran every 280 ticks)."""
    errs = [e for e in ctx.recs("error")]
    if [(e.get("what"), e.get("vector"), e.get("count"), e.get("acknowledged"))
            for e in errs] != [("unexpected_interrupt", 0x3f, 1, True)]:
        return "error records %r" % [dict(e) for e in errs]
    if not errs[0].get("source"):
        return "the stray vector is not named"
    ts = [t for t in ctx.recs("tick_stats") if t.get("device") == "pit"]
    if len(ts) != 1 or ts[0].get("lost_all_starts") != 0:
        return "the PIT tick lost ticks after the stray vector: %r" % [dict(t) for t in ts]
    rows = {r["timer"]: r for r in ctx.recs("result") if r.get("exp") == "period-compare"}
    got = (rows.get("jiffies", {}).get("ticks_per_period"),
           rows.get("jiffies_linux", {}).get("ticks_per_period"))
    if got != (250, 256):
        return "period-compare's wheel timers ran every %r ticks, not (250, 256)" % (got,)


PC_CASES = [
    Case("nmi-at-boot", "NMIs (the monitor's `nmi`) as the kernel prints its first line: "
         "counted, the run ends ok without a fault record", args="exp=none", timeout_s=120,
         run=run_monitored(nmis_at_boot),
         checks=[end_status("ok"), no_fault, machine_events(nmi=1), no_errors]),
    Case("nmi-in-calibration", "NMIs every 5 ms while the TSC and LAPIC timer are "
         "calibrated: counted, the calibration chosen, the run ok", args="exp=none",
         timeout_s=120, run=run_monitored(nmis_in_calibration),
         checks=[end_status("ok"), no_fault, machine_events(nmi=1), no_errors,
                 calibration_chosen_ok]),
    Case("nmi-throughout-hwlat", "NMIs every 20 ms from the first line to the end record, "
         "hwlat: counted in hwlat's sample windows (nmi_count) and in each measurement "
         "window's window_events record, the run ok", args="exp=hwlat", timeout_s=180,
         run=run_monitored(nmis_throughout),
         checks=[end_status("ok"), no_fault, machine_events(nmi=5), no_errors,
                 hwlat_counted_nmis, nmi_totals_agree,
                 window_covers("result", lambda r: r.get("exp") == "hwlat", "nmi")]),
    Case("nmi-on-last-screens", "GRUB framebuffer, qr=on: NMIs after the end record (the "
         "summary screen) and on the QR codes' screens: the codes go on", boot="iso",
         args="exp=none qr=on qr_part_ms=400", timeout_s=180,
         run=run_monitored(nmis_on_last_screens, until_exit=False),
         checks=[end_status("ok"), no_fault, screens_went_on]),
    Case("stray-vector-pit-class-icount", "stray_irq=0x3f (a self IPI at a vector nobody "
         "handles, in the PIT's and RTC's priority class) before period-compare on the PIT's "
         "tick, icount: acknowledged, counted and named; the PIT's interrupts keep coming",
         icount=0, timeout_s=180, args="exp=period-compare clockevent=pit stray_irq=0x3f",
         checks=[end_status("ok"), no_fault, machine_events_exact(unexpected_irqs=1),
                 stray_pit_class]),
]


# ---- machine checks (QEMU's `mce CPU BANK STATUS MCGSTATUS ADDR MISC`) --------------------
# A corrected error: VAL|EN and an error code (0x17: a generic memory error), MCG_STATUS 0:
# QEMU only logs it in the bank (no #MC, no CMCI under TCG), so the kernel's poll finds it.
MCE_CORRECTED = "mce 0 %d 0x9000000000000017 0 0 0"
# An uncorrected one: VAL|UC|EN|ADDRV|PCC, MCG_STATUS MCIP|EIPV (RIPV clear: not restartable):
# QEMU raises #MC, which it does only when MCG_CTL and the bank's CTL are all ones (the
# kernel sets them as Linux does; left as reset, QEMU ignores the injection).
MCE_FATAL = "mce 0 %d 0xb600000000000017 0x6 0x1234000 0"
# The exp_start record is written as the experiment's first window opens (its text lines wait
# for the window's end): what is sent after it falls inside the window, seconds long.
PERIOD_COMPARE_LINE = rb'"type":"exp_start","exp":"period-compare"'


def mce_corrected_mid_run(r):
    r.wait(PERIOD_COMPARE_LINE, "period-compare's exp_start record")
    r.cmd(MCE_CORRECTED % 1)
    r.cmd(MCE_CORRECTED % 2)


def mce_fatal_mid_run(r):
    r.wait(PERIOD_COMPARE_LINE, "period-compare's exp_start record")
    r.cmd(MCE_FATAL % 3)


def mce_fault_names_bank(ctx):
    f = ctx.one("fault")
    m = f.get("mce") or {}
    if (f.get("vector"), f.get("name"), f.get("cause")) != (18, "machine_check", "machine_check") \
            or m.get("bank") != 3 or m.get("status") != "0xb600000000000017" \
            or m.get("addr") != "0x1234000" or m.get("corrected") is not False \
            or f.get("restartable") is not False:
        return "fault record %r" % dict(f)
    if "machine check" not in (ctx.runs[0].end.get("reason") or ""):
        return "end reason %r" % ctx.runs[0].end.get("reason")


def mce_enabled(ctx):
    m = ctx.one("mce")
    if not m.get("present") or not m.get("enabled") or m.get("banks", 0) < 4:
        return "mce record %r" % dict(m)


PC_CASES += [
    Case("mce-corrected-counted", "-cpu max, two corrected machine checks logged (the "
         "monitor's `mce`) during period-compare: polled, counted in the window they fell in "
         "and in the run's totals, cleared; the run ok", qemu_extra=("-cpu", "max"),
         args="exp=period-compare", timeout_s=180, run=run_monitored(mce_corrected_mid_run),
         checks=[end_status("ok"), no_fault, no_errors, mce_enabled,
                 machine_events_exact(mce_corrected=2, mce_uncorrected_logged=0),
                 lambda ctx: None if sum(w.get("mce_corrected", 0) for w in
                                         ctx.recs("window_events")) == 2
                 else "window_events %r" % [dict(w) for w in ctx.recs("window_events")]]),
    Case("mce-uncorrected-ends-run", "-cpu max, an uncorrected machine check (UC|PCC, #MC) "
         "during period-compare: a fault record naming the bank, status and address; the run "
         "ends failed", qemu_extra=("-cpu", "max"), args="exp=period-compare", timeout_s=180,
         exit_code=EXIT_FAILED, run=run_monitored(mce_fatal_mid_run),
         checks=[end_status("failed"), mce_enabled, mce_fault_names_bank]),
]


# ---- AMD's LFENCE (drivers/amd_de_cfg.h) ----------------------------------------------------
def lfence_record(**want):
    def check(ctx):
        f = ctx.one("lfence")
        for k, v in want.items():
            if f.get(k) != v:
                return "lfence %s = %r, expected %r: %r" % (k, f.get(k), v, dict(f))
    return check


PC_CASES += [
    # Under TCG the MSR reads 0 and takes no write: the record must say the bit did not stick
    # (a real family 17h part, or KVM, sets it); the run goes on.
    Case("lfence-amd-17h-epyc", "-cpu EPYC (AMD family 17h): DE_CFG[1] is tried, read back, "
         "and the lfence record says what came of it (TCG keeps no write: not serialising)",
         qemu_extra=("-cpu", "EPYC"), args="exp=none",
         checks=CLEAN + [lfence_record(family=0x17, applies=True, state="not_taken",
                                       serialising=False)]),
    Case("lfence-amd-0fh-qemu64", "-cpu qemu64 (AMD family 0Fh): LFENCE serialises as it is, "
         "the MSR is left alone", args="exp=none",
         checks=CLEAN + [lfence_record(family=0x0F, applies=False, state="always",
                                       serialising=True)]),
]


# ---- a level line held asserted (QEMU's edu device, stuck_line=edu) -------------------------
# q35 wires slot s pin A to PIRQ E + s % 4, GSI 20 + s % 4: the edu device in slot 4 shares
# GSI 20 with HPET comparator 0 when the HPET can reach only GSI 2 and 20-23 (an Intel PCH's
# inputs). QEMU does not OR two drivers of one GSI: the HPET lowering its line on its own
# acknowledgement ends the edu's level too, so the HPET's tick runs at 50 Hz here (20 ms
# between its events), and the storm must be seen and masked within one of those gaps.
EDU = ("-device", "edu,addr=04.0")


def storm_record(action, new_gsi=None):
    def check(ctx):
        s = ctx.recs("irq_storm")
        got = [(r.get("device"), r.get("gsi"), r.get("action"), r.get("new_gsi")) for r in s]
        if got != [("hpet", 20, action, new_gsi)]:
            return "irq_storm records %r" % [dict(r) for r in s]
        if action == "unusable" and not s[0].get("reason"):
            return "the unusable comparator has no reason"
    return check


def storm_bounded(ctx):
    """GSI 20's vector was taken at most HPET_STORM_IRQS (1000) times more than the HPET's own
    events before its line was masked: the storm was broken out of at the bound (without,
    it ran until the HPET's next event, tens of thousands of interrupts under icount)."""
    hp = [r for r in ctx.recs("clockevent") if r.get("name") == "hpet"]
    vec = hp[0].get("vector") if hp else None
    n = ctx.one("irq_stats").get("vectors", {}).get("0x%02x" % (vec or 0), 0)
    if not vec or n > 1100:
        return "vector %r of GSI 20 taken %d times" % (vec, n)


PC_CASES += [
    Case("hpet-stuck-line-moved-icount", "the edu device holds GSI 20 asserted, which HPET "
         "comparator 0 shares (level, active low): after 1000 foreign interrupts in a row the "
         "line is masked and the comparator moved to GSI 21; period-compare on the HPET's tick "
         "then gives exact figures, the run ok",
         icount=0, timeout_s=180, qemu_extra=("-global", "hpet.hpet-intcap=0xf00004") + EDU,
         args="exp=period-compare clockevent=hpet hz=50 stuck_line=edu",
         checks=[end_status("ok"), no_fault, no_errors, storm_record("moved", 21),
                 storm_bounded, machine_events_exact(storms=1),
                 # the IOAPIC was masked before the HPET's legacy route was cleared
                 lambda ctx: None if "ioapic_entries_masked_first" in ctx.one("hpet_boot_state")
                 else "hpet_boot_state %r" % dict(ctx.one("hpet_boot_state")),
                 lambda ctx: None if [r["ticks_per_period"] for r in ctx.recs("result")
                                      if r.get("timer", "").startswith("jiffies")] == [250, 256]
                 else "period-compare rows %r" % [dict(r) for r in ctx.recs("result")]]),
    Case("hpet-stuck-line-unusable-icount", "as above with the HPET able to reach only GSI 2 "
         "(the PIT's) and 20: the line masked, no other input free, the comparator unusable "
         "with the reason; the run ends ok", icount=0, timeout_s=180,
         qemu_extra=("-global", "hpet.hpet-intcap=0x100004") + EDU,
         args="exp=none clockevent=hpet hz=50 stuck_line=edu",
         checks=[end_status("ok"), no_fault, no_errors, storm_record("unusable"),
                 storm_bounded, machine_events_exact(storms=1)]),
]


# ---- watchdogs (q35's ICH9 TCO; QEMU's i6300esb) ---------------------------------------------
# QEMU's TCO reads as running from reset but counts only from its first reload; the test aid
# watchdog_arm=tco starts it as firmware that leaves it running would (2 ticks: a reset 2.4 s
# later), and ICH9-LPC.noreboot=false lets the second timeout reset the machine (-no-reboot:
# QEMU then exits 0, with no end record).
TCO_REBOOTS = ("-global", "ICH9-LPC.noreboot=false")


def watchdog(kind, **want):
    def check(ctx):
        rs = [r for r in ctx.recs("watchdog") if r.get("kind") == kind]
        if len(rs) != 1:
            return "watchdog records %r" % [dict(r) for r in ctx.recs("watchdog")]
        for k, v in want.items():
            if rs[0].get(k) != v:
                return "watchdog %s %s = %r, expected %r: %r" % (kind, k, rs[0].get(k), v,
                                                                dict(rs[0]))
    return check


def no_end_record(ctx):
    if b'"type":"end"' in ctx.data:
        return "the run ended: the watchdog did not reset it"


PC_CASES += [
    Case("watchdog-tco-stopped", "q35's TCO started by the test aid (2.4 s to a reset, "
         "NO_REBOOT clear) and an i6300esb: both named, the TCO stopped and NO_REBOOT set, "
         "period-compare (5 s) runs to the end ok", args="exp=period-compare watchdog_arm=tco",
         qemu_extra=TCO_REBOOTS + ("-device", "i6300esb"), timeout_s=180,
         checks=[end_status("ok"), no_fault, no_errors,
                 watchdog("intel_tco", running_at_boot=True, action="stopped",
                          no_reboot_set=True, timeout_ms=1200),
                 watchdog("i6300esb", running_at_boot=False, action="not_running"),
                 has_record("watchdogs", mode="auto", found=2, fed=0)]),
    # The control: the same TCO left alone resets the machine mid-run, as it would a PC.
    Case("watchdog-tco-left-resets", "the same TCO with watchdog=leave: named, left, and the "
         "machine is reset before the run's end (QEMU -no-reboot exits 0)",
         args="exp=period-compare watchdog_arm=tco watchdog=leave", qemu_extra=TCO_REBOOTS,
         timeout_s=180, exit_code=0, expect_stream=False,
         checks=[no_end_record, watchdog("intel_tco", running_at_boot=True, action="left")]),
]


# ---- the kernel wherever its loader puts it ------------------------------------------------
# GRUB reads the Multiboot2 relocatable tag (boot/entry.asm: from 1 MiB up, 4 KiB aligned,
# lowest first), so it loads the kernel at 1 MiB whenever that is free. To make it choose
# another place, the boot case gives it a copy of the image whose tag asks for min_addr
# elsewhere (the tag is not in the header's checksum): the same kernel, another choice, as a
# firmware holding memory at 1 MiB would force. 0x181000 overlaps the link range itself (the
# entry must then switch through the direct map's alias); 0x2345000 lies past it.
import struct  # noqa: E402

RELOC_TAG = struct.pack("<HHIIIII", 10, 1, 24, 0x100000, 0xFFFFFFFF, 0x1000, 1)


def relocated_elf(min_addr):
    def env(case):
        src = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))), "build", "ticklab.elf")
        data = bytearray(open(src, "rb").read())
        at = data.find(RELOC_TAG)
        if at < 0 or data.count(RELOC_TAG) != 1:
            raise RuntimeError("no single Multiboot2 relocatable tag in build/ticklab.elf")
        data[at + 8:at + 12] = struct.pack("<I", min_addr)
        out = os.path.join(os.path.dirname(src), "test", case.name + ".elf")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        open(out, "wb").write(data)
        return {"KERNEL_ELF": out}
    return env


def loaded_at(phys):
    def check(ctx):
        p = ctx.one("paging")
        if (p.get("kernel_phys"), p.get("kernel_link"), p.get("relocated")) != \
                (hex(phys), "0x100000", True):
            return "paging record %r, expected the kernel at %#x" % (dict(p), phys)
    return check


PC_CASES += [
    Case("reloc-grub-bios-past-link", "GRUB (SeaBIOS) loads the kernel at 0x2345000 (its "
         "relocatable tag's lowest address): it runs there, two CPUs started, the run ok",
         boot="iso", smp=2, args="exp=none", iso_env=relocated_elf(0x2345000), timeout_s=180,
         checks=CLEAN + [loaded_at(0x2345000),
                         lambda ctx: None if all(r.get("online") for r in ctx.recs("cpu_start"))
                         and len(ctx.recs("cpu_start")) == 2
                         else "cpu_start %r" % [dict(r) for r in ctx.recs("cpu_start")]]),
    Case("reloc-grub-bios-overlapping", "GRUB loads the kernel at 0x181000, inside its own "
         "link range (1 MiB up): the entry switches through the direct map; the run ok",
         boot="iso", args="exp=none", iso_env=relocated_elf(0x181000), timeout_s=180,
         checks=CLEAN + [loaded_at(0x181000)]),
    Case("reloc-grub-ovmf", "GRUB under OVMF (UEFI) loads the kernel at 0x2345000: the run ok",
         boot="iso", firmware="uefi", args="exp=none", iso_env=relocated_elf(0x2345000),
         timeout_s=240, checks=CLEAN + [loaded_at(0x2345000)]),
]


# ---- a framebuffer high above 4 GiB ---------------------------------------------------------
# OVMF places 64-bit BARs in its 64-bit PCI aperture; asked for a 512 GiB one
# (opt/ovmf/X-PciMmio64Mb) it puts it at 512 GiB, where Resizable-BAR boards put their GOP
# framebuffers. QEMU's display devices have only 32-bit framebuffer BARs, so the screen here is
# the ivshmem-plain device's 64-bit BAR 2 on a host file (the test aid fb_override=ivshmem:
# 1024x768, 32 bpp): the kernel maps it in its device window, write-combining, draws the QR
# codes there, and the host decodes one from the file.
FB_BYTES = 16 << 20


def fb_file(case):
    return os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "build", "test", case.name + ".fb")


def ivshmem_fb(case):
    f = fb_file(case)
    if os.path.exists(f):
        os.remove(f)
    return ["-object", "memory-backend-file,id=fbm,size=%d,mem-path=%s,share=on" % (FB_BYTES, f),
            "-device", "ivshmem-plain,memdev=fbm",
            "-fw_cfg", "name=opt/ovmf/X-PciMmio64Mb,string=524288"]


def snapshot_first_code(r):
    r.wait(HOLD, "the summary's hold")
    r.cmd("sendkey spc")          # as a person would: the codes come without the 60 s wait
    r.wait(rb"qr: part 1 of \d+ on screen", "the first QR code")
    r.cmd("stop")
    import shutil
    shutil.copyfile(fb_file(r.case), fb_file(r.case) + ".snap")
    r.cmd("cont")


def fb_high_and_wc(ctx):
    c = ctx.one("console")
    if not c.get("screen_active") or int(c.get("fb_phys", "0x0"), 16) < 512 << 30 or \
            c.get("fb_mapping") != "write-combining (PAT)":
        return "console record %r" % dict(c)


def code_decodes_from_the_fb(ctx):
    from PIL import Image
    raw = open(fb_file(ctx.case) + ".snap", "rb").read(1024 * 768 * 4)
    png = fb_file(ctx.case) + ".png"
    Image.frombytes("RGB", (1024, 768), raw, "raw", "BGRX").save(png)
    out = subprocess.run(["zbarimg", "-q", "--raw", "-Sbinary", png], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE).stdout
    if not out.startswith(b"TQ"):
        return "no ticklab QR code read from the framebuffer's memory (zbarimg: %r)" % out[:60]


PC_CASES += [
    Case("fb-above-512gib-wc", "ticklab.efi under OVMF with the screen at 512 GiB (ivshmem's "
         "BAR 2 in a 512 GiB aperture, fb_override=ivshmem): mapped write-combining, the QR "
         "codes drawn there decode from the device's memory", boot="efi", firmware="uefi",
         args="exp=none fb_override=ivshmem qr=on qr_part_ms=500", prepare=ivshmem_fb,
         timeout_s=240, run=run_monitored(snapshot_first_code, until_exit=False),
         checks=[end_status("ok"), no_fault, fb_high_and_wc, code_decodes_from_the_fb]),
]


def core_clock_per_window(smi_known):
    """The `core_clock` record says what this CPU lets be known; every window_events record
    states the core clock (or why not) and the SMIs (or why not)."""
    def check(ctx):
        c = ctx.one("core_clock")
        if c.get("smi_count") is not smi_known or c.get("aperf_mperf") is not False or \
                not c.get("clock_reason"):
            return "core_clock %r" % dict(c)
        ws = ctx.recs("window_events")
        if smi_known and len(ws) < 3:
            return "SMIs counted but only %d window_events records" % len(ws)
        for w in ws:
            cc = w.get("core_clock") or {}
            if not cc.get("reason") or (smi_known and w.get("smi") != 0) or \
                    (not smi_known and not w.get("smi_reason")):
                return "window_events without its core clock or SMIs: %r" % dict(w)
    return check


PC_CASES += [
    # QEMU runs real SMM on q35,smm=on and counts SMIs in MSR 0x34 for an Intel CPU model;
    # TCG has no APERF/MPERF: every window says so, and states its SMIs (none here).
    Case("core-clock-smi-per-window-q35-smm", "q35,smm=on, an Intel CPU model: the SMI count "
         "read per window (0 in each), the core clock 'not available' with TCG's reason in "
         "every window_events record", machine="q35,smm=on",
         qemu_extra=("-cpu", "Skylake-Client"), args="exp=none",
         checks=[end_status("ok"), no_fault, no_errors, core_clock_per_window(True)]),
    Case("core-clock-smi-unknown-amd-model", "the default CPU model (AMD vendor under TCG): "
         "no SMI counter and no APERF/MPERF, each named in the core_clock record, no "
         "window_events record added; core_clock=base says why it cannot pin the clock",
         args="exp=none core_clock=base",
         checks=[end_status("ok"), no_fault, no_errors, core_clock_per_window(False),
                 has_record("core_clock", pin="base", pinned=False,
                            pin_reason="neither HWP nor IA32_PERF_CTL can be read: the request "
                            "cannot be set (an emulator, a hypervisor, or not an Intel CPU)"),
                 lambda ctx: None if not ctx.recs("window_events")
                 else "window_events %r" % [dict(w) for w in ctx.recs("window_events")]]),
]
