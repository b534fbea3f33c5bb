#!/usr/bin/python3
"""Boot tests: run the ticklab image under QEMU and check the record stream it sends.

Each case boots one configuration (machine, firmware, loader path, accelerator, command
line), captures the serial output to build/test/<case>.log, verifies every record's CRC and
the end count with tools/ticklablib (the same reader users run), then checks what the case
is about. Timing is never asserted on plain emulation or KVM (both real time); cases that
compare timing run under -icount shift=N,sleep=off, where virtual time is exact.

Two tiers. The TCG tier (software emulation, plain or icount) runs everywhere. The KVM tier
(cases with accel="kvm", tests/qemu/cases_kvm.py and the KVM USB-stick cases) runs when
/dev/kvm is usable: it is probed once (the device opens read-write, then a short KVM boot);
where it is not, every KVM case prints `SKIP <name> <reason>` and counts neither way.
The tiers run side by side, each in its own pool (-j TCG boots, --kvm-jobs KVM boots), each
taking its longest cases first (their times in the last run, build/test/durations.json).
Nested KVM is not idle time: a KVM boot keeps a host core busy in the hypervisor (sys time)
about as long as it runs, so the two pools share the cores.

A case with requires (the Secure Boot cases, tests/qemu/cases_secureboot.py, which need
Debian's signed shim from its archive) prints `SKIP <name> <reason>` where it cannot run;
a case with run boots through its own procedure (several QEMU runs, firmware menus
answered through the serial console) and is checked like any other.

Every QEMU runs under a timeout, and is stopped (and the case failed) when the run's end
record has come and QEMU has not exited within end_grace_s: the kernel writes the exit port
right after the end record, so a QEMU still running then is a kernel that never reached it.

Usage: boottest.py [-k SUBSTRING]... [-j JOBS] [--kvm-jobs N] [--no-kvm] [--list]
Prints one PASS/FAIL/SKIP line per case, then `qemu: N passed, N failed, N skipped`.
"""
import argparse
import concurrent.futures
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import types

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from ticklablib import records  # noqa: E402
from ticklablib.qemu import KVM_CPU, KVM_DEVICE  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402
import cases_kvm  # noqa: E402

OUT = os.path.join(ROOT, "build", "test")
OVMF = "/usr/share/ovmf/OVMF.fd"
POLL_S = 0.25
SLOW_CHECK_S = 5.0   # a check that takes longer says so


class CaseFailed(Exception):
    pass


def build_iso(case):
    iso = os.path.join(OUT, case.name + ".iso")
    env = dict(os.environ, **(case.iso_env(case) if case.iso_env else {}))
    subprocess.run([os.path.join(ROOT, "scripts", "mkiso.sh"), iso, "0", case.args],
                   cwd=ROOT, check=True, capture_output=True, env=env)
    return iso


def build_efi_dir(case):
    """The FAT directory QEMU shows the firmware as a disk (scripts/mkefi.sh): boot="efi" is
    EFI/BOOT/BOOTX64.EFI with the arguments in \\ticklab-cmdline.txt; boot="efi-shell" is
    \\ticklab.efi started by startup.nsh in the UEFI shell, arguments as load options."""
    d = os.path.join(OUT, case.name + ".fat")
    cmd = [os.path.join(ROOT, "scripts", "mkefi.sh")]
    if case.boot == "efi-shell":
        cmd.append("--shell")
    cmd.append(d)
    if case.args or case.boot == "efi-shell":
        cmd.append(case.args)
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
    return d


def stick_image(case):
    """Where boot="usb" keeps the stick: one file per case and per boottest process (QEMU
    locks its disk image for writing, so two boots cannot share one). Removed after the case."""
    return os.path.join(OUT, "%s.%d.img" % (case.name, os.getpid()))


def build_stick(case):
    """The USB stick's image for boot="usb" (stick_image):
      make-usb  the bytes `make usb` writes to build/ticklab-usb.img: build/ticklab.iso as it
                is (the Makefile copies it), its GRUB menu's default entry (quick profile)
      hybrid    the same hybrid GRUB image made by scripts/mkiso.sh with case.args as the
                one menu entry, so short runs (exp=none) boot the stick layout
      efi-img   the EFI-only stick of `make usb` (scripts/mkefi.sh OUT.img), case.args in
                its \\ticklab-cmdline.txt when given (make usb USB_ARGS=...)"""
    img = stick_image(case)
    if case.stick == "make-usb":
        shutil.copyfile(os.path.join(ROOT, "build", "ticklab.iso"), img)
    elif case.stick == "hybrid":
        subprocess.run([os.path.join(ROOT, "scripts", "mkiso.sh"), img, "0", case.args],
                       cwd=ROOT, check=True, capture_output=True)
    elif case.stick == "efi-img":
        cmd = [os.path.join(ROOT, "scripts", "mkefi.sh"), img] + ([case.args] if case.args else [])
        subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
    else:
        raise CaseFailed("unknown stick %r" % case.stick)
    return img


def usb_stick_args(img):
    """A USB mass-storage device on an xHCI controller, as a stick in a PC's USB port, first
    in the boot order (SeaBIOS and OVMF both follow bootindex)."""
    return ["-device", "qemu-xhci,id=xhci",
            "-drive", "if=none,id=stick,format=raw,file=" + img,
            "-device", "usb-storage,bus=xhci.0,drive=stick,bootindex=0"]


def qemu_command(case, log):
    cmd = ["qemu-system-x86_64", "-machine", case.machine, "-m", case.mem, "-smp",
           str(case.smp), "-display", "none", "-no-reboot",
           "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]
    if case.accel == "kvm":
        if case.icount is not None:
            raise CaseFailed("icount needs TCG: a KVM case cannot set it")
        cmd += ["-accel", "kvm"]
        # Plain -cpu host aborts QEMU 7.2 on these hosts ("failed to set MSR 0x10a").
        if "-cpu" not in case.qemu_extra:
            cmd += ["-cpu", KVM_CPU]
    if case.icount is not None:
        # Exact and repeatable only if nothing runs on the host's clock: the RTC follows
        # the VM clock, and no NIC (user networking keeps host-clock timers). With either,
        # QEMU's main loop wakes at host-dependent moments and delivers device interrupts
        # a few instructions apart from run to run.
        cmd += ["-icount", "shift=%d,sleep=off" % case.icount]
        if "-rtc" not in case.qemu_extra:
            cmd += ["-rtc", "clock=vm"]
        if "-nic" not in case.qemu_extra and case.boot not in ("efi", "efi-shell", "usb"):
            cmd += ["-nic", "none"]
    if case.firmware == "uefi":
        cmd += ["-bios", OVMF]
    if case.boot == "iso":
        cmd += ["-cdrom", build_iso(case)]
    elif case.boot in ("efi", "efi-shell"):
        # No NIC: with nothing on the disk to boot, OVMF would try PXE before its shell.
        cmd += ["-drive", "format=raw,file=fat:rw:" + build_efi_dir(case), "-nic", "none"]
    elif case.boot == "usb":
        cmd += usb_stick_args(build_stick(case))
        if "-nic" not in case.qemu_extra:
            cmd += ["-nic", "none"]    # no network boot entry to fall to, no iPXE ROM to load
    else:
        cmd += ["-kernel", os.path.join(ROOT, "build", case.kernel), "-append", case.args]
    if case.prepare:
        cmd += list(case.prepare(case))
    if case.serial:
        cmd += [a.replace("{log}", log) for a in case.serial]
    elif case.serial_on_com2:
        cmd += ["-serial", "null", "-serial", "file:" + log]
    elif case.no_serial:
        cmd += ["-serial", "none"]
    else:
        cmd += ["-serial", "file:" + log]
    return cmd + list(case.qemu_extra)


def last_words(data):
    """Where a run stopped, for a failure message: the last record's type and the last line
    of the kernel's own text (progress lines name the phase)."""
    runs = records.parse_stream(data)
    recs = runs[-1].records if runs else []
    text = [l.strip() for l in data.decode("utf-8", "replace").replace("\r", "\n").split("\n")
            if l.strip() and not l.startswith("TLR ")]
    return "last record %s, last text %r" % (recs[-1].type if recs else "none",
                                             text[-1][:120] if text else "")


def run_qemu(cmd, log, timeout_s, end_grace_s):
    """Runs QEMU to its exit, its timeout, or end_grace_s after the end record came (then it
    is stopped). Returns (exit code or None, stderr text, why we stopped it or None)."""
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=err)
        parser, got, ended_at, why = records.StreamParser(), 0, None, None
        start = time.monotonic()
        try:
            while p.poll() is None:
                now = time.monotonic()
                if now - start > timeout_s:
                    why = "QEMU still running after %d s" % timeout_s
                    break
                if ended_at is None and os.path.exists(log):
                    with open(log, "rb") as f:
                        f.seek(got)
                        chunk = f.read()
                    got += len(chunk)
                    if any(r.type == "end" for r in parser.feed(chunk)):
                        ended_at = now
                if ended_at is not None and now - ended_at > end_grace_s:
                    why = ("the end record came, then QEMU did not exit within %d s: the "
                           "kernel never reached the exit port" % end_grace_s)
                    break
                time.sleep(POLL_S)
        finally:
            if p.poll() is None:
                p.kill()
            p.wait(timeout=30)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    return (None if why else p.returncode), stderr, why


def lit_pixels(ppm):
    """Pixels that are not black in a binary PPM (P6) screendump."""
    parts = ppm.split(b"\n", 3)
    if len(parts) < 4 or parts[0] != b"P6":
        raise CaseFailed("screendump is not a P6 PPM")
    pixels = parts[3]
    return sum(1 for i in range(0, len(pixels) - 2, 3) if pixels[i] or pixels[i + 1] or pixels[i + 2])


SCREEN_SETTLE_S = 2.0      # two screendumps this far apart must show the same screen
SCREEN_CURSOR_PX = 64      # ... but for the text cursor's blink (a few dozen pixels)
SCREEN_LIMIT_S = 120.0     # the longest a boot may take to draw its last screen


def run_screenshot_case(case, log):
    """Boots with the QEMU monitor on a socket and takes screendumps until the screen is
    done: at least screenshot_wait_s in, then two dumps SCREEN_SETTLE_S apart that both light
    screenshot_min_pixels or more and differ by no more than a blinking cursor (the run
    halts at its end, qemu_exit=0, so its last screen stays; the test images' GRUB has no
    menu countdown), bounded by SCREEN_LIMIT_S. Returns the lit pixels of the last dump. No
    fixed wait decides it: a loaded host only makes it take longer (regression: under load
    a fixed 12 s wait caught OVMF still booting, 0 lit pixels)."""
    import socket
    sock = os.path.join(OUT, case.name + ".mon")
    shot = os.path.join(OUT, case.name + ".ppm")
    for f in (sock, shot):
        if os.path.exists(f):
            os.remove(f)
    cmd = qemu_command(case, log) + ["-monitor", "unix:%s,server,nowait" % sock]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.monotonic()
    last = None
    try:
        time.sleep(case.screenshot_wait_s)
        s = socket.socket(socket.AF_UNIX)
        s.connect(sock)
        s.settimeout(5)
        s.recv(4096)
        while True:
            if os.path.exists(shot):
                os.remove(shot)
            s.sendall(b"screendump %s\n" % shot.encode())
            deadline = time.monotonic() + 10
            while not os.path.exists(shot) and time.monotonic() < deadline:
                time.sleep(0.1)
            time.sleep(0.5)           # the file appears before QEMU has finished writing it
            if not os.path.exists(shot):
                raise CaseFailed("no screendump was written")
            lit = lit_pixels(open(shot, "rb").read())
            if (last is not None and lit >= case.screenshot_min_pixels and
                    abs(lit - last) <= SCREEN_CURSOR_PX) or \
                    time.monotonic() - t0 > SCREEN_LIMIT_S:
                break
            last = lit
            time.sleep(SCREEN_SETTLE_S)
        s.close()
    finally:
        p.kill()
        p.wait(timeout=10)
    return lit


def read_log(log):
    return open(log, "rb").read() if os.path.exists(log) else b""


def fresh(path):
    if os.path.exists(path):
        os.remove(path)


# What a case's own boot procedure (Case.run) may use of the harness.
HARNESS = types.SimpleNamespace(root=ROOT, out=OUT, stick_image=stick_image,
                                usb_stick_args=usb_stick_args, lit_pixels=lit_pixels,
                                qemu_command=qemu_command, run_qemu=run_qemu, fresh=fresh)


def run_case(case, booted=None):
    """Returns ("PASS" | "FAIL", seconds, message). booted: (exit code, stderr, stopped,
    seconds) of a boot of this case already made (the KVM probe's), whose log is checked."""
    t0 = time.monotonic() - (booted[3] if booted else 0)
    log = os.path.join(OUT, case.name + ".log")
    try:
        if not booted:
            fresh(log)
        if case.screenshot_min_pixels:
            lit = run_screenshot_case(case, log)
            if lit < case.screenshot_min_pixels:
                raise CaseFailed("screen shows %d lit pixels, expected at least %d" %
                                 (lit, case.screenshot_min_pixels))
            return "PASS", time.monotonic() - t0, ""
        if booted:
            rc, stderr, stopped = booted[:3]
        elif case.run:
            rc, stderr, stopped = case.run(case, log, HARNESS)
        else:
            rc, stderr, stopped = run_qemu(qemu_command(case, log), log, case.timeout_s,
                                           case.end_grace_s)
        data = read_log(log)
        if stopped:
            raise CaseFailed("%s (%s)" % (stopped, last_words(data)))
        if rc != case.exit_code:
            raise CaseFailed("QEMU exit %d, expected %d; stderr: %s" %
                             (rc, case.exit_code, stderr[-500:]))
        runs = records.parse_stream(data)

        def rerun(together=1, variants=()):
            """The same boot `together` times more, and each Case of `variants` once (its own
            arguments), all at once; returns their serial bytes, a list in that order
            (determinism checks). A run that QEMU did not end is a failure."""
            boots = [(case, log + ".rerun%d" % i) for i in range(together)]
            boots += [(v, os.path.join(OUT, v.name + ".log")) for v in variants]
            for _, l in boots:
                fresh(l)
            with concurrent.futures.ThreadPoolExecutor(max_workers=len(boots)) as pool:
                outs = list(pool.map(lambda b: run_qemu(qemu_command(b[0], b[1]), b[1],
                                                        b[0].timeout_s, b[0].end_grace_s), boots))
            logs = [l for _, l in boots]
            for l, (rc2, _, stopped2) in zip(logs, outs):
                if stopped2 or rc2 != case.exit_code:
                    raise CaseFailed("rerun %s: %s" % (os.path.basename(l),
                                                      stopped2 or "QEMU exit %s" % rc2))
            return [read_log(l) for l in logs]

        def boot_other(other):
            """Another configuration booted as a reference (its own log); returns its runs."""
            log2 = os.path.join(OUT, other.name + ".log")
            fresh(log2)
            run_qemu(qemu_command(other, log2), log2, other.timeout_s, other.end_grace_s)
            return records.parse_stream(read_log(log2))

        ctx = cases.Context(case=case, data=data, runs=runs, log=log, rc=rc, rerun=rerun,
                            boot_other=boot_other)
        if case.expect_stream:
            if len(runs) != 1:
                raise CaseFailed("expected one run in the log, found %d" % len(runs))
            if not runs[0].whole:
                raise CaseFailed("stream not whole: %s" % "; ".join(
                    "line %d %s: %s" % (pr.line, pr.kind, pr.message) for pr in runs[0].problems))
        for check in case.checks:
            t_check = time.monotonic()
            msg = check(ctx)
            spent = time.monotonic() - t_check
            if spent > SLOW_CHECK_S:   # where a case's time goes, for docs/testing.md
                print("    %s: check %s took %.0f s" % (case.name, getattr(
                    check, "__name__", "?"), spent))
            if msg:
                raise CaseFailed(msg)
        return "PASS", time.monotonic() - t0, ""
    except CaseFailed as e:
        return "FAIL", time.monotonic() - t0, "%s (log: %s)" % (e, os.path.relpath(log, ROOT))
    except Exception:  # a bug in a check must show, not pass
        return "FAIL", time.monotonic() - t0, traceback.format_exc()
    finally:
        if case.boot == "usb":
            fresh(stick_image(case))


# ---- is KVM usable here? ------------------------------------------------------------------

def kvm_usable(probe):
    """(usable, reason, boot). Not usable: the device is absent or does not open read-write,
    or QEMU refuses to start a KVM guest (it exits 1 or aborts, with its own message, before
    the guest says a word). Usable: the probe case (a short exp=none boot under KVM) exits
    33 within its bound. A probe boot that starts and then fails is the kernel's failure,
    not KVM's absence: the tier runs, and its cases show the failure (never a skip that
    hides it). boot: (exit code, stderr, stopped, seconds) of the probe, or None; the
    probe case's checks then run on that boot's log instead of booting it again."""
    try:
        fd = os.open(KVM_DEVICE, os.O_RDWR)
    except FileNotFoundError:
        return False, "%s absent" % KVM_DEVICE, None
    except PermissionError:
        return False, "%s not writable" % KVM_DEVICE, None
    except OSError as e:
        return False, "%s does not open read-write: %s" % (KVM_DEVICE, e.strerror or e), None
    os.close(fd)
    log = os.path.join(OUT, probe.name + ".log")
    fresh(log)
    t0 = time.monotonic()
    try:
        rc, stderr, stopped = run_qemu(qemu_command(probe, log), log, probe.timeout_s,
                                       probe.end_grace_s)
    except OSError as e:
        return False, "QEMU did not start: %s" % e, None
    secs = time.monotonic() - t0
    data = read_log(log)
    lines = [l for l in stderr.strip().splitlines() if "warning:" not in l]
    # QEMU's own errors exit 1; its assertions (plain -cpu host here) abort it (a signal).
    if not data and rc is not None and (rc == 1 or rc < 0):
        return False, "KVM refused: %s" % (lines[-1] if lines else "QEMU exit %d, no message"
                                           % rc), None
    if rc == cases.EXIT_OK:
        why = "%s's boot (exp=none) exit 33 in %.0f s" % (probe.name, secs)
    else:
        why = ("the accelerator starts, but %s's boot failed (%s; log %s): the KVM cases "
               "run and will show it" % (probe.name, stopped or "QEMU exit %s" % rc,
                                         os.path.relpath(log, ROOT)))
    return True, why, (rc, stderr, stopped, secs)


def ovmf_under_kvm():
    """(usable, reason): does OVMF itself start under KVM here? Some hypervisors cannot run
    the firmware's first instructions (kvm-pvm, which these hosts nest KVM in, stops at an
    FPU instruction in OVMF's SEC phase: "KVM internal error. Suberror: 1", emulation
    failure, and QEMU then waits for ever). That is the firmware and the host, before any
    ticklab code, so the UEFI cases of the KVM tier say SKIP with QEMU's words. Judged by a
    boot with nothing to boot: the firmware's own serial output (BdsDxe...) means it runs."""
    log = os.path.join(OUT, "kvm-ovmf-probe.log")
    fresh(log)
    cmd = ["qemu-system-x86_64", "-accel", "kvm", "-cpu", KVM_CPU, "-machine", "q35",
           "-m", "256M", "-display", "none", "-no-reboot", "-nic", "none", "-bios", OVMF,
           "-serial", "file:" + log]
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=err)
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and p.poll() is None:
                err.seek(0)
                text = err.read().decode("utf-8", "replace")
                if "KVM internal error" in text:
                    rip = re.search(r"RIP=([0-9a-f]+)", text)
                    return False, ("OVMF does not start under this KVM: %s, %s%s" % (
                        text.split("\n")[0].strip(), "emulation failure" if
                        "emulation failure" in text else "QEMU stopped the guest",
                        " at RIP 0x%x (the firmware)" % int(rip.group(1), 16) if rip else ""))
                if os.path.exists(log) and os.path.getsize(log) > 0:
                    return True, "OVMF writes to its serial port under KVM"
                time.sleep(POLL_S)
        finally:
            if p.poll() is None:
                p.kill()
            p.wait(timeout=30)
    # Neither sign in time: let the cases run (a failure must show, not be skipped).
    return True, "OVMF gave no sign within 120 s under KVM; the UEFI cases run"


# ---- running the tiers ----------------------------------------------------------------------

DURATIONS = os.path.join(OUT, "durations.json")


def longest_first(selected):
    """The cases in the order that ends the run soonest: longest first, by each case's time
    in the last run (build/test/durations.json), a case never timed by its timeout."""
    try:
        with open(DURATIONS) as f:
            last = json.load(f)
    except (OSError, ValueError):
        last = {}
    return sorted(selected, key=lambda c: -float(last.get(c.name, c.timeout_s)))


def save_durations(times):
    try:
        with open(DURATIONS) as f:
            last = json.load(f)
    except (OSError, ValueError):
        last = {}
    last.update({k: round(v, 1) for k, v in times.items()})
    tmp = "%s.%d" % (DURATIONS, os.getpid())
    with open(tmp, "w") as f:
        json.dump(last, f, indent=0, sort_keys=True)
    os.replace(tmp, DURATIONS)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-k", action="append", default=[],
                    help="only cases whose name contains this (repeat: any of them)")
    ap.add_argument("-j", type=int, default=max(1, min(4, os.cpu_count() or 1)),
                    help="TCG boots at once")
    ap.add_argument("--kvm-jobs", type=int, default=2,
                    help="KVM boots at once, beside the TCG ones")
    ap.add_argument("--no-kvm", action="store_true", help="skip the KVM tier")
    ap.add_argument("--long", action="store_true",
                    help="run the long tier instead (cases.LONG: the full profile's "
                         "repeatability, the paced UART, the quick profile's QR photos; "
                         "about an hour)")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    selected = [c for c in (cases.LONG if a.long else cases.ALL) if not a.k or any(k in c.name for k in a.k)]
    if a.list:
        for c in selected:
            print(c.name + (" [kvm]" if c.accel == "kvm" else ""), "-", c.doc)
        return 0
    os.makedirs(OUT, exist_ok=True)
    tcg = [c for c in longest_first(selected) if c.accel != "kvm"]
    kvm = [c for c in longest_first(selected) if c.accel == "kvm"]
    done = queue.Queue()
    t_start = time.monotonic()

    def submit(pool, case, booted=None):
        pool.submit(run_case, case, booted).add_done_callback(
            lambda f, c=case: done.put((c, f.result() if not f.exception() else
                                        ("FAIL", 0.0, repr(f.exception())))))

    tcg_pool = concurrent.futures.ThreadPoolExecutor(max_workers=a.j)
    kvm_pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.kvm_jobs))
    kvm_time = {}

    def kvm_tier():
        t0 = time.monotonic()
        probe = next(c for c in cases.ALL if c.name == cases_kvm.PROBE)
        usable, why, boot = (False, "--no-kvm given", None) if a.no_kvm else kvm_usable(probe)
        print("kvm: %s: %s" % ("usable" if usable else "NOT usable", why), flush=True)
        kvm_time["probe"] = time.monotonic() - t0
        kvm_time["start"] = t0
        uefi = [c for c in kvm if c.firmware == "uefi"]
        for c in kvm:
            if not usable:
                done.put((c, ("SKIP", 0.0, why)))
            elif c.name == probe.name and boot:
                submit(kvm_pool, c, boot)
            elif c.firmware != "uefi":
                submit(kvm_pool, c)
        if usable and uefi:
            fw_ok, fw_why = ovmf_under_kvm()
            print("kvm: OVMF %s: %s" % ("runs" if fw_ok else "does NOT run", fw_why),
                  flush=True)
            for c in uefi:
                if fw_ok:
                    submit(kvm_pool, c)
                else:
                    done.put((c, ("SKIP", 0.0, fw_why)))

    for c in tcg:
        why = c.requires() if c.requires else None
        if why:
            done.put((c, ("SKIP", 0.0, why)))
        else:
            submit(tcg_pool, c)
    prober = threading.Thread(target=kvm_tier) if kvm else None
    if prober:
        prober.start()
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    kvm_last, times = None, {}
    for _ in selected:
        c, (status, secs, msg) = done.get()
        counts[status] += 1
        if status != "SKIP":
            times[c.name] = secs
        if c.accel == "kvm":
            kvm_last = time.monotonic()
        if status == "SKIP":
            print("SKIP %-28s %s" % (c.name, msg), flush=True)
        else:
            print("%s %-28s %5.1fs%s" % (status, c.name, secs, "  " + msg if msg else ""),
                  flush=True)
    if prober:
        prober.join()
    tcg_pool.shutdown()
    kvm_pool.shutdown()
    save_durations(times)
    if kvm:
        print("kvm tier: %d cases, %.0f s from its probe to its last case (probe %.0f s)" % (
            len(kvm), (kvm_last or time.monotonic()) - kvm_time["start"], kvm_time["probe"]))
    print("boot tests took %.0f s" % (time.monotonic() - t_start))
    print("qemu: %d passed, %d failed, %d skipped" % (counts["PASS"], counts["FAIL"],
                                                      counts["SKIP"]))
    return 0 if counts["FAIL"] == 0 and counts["PASS"] > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
