"""The records leave a PC without a serial port as QR codes: boot cases.

The GRUB image under SeaBIOS gives a graphical framebuffer (Multiboot2, 800x600 here); a run
(the inventory, and the whole quick profile) goes in exact mode (-icount
shift=0,sleep=off) with qr=on, and after the end record the screen shows the instructions and then the codes, one after another. The kernel
says on serial, as plain text, when each code is on the screen (`qr: part k of N on
screen`): the harness then stops the virtual machine (virtual time stops with it, so the
code stays whatever the host's load), takes a screendump through the monitor, and lets it
go on. With every part taken it ends QEMU, as a user switches the PC off.

Checks: `tools/ticklab decode` on the screendumps gives records byte for byte the run's
serial record lines (and `check` finds the decoded log whole); then each screendump made
into what a phone photo would be (scaled down, rotated a few degrees, noise, JPEG) is
decoded alone, and the rate is reported; every part must still be read from at least one of
its degraded versions (so that decode succeeds from such photos).
"""
import os
import random
import re
import socket
import subprocess
import sys
import time

from cases import Case, EXIT_OK, has_record

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "ticklab")
PART_LINE = re.compile(rb"qr: part (\d+) of (\d+) on screen")
POLL_S = 0.05

# What a phone makes of a screen (an arm's length, slightly crooked, a noisy sensor, JPEG):
# (scale, rotation in degrees, noise sigma in grey levels, JPEG quality).
DEGRADE = ((0.75, 2.0, 12, 80), (0.6, -3.5, 18, 70), (0.5, 5.0, 10, 85))


class Monitor:
    """The QEMU monitor (HMP) on a unix socket: one command at a time, each answered by the
    next prompt (QEMU writes a screendump's file before that prompt)."""

    def __init__(self, path, deadline):
        while not os.path.exists(path):
            if time.monotonic() > deadline:
                raise TimeoutError("the QEMU monitor socket never appeared")
            time.sleep(POLL_S)
        self.s = socket.socket(socket.AF_UNIX)
        self.s.settimeout(30)
        self.s.connect(path)
        self._prompt()

    def _prompt(self):
        buf = b""
        while b"(qemu)" not in buf:
            chunk = self.s.recv(4096)
            if not chunk:
                raise TimeoutError("the QEMU monitor closed")
            buf += chunk

    def cmd(self, line):
        self.s.sendall(line.encode() + b"\n")
        self._prompt()

    def close(self):
        self.s.close()


def shot_path(out, case, k):
    return os.path.join(out, "%s.qr%03d.ppm" % (case.name, k))


def run_qr_boot(case, log, h):
    """Boots, takes a screendump of each code as the kernel announces it, then ends QEMU.
    Returns (exit code as if the run ended ok, stderr, why it was stopped or None)."""
    mon_path = os.path.join(h.out, case.name + ".mon")
    for f in os.listdir(h.out):
        if f.startswith(case.name + ".qr") or f == case.name + ".mon":
            os.remove(os.path.join(h.out, f))
    cmd = h.qemu_command(case, log) + ["-monitor", "unix:%s,server=on,wait=off" % mon_path]
    err = open(os.path.join(h.out, case.name + ".stderr"), "w+")
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + case.timeout_s
    why, taken, n = None, set(), None
    try:
        mon = Monitor(mon_path, deadline)
        while n is None or len(taken) < n:
            if p.poll() is not None:
                why = "QEMU ended (exit %s) before every code was shown" % p.returncode
                break
            if time.monotonic() > deadline:
                why = "timeout after %d s: codes taken %s of %s" % (case.timeout_s,
                                                                   sorted(taken), n)
                break
            data = open(log, "rb").read() if os.path.exists(log) else b""
            for m in PART_LINE.finditer(data):
                k, n = int(m.group(1)), int(m.group(2))
                if k in taken:
                    continue
                mon.cmd("stop")
                mon.cmd("screendump " + shot_path(h.out, case, k))
                mon.cmd("cont")
                taken.add(k)
            time.sleep(POLL_S)
        mon.close()
    except (OSError, TimeoutError) as e:
        why = "the QEMU monitor: %s" % e
    finally:
        if p.poll() is None:
            p.kill()
        p.wait(timeout=30)
        err.seek(0)
        stderr = err.read()
        err.close()
    return (None if why else EXIT_OK), stderr, why


def decode(args):
    return subprocess.run([sys.executable, TOOL, "decode"] + args, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=600)


def shots(ctx):
    out = os.path.dirname(ctx.log)
    n = int(PART_LINE.findall(ctx.data)[0][1])
    return [shot_path(out, ctx.case, k) for k in range(1, n + 1)]


def serial_records(data):
    """The record lines as the serial port carried them (each a line of its own)."""
    return b"".join(l + b"\n" for l in data.split(b"\n") if l.startswith(b"TLR "))


def decoded_identical(ctx):
    files = shots(ctx)
    qlog = ctx.log + ".qr.log"
    r = decode(files + ["-o", qlog, "--force"])
    if r.returncode != 0:
        return "decode exit %d: %s" % (r.returncode, r.stderr.decode()[-800:])
    got, want = open(qlog, "rb").read(), serial_records(ctx.data)
    if got != want:
        return "decoded %d bytes, the serial log's records are %d bytes: not identical" % (
            len(got), len(want))
    head = re.search(rb"qr: (\d+) parts, version (\d+) level M, (\d+) px", ctx.data)
    print("    %s: %s parts, version %s-M, %s px modules, %d bytes of records" % (
        ctx.case.name, head.group(1).decode(), head.group(2).decode(),
        head.group(3).decode(), len(got)))
    c = subprocess.run([sys.executable, TOOL, "check", qlog], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    if c.returncode != 0:
        return "check on the decoded log: exit %d: %s" % (c.returncode, c.stdout.decode()[-500:])
    return None


def degrade(src, dst, scale, angle, sigma, quality, seed):
    from PIL import Image, ImageChops  # python3-pil: the test set (scripts/setup-deps.sh)
    img = Image.open(src).convert("L")
    w, h = img.size
    img = img.resize((int(w * scale), int(h * scale)), Image.BILINEAR)
    img = img.rotate(angle, resample=Image.BILINEAR, expand=True, fillcolor=40)
    rng = random.Random(seed)          # the same noise every run
    noise = Image.frombytes("L", img.size, bytes(
        min(255, max(0, int(128 + rng.gauss(0, sigma)))) for _ in range(img.size[0] * img.size[1])))
    img = ImageChops.add(img, noise, 1.0, -128)          # Gaussian noise around the image
    img.save(dst, "JPEG", quality=quality)


def degraded_rate(ctx):
    files = shots(ctx)
    read_by_part = {k: 0 for k in range(1, len(files) + 1)}
    made, ok, per = [], 0, []
    for vi, (scale, angle, sigma, quality) in enumerate(DEGRADE):
        good = 0
        for k, f in enumerate(files, 1):
            dst = "%s.deg%d.jpg" % (f[:-4], vi)
            degrade(f, dst, scale, angle, sigma, quality, vi * 1000 + k)
            made.append(dst)
            r = decode([dst, "-o", dst + ".log", "--force"])
            # one part alone decodes fully only when n == 1; a part read is named in stderr
            # only when it is missing, so count the parts that are NOT named missing
            text = r.stderr.decode()
            read = b"no ticklab QR code found" not in r.stderr and "damaged" not in text
            if read:
                good += 1
                read_by_part[k] += 1
            if os.path.exists(dst + ".log"):
                os.remove(dst + ".log")
        per.append("scale %.2f, %+.1f deg, noise %d, JPEG %d: %d of %d" % (
            scale, angle, sigma, quality, good, len(files)))
        ok += good
    print("    %s degraded screendumps decoded: %d of %d (%.0f %%); %s" % (
        ctx.case.name, ok, len(made), 100.0 * ok / len(made), "; ".join(per)))
    never = [k for k, c in read_by_part.items() if not c]
    r = decode(made + ["-o", ctx.log + ".qrdeg.log", "--force"])
    if never or r.returncode != 0:
        return "parts never read from a degraded image: %s; decode of all: exit %d %s" % (
            never, r.returncode, r.stderr.decode()[-400:])
    if open(ctx.log + ".qrdeg.log", "rb").read() != serial_records(ctx.data):
        return "the degraded images decode to other records"
    return None


def qr_screendump_case(name, doc, args, timeout_s):
    return Case(name, doc, boot="iso", icount=0, args=args + " qr=on qr_part_ms=2000",
                timeout_s=timeout_s, run=run_qr_boot,
                checks=[has_record("qr_store", codes=True, complete=True, dropped=0),
                        decoded_identical, degraded_rate])


QR_CASES = [
    # exp=none: 16 KB of records, 5 codes; a minute here under load (make test's budget)
    qr_screendump_case("qr-screendump-exact",
                       "exact mode, GRUB framebuffer, the inventory: the last screen's QR "
                       "codes, taken by screendump, decode to the serial records byte for "
                       "byte; degraded copies too", "exp=none", 300),
    # The decisions without a graphical screen, each said in the qr_store record (fast
    # -kernel boots: QEMU's Multiboot1 leaves the EGA text screen).
    Case("qr-text-screen", "qr=on on a text screen: no codes, the reason said, the run ends",
         args="exp=none qr=on",
         checks=[has_record("qr_store", mode="on", codes=False, complete=True, dropped=0,
                            reason="a text screen (EGA 80x25) cannot draw them")]),
    Case("qr-auto-exits-qemu", "qr=auto under QEMU's exit: no codes, QEMU exits as before",
         args="exp=none",
         checks=[has_record("qr_store", mode="auto", codes=False,
                            reason="the run ends by exiting QEMU or rebooting (qr=on shows "
                                   "them anyway)")]),
    Case("qr-off", "qr=off: no record store at all", args="exp=none qr=off",
         checks=[has_record("qr_store", mode="off", codes=False, capacity_bytes=0,
                            reason="qr=off", complete=False)]),
]

# The whole quick profile (149 KB of records, 19 codes at 800x600): 69 s on a quiet machine
# here, up to 9 minutes under a load of 8 or more.
QR_CASES.append(
    qr_screendump_case("qr-screendump-exact-quick",
                       "the quick profile in exact mode: its 19 QR codes decode to the serial "
                       "records byte for byte; degraded copies too", "", 900))
QR_LONG = []
