#!/usr/bin/python3
"""Boot tests: run the ticklab image under QEMU and check the record stream it sends.

Each case boots one configuration (machine, firmware, loader path, command line), captures
the serial output to build/test/<case>.log, verifies every record's CRC and the end count
with tools/ticklablib (the same reader users run), then checks what the case is about.
Timing is never asserted here on plain emulation; cases that compare timing run under
-icount shift=N,sleep=off, where virtual time is exact.

Usage: boottest.py [-k SUBSTRING] [-j JOBS] [--list]
Prints one PASS/FAIL line per case and, last, `qemu: N passed, N failed`.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from ticklablib import records  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402

OUT = os.path.join(ROOT, "build", "test")
OVMF = "/usr/share/ovmf/OVMF.fd"


class CaseFailed(Exception):
    pass


def build_iso(case):
    iso = os.path.join(OUT, case.name + ".iso")
    subprocess.run([os.path.join(ROOT, "scripts", "mkiso.sh"), iso, "0", case.args],
                   cwd=ROOT, check=True, capture_output=True)
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


def qemu_command(case, log):
    cmd = ["qemu-system-x86_64", "-machine", case.machine, "-m", case.mem, "-smp",
           str(case.smp), "-display", "none", "-no-reboot",
           "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]
    if case.icount is not None:
        # Exact and repeatable only if nothing runs on the host's clock: the RTC follows
        # the VM clock, and no NIC (user networking keeps host-clock timers). With either,
        # QEMU's main loop wakes at host-dependent moments and delivers device interrupts
        # a few instructions apart from run to run.
        cmd += ["-icount", "shift=%d,sleep=off" % case.icount]
        if "-rtc" not in case.qemu_extra:
            cmd += ["-rtc", "clock=vm"]
        if "-nic" not in case.qemu_extra and case.boot not in ("efi", "efi-shell"):
            cmd += ["-nic", "none"]
    if case.firmware == "uefi":
        cmd += ["-bios", OVMF]
    if case.boot == "iso":
        cmd += ["-cdrom", build_iso(case)]
    elif case.boot in ("efi", "efi-shell"):
        # No NIC: with nothing on the disk to boot, OVMF would try PXE before its shell.
        cmd += ["-drive", "format=raw,file=fat:rw:" + build_efi_dir(case), "-nic", "none"]
    else:
        cmd += ["-kernel", os.path.join(ROOT, "build", case.kernel), "-append", case.args]
    if case.serial_on_com2:
        cmd += ["-serial", "null", "-serial", "file:" + log]
    elif case.no_serial:
        cmd += ["-serial", "none"]
    else:
        cmd += ["-serial", "file:" + log]
    return cmd + list(case.qemu_extra)


def lit_pixels(ppm):
    """Pixels that are not black in a binary PPM (P6) screendump."""
    parts = ppm.split(b"\n", 3)
    if len(parts) < 4 or parts[0] != b"P6":
        raise CaseFailed("screendump is not a P6 PPM")
    pixels = parts[3]
    return sum(1 for i in range(0, len(pixels) - 2, 3) if pixels[i] or pixels[i + 1] or pixels[i + 2])


def run_screenshot_case(case, log):
    """Boots with the QEMU monitor on a socket, waits, takes a screendump, checks that the
    screen console drew text (the run halts at its end: qemu_exit=0)."""
    import socket
    sock = os.path.join(OUT, case.name + ".mon")
    shot = os.path.join(OUT, case.name + ".ppm")
    for f in (sock, shot):
        if os.path.exists(f):
            os.remove(f)
    cmd = qemu_command(case, log) + ["-monitor", "unix:%s,server,nowait" % sock]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(case.screenshot_wait_s)
        s = socket.socket(socket.AF_UNIX)
        s.connect(sock)
        s.settimeout(5)
        s.recv(4096)
        s.sendall(b"screendump %s\n" % shot.encode())
        deadline = time.monotonic() + 10
        while not os.path.exists(shot) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)           # the file appears before QEMU has finished writing it
        s.close()
    finally:
        p.kill()
        p.wait(timeout=10)
    if not os.path.exists(shot):
        raise CaseFailed("no screendump was written")
    return lit_pixels(open(shot, "rb").read())


def run_case(case):
    """Returns (ok, seconds, message)."""
    t0 = time.monotonic()
    log = os.path.join(OUT, case.name + ".log")
    try:
        if os.path.exists(log):
            os.remove(log)
        if case.screenshot_min_pixels:
            lit = run_screenshot_case(case, log)
            if lit < case.screenshot_min_pixels:
                raise CaseFailed("screen shows %d lit pixels, expected at least %d" %
                                 (lit, case.screenshot_min_pixels))
            return True, time.monotonic() - t0, ""
        cmd = qemu_command(case, log)
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=case.timeout_s)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            raise CaseFailed("QEMU still running after %ds (no end record?)" % case.timeout_s)
        data = open(log, "rb").read() if os.path.exists(log) else b""
        if rc != case.exit_code:
            raise CaseFailed("QEMU exit %d, expected %d; stderr: %s" %
                             (rc, case.exit_code, p.stderr.decode(errors="replace")[-500:]))
        runs = records.parse_stream(data)

        def rerun():
            """The same boot once more; returns its serial bytes (determinism checks)."""
            log2 = log + ".rerun"
            if os.path.exists(log2):
                os.remove(log2)
            subprocess.run(qemu_command(case, log2), capture_output=True, timeout=case.timeout_s)
            return open(log2, "rb").read() if os.path.exists(log2) else b""

        def boot_other(other):
            """Another configuration booted as a reference (its own log); returns its runs."""
            log2 = os.path.join(OUT, other.name + ".log")
            if os.path.exists(log2):
                os.remove(log2)
            subprocess.run(qemu_command(other, log2), capture_output=True,
                           timeout=other.timeout_s)
            return records.parse_stream(open(log2, "rb").read() if os.path.exists(log2) else b"")

        ctx = cases.Context(case=case, data=data, runs=runs, log=log, rc=rc, rerun=rerun,
                            boot_other=boot_other)
        if case.expect_stream:
            if len(runs) != 1:
                raise CaseFailed("expected one run in the log, found %d" % len(runs))
            if not runs[0].whole:
                raise CaseFailed("stream not whole: %s" % "; ".join(
                    "line %d %s: %s" % (pr.line, pr.kind, pr.message) for pr in runs[0].problems))
        for check in case.checks:
            msg = check(ctx)
            if msg:
                raise CaseFailed(msg)
        return True, time.monotonic() - t0, ""
    except CaseFailed as e:
        return False, time.monotonic() - t0, "%s (log: %s)" % (e, os.path.relpath(log, ROOT))
    except Exception:  # a bug in a check must show, not pass
        return False, time.monotonic() - t0, traceback.format_exc()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    ap.add_argument("-j", type=int, default=max(1, min(4, os.cpu_count() or 1)))
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    selected = [c for c in cases.ALL if a.k in c.name]
    if a.list:
        for c in selected:
            print(c.name, "-", c.doc)
        return 0
    os.makedirs(OUT, exist_ok=True)
    passed = failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as pool:
        futures = {pool.submit(run_case, c): c for c in selected}
        for f in concurrent.futures.as_completed(futures):
            c = futures[f]
            ok, secs, msg = f.result()
            if ok:
                passed += 1
                print("PASS %-28s %5.1fs" % (c.name, secs), flush=True)
            else:
                failed += 1
                print("FAIL %-28s %5.1fs  %s" % (c.name, secs, msg), flush=True)
    print("qemu: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
