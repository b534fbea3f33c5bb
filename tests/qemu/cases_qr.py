"""The records leave a PC without a serial port as QR codes: boot cases.

The GRUB image under SeaBIOS gives a graphical framebuffer (Multiboot2, 800x600 here); a run
(the inventory, and the whole quick profile) goes in exact mode (-icount
shift=0,sleep=off) with qr=on. After the end record the summary screen with the verdict
stays until a key (the i8042: -device i8042 on q35) or 60 s, then the screen shows the
instructions and the codes, one after another. The kernel says on serial, as plain text,
when the summary is held (`qr: summary on screen ...`) and when each code is on the screen
(`qr: part k of N on screen`): the harness then stops the virtual machine (virtual time
stops with it, so the screen stays whatever the host's load), takes a screendump through
the monitor, and lets it go on; after the summary's it presses a key (the monitor's
sendkey). With every part taken it ends QEMU, as a user switches the PC off.

Checks: the summary's screendump, read back glyph by glyph (screentext.py), holds the
verdict and says how the codes come, and it was taken before the first code; each code
page's second row is the verdict in one line; `tools/ticklab decode` on the screendumps
gives records byte for byte the run's serial record lines (and `check` finds the decoded
log whole); then each screendump made into what a phone photo would be (tools/tests/
photos.py: a keystone up to 10 % of the width, blur, uneven light, JPEG) is decoded alone,
the rate per distortion reported and held to 95 %.
"""
import os
import re
import socket
import subprocess
import sys
import time

import screentext
from cases import Case, EXIT_OK, has_record

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "ticklab")
sys.path[:0] = [os.path.join(ROOT, "tools"), os.path.join(ROOT, "tools", "tests")]
PART_LINE = re.compile(rb"qr: part (\d+) of (\d+) on screen")
HOLD_LINE = re.compile(rb"qr: summary on screen until a key or (\d+) s")
HELD_LINE = re.compile(rb"qr: summary held (\d+) ms, until ([^\n]*)")
POLL_S = 0.05
PHOTO_RATE = 0.95     # of the parts read from photos at each distortion


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


def start_monitored(case, log, h, mon_path):
    """QEMU started for the case with its monitor on the unix socket mon_path: (the process,
    its stderr file)."""
    cmd = h.qemu_command(case, log) + ["-monitor", "unix:%s,server=on,wait=off" % mon_path]
    err = open(os.path.join(h.out, case.name + ".stderr"), "w+")
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    return p, err


def end_qemu(p, err):
    """QEMU ended (killed if it still runs) and its stderr file read and closed: the text."""
    if p.poll() is None:
        p.kill()
    p.wait(timeout=30)
    err.seek(0)
    stderr = err.read()
    err.close()
    return stderr


def shot_path(out, case, k):
    return os.path.join(out, "%s.qr%03d.ppm" % (case.name, k))


def summary_path(out, case):
    return os.path.join(out, "%s.summary.ppm" % case.name)


GRABS = {}     # screendumps taken for the codes, by case (printed with the run's time)
SHOWN_PART = re.compile(r"ticklab part (\d+) of \d+")


def grab(mon, out, case, taken):
    """A screendump, kept as the code it shows (its first row says which) when that one is
    not yet taken."""
    tmp = os.path.join(out, case.name + ".grab.ppm")
    GRABS[case.name] = GRABS.get(case.name, 0) + 1
    mon.cmd("stop")
    mon.cmd("screendump " + tmp)
    mon.cmd("cont")
    m = SHOWN_PART.match(screentext.lines(tmp, only=(0,))[0])
    if m and int(m.group(1)) not in taken:
        os.replace(tmp, shot_path(out, case, int(m.group(1))))
        taken.add(int(m.group(1)))


def run_qr_boot(case, log, h):
    """Boots, takes a screendump of each code as the kernel announces it, then ends QEMU.
    Returns (exit code as if the run ended ok, stderr, why it was stopped or None)."""
    mon_path = os.path.join(h.out, case.name + ".mon")
    for f in os.listdir(h.out):
        if f.startswith(case.name + ".qr") or f in (case.name + ".mon",
                                                   case.name + ".summary.ppm"):
            os.remove(os.path.join(h.out, f))
    p, err = start_monitored(case, log, h, mon_path)
    started = time.monotonic()
    deadline = started + case.timeout_s
    why, taken, seen, n, held = None, set(), set(), None, False
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
            if not held and HOLD_LINE.search(data):
                # the summary with the verdict, held for a key: taken, then the key
                mon.cmd("stop")
                mon.cmd("screendump " + summary_path(h.out, case))
                mon.cmd("cont")
                mon.cmd("sendkey spc")
                held = True
            for m in PART_LINE.finditer(data):
                k, n = int(m.group(1)), int(m.group(2))
                if k not in seen:
                    seen.add(k)
                    grab(mon, h.out, case, taken)
            if n is not None and len(seen) == n and len(taken) < n:
                # a code gone before its screendump (a loaded host): the kernel shows them
                # round and round, so look until each missing one comes by again
                grab(mon, h.out, case, taken)
            time.sleep(POLL_S)
        mon.close()
        print("    %s: %d screendumps for %s codes, %.0f s from the boot" % (
            case.name, GRABS.get(case.name, 0), n, time.monotonic() - started))
    except (OSError, TimeoutError) as e:
        why = "the QEMU monitor: %s" % e
    finally:
        stderr = end_qemu(p, err)
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


def photo_rates(ctx):
    """Each screendump as a phone photographs it (photos.py), at each distortion, decoded
    alone in this process (ticklablib.decode.read_parts: zbar, then the photo straightened
    when zbar alone cannot); the rate per distortion is printed and held to PHOTO_RATE, and
    the harshest distortion's photos together decode to the serial records."""
    import tempfile
    from PIL import Image  # python3-pil: the test set (scripts/setup-deps.sh)
    from photos import DISTORTIONS, phone_photo
    from ticklablib import decode as decode_mod
    files = shots(ctx)
    work = tempfile.mkdtemp(prefix="ticklab-qrphoto-")
    per, bad, worst = [], [], []
    for name, ks, blur, light, noise, quality in DISTORTIONS:
        got = 0
        for k, f in enumerate(files, 1):
            dst = "%s.%s.jpg" % (f[:-4], name.replace(" ", "_").replace("%", "pct")
                                 .replace(",", ""))
            with open(dst, "wb") as out:
                out.write(phone_photo(Image.open(f).convert("L"), ks, blur, light, noise,
                                      quality, seed=k))
            got += bool(decode_mod.read_parts(dst, work)[0])
            if name == DISTORTIONS[-1][0]:
                worst.append(dst)
        per.append("%s: %d of %d" % (name, got, len(files)))
        if got < PHOTO_RATE * len(files):
            bad.append(name)
    print("    %s photos decoded: %s" % (ctx.case.name, "; ".join(per)))
    if bad:
        return "fewer than %d %% of the parts read at: %s" % (100 * PHOTO_RATE, ", ".join(bad))
    r = decode(worst + ["-o", ctx.log + ".qrdeg.log", "--force"])
    if r.returncode != 0:
        return "decode of the harshest photos: exit %d %s" % (r.returncode,
                                                            r.stderr.decode()[-400:])
    if open(ctx.log + ".qrdeg.log", "rb").read() != serial_records(ctx.data):
        return "the photos decode to other records"
    return None


def summary_held_before_the_codes(ctx):
    """The summary screen with the verdict was on the screen after the run ended and
    before the first code, said how the codes come, and a key ended its hold."""
    path = summary_path(os.path.dirname(ctx.log), ctx.case)
    if not os.path.exists(path):
        return "no screendump of the summary: the kernel never said it held it"
    hold, first = HOLD_LINE.search(ctx.data), PART_LINE.search(ctx.data)
    end = ctx.data.find(b'"type":"end"')
    if not (0 <= end < hold.start() < first.start()):
        return "the summary was not held between the end record and the first code"
    text = screentext.lines(path)
    screen = "\n".join(text)
    want = ["ticklab summary: run finished ok", "Press any key for the QR codes (they "
            "start by themselves in 60 s)"]
    claims = [t.decode() for t in re.findall(rb'"type":"verdict","topic":"([a-z_]+)"',
                                             ctx.data)]
    want += ["%-12s" % t for t in claims] or ["no experiments ran: no verdict"]
    missing = [w for w in want if w not in screen]
    if missing:
        return "the summary screen lacks %s:\n%s" % (missing, screen)
    # each claim whole, as the verdict record has it, over its wrapped rows: a claim cut
    # short once ended "from HZ=793" where the record said 79366
    for rec in (r for run in ctx.runs for r in run.records if r.get("type") == "verdict"):
        head = "%-12s " % rec["topic"]
        at = next((i for i, t in enumerate(text) if t.startswith(head)), None)
        if at is None:
            continue
        whole = text[at][len(head):]
        for t in text[at + 1:]:
            if not t.startswith(" " * len(head)):
                break
            whole += " " + t.strip()
        if whole != rec["claim"]:
            return "the summary screen's %s claim is not the record's:\n  screen: %s\n  record: " \
                "%s" % (rec["topic"], whole, rec["claim"])
    held = HELD_LINE.search(ctx.data)
    if not held or held.group(2) != b"a key":
        return "the hold did not end by the key: %s" % (held.group(0) if held else None)
    print("    %s: the summary screen (%d lines) with %d verdict claim(s), held %s ms until "
          "a key" % (ctx.case.name, len([t for t in text if t]), len(claims),
                     held.group(1).decode()))
    return None


def verdict_on_every_code_page(ctx):
    """Each code page: "part k of N" on its first row, the verdict in one line on its
    second."""
    for k, path in enumerate(shots(ctx), 1):
        text = screentext.lines(path, only=(0, 1))
        n = len(shots(ctx))
        if not text[0].startswith("ticklab part %d of %d" % (k, n)):
            return "code page %d: first row %r" % (k, text[0])
        if not text[1].startswith("verdict:") or "clock " not in text[1]:
            return "code page %d: second row %r, not the verdict" % (k, text[1])
    print("    %s: every code page says %r" % (ctx.case.name, text[1]))
    return None


def qr_screendump_case(name, doc, args, timeout_s, photos=True):
    # The shortest time a code may stay (200 ms): under icount the kernel spins through each
    # code's time reading the clock, so a longer one costs host time for every code; a code
    # gone before its screendump is taken on a later round (run_qr_boot).
    return Case(name, doc, boot="iso", icount=0, args=args + " qr=on qr_part_ms=200",
                timeout_s=timeout_s, run=run_qr_boot,
                checks=[has_record("qr_store", codes=True, complete=True, dropped=0),
                        summary_held_before_the_codes, verdict_on_every_code_page,
                        decoded_identical] + ([photo_rates] if photos else []))


QR_CASES = [
    # exp=none: 16 KB of records, 5 codes; a minute here under load (make test's budget)
    qr_screendump_case("qr-screendump-exact",
                       "exact mode, GRUB framebuffer, the inventory: the summary held before "
                       "the QR codes, the verdict on each, and the codes, taken by "
                       "screendump, decode to the serial records byte for byte; phone-like "
                       "photos of them too", "exp=none", 300),
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

# The whole quick profile (170 KB of records, 42 codes at 800x600): its boot about 40 s
# here. Its phone photos (about half a second of zbar and OpenCV each) are the long tier's:
# qr-screendump-exact holds every distortion on 10 codes in `make test`.
QR_CASES.append(
    qr_screendump_case("qr-screendump-exact-quick",
                       "the quick profile in exact mode: the summary held before its QR "
                       "codes, the verdict on each, and the codes decode to the serial "
                       "records byte for byte", "", 900, photos=False))
QR_LONG = [
    qr_screendump_case("qr-photos-exact-quick",
                       "the quick profile's 42 codes as a phone takes them: each photo "
                       "decoded alone at every distortion (95 % at each), the harshest "
                       "together to the serial records", "", 1200),
]
