"""Boot-test cases for the Secure Boot stick (docs/real-hardware.md, "Secure Boot
left on"): OVMF built with Secure Boot and Microsoft's keys enrolled (OVMF_CODE_4M.ms.fd, a
fresh copy of OVMF_VARS_4M.ms.fd per case, SMM on: the variable store is then only writable
through the firmware, as on a PC), the stick of `make secureboot-usb` on xHCI.

Nobody is at the keyboard: the test answers MokManager the way docs/real-hardware.md tells a
person to, through OVMF's serial console (tests/qemu/fwscreen.py keeps the text screen the
firmware draws there and sends the keys). Every step waits for its screen by its words,
bounded by a timeout, never a fixed sleep. The key is a test key made by scripts/sbkey.sh
under build/test/sb-keys/, never a user's.

  secureboot-enroll-mok-and-run  one machine, as a user meets it: shim refuses ticklab.efi
      ("Verification failed", before any ticklab.efi output), MokManager offers itself, the
      test enrolls \\ticklab.cer from the stick ("Enroll key from disk"), MokManager reboots
      and the same stick runs to the end with secure_boot true, started by shim; the screen
      shows the summary.
  secureboot-signature-checked  with the key enrolled (the variable store of an enrollment
      run, kept across QEMU runs like NVRAM across power cycles): ticklab.efi signed with
      another key is refused, and so is one byte changed in the signed image; the right
      stick on the same store then runs (the enrollment held, so the refusals were the
      signature's).
  secureboot-as-shipped-quick  the stick as `make secureboot-usb` makes it (no command line
      file: the quick profile, every experiment) to the end after enrollment.

The cases need sbsigntool and openssl (the test package set installs them) and Debian's
signed shim and MokManager, which scripts/shimfiles.sh takes from the installed packages or
else downloads as packages from Debian's archive and unpacks under build/shim/ without
installing them. Where those cannot be had (no network to the archive), boottest.py says
SKIP with the reason; files that are there but fail shimfiles.sh's checks fail the cases.
"""
import os
import shutil
import socket
import subprocess
import time

from cases import CLEAN, Case, has_record
from cases_efi import efi_boot
import exp_checks
import fwscreen

OVMF_SB_CODE = "/usr/share/OVMF/OVMF_CODE_4M.ms.fd"
OVMF_SB_VARS = "/usr/share/OVMF/OVMF_VARS_4M.ms.fd"
NEEDS = [(OVMF_SB_CODE, "ovmf"), (OVMF_SB_VARS, "ovmf"), ("sbsign", "sbsigntool"),
         ("sbverify", "sbsigntool"), ("openssl", "openssl")]
SHIMFILES_UNAVAILABLE = 2   # scripts/shimfiles.sh's exit status: cannot be had here

# shim's refusal ("Verification failed: (0x1A) Security Violation"), known by either half:
# OVMF's console loses a byte now and then under load
REFUSED_RAW = (b"Verification failed", b"(0x1A) Security Violation")
# MokManager's first screen, by any of its lines
COUNTDOWN = ("Press any key to perform MOK management", "Shim UEFI key management",
             "Booting in ")
FIRMWARE_S = 240      # power-on to shim's first screen: OVMF under TCG on a loaded host
STEP_S = 60           # one MokManager screen to the next
SUMMARY_MIN_PIXELS = 3000   # the summary screen's text lights far more (the kernel-q35 bar)


_shim_state = {}


def _shim_unavailable(root):
    """None when scripts/shimfiles.sh has shim and MokManager for the sticks (the first call
    may download them; one line says where they are from), else why not (SKIP). Asked
    once per boottest run. Any other failure of shimfiles.sh is not a reason to skip: the
    cases then run and fail at mkefi.sh with its message."""
    if "why" not in _shim_state:
        p = subprocess.run([os.path.join(root, "scripts", "shimfiles.sh")], cwd=root,
                           capture_output=True, text=True)
        said = [l for l in p.stderr.splitlines() if l.startswith("shimfiles: ")]
        if p.returncode == SHIMFILES_UNAVAILABLE:
            _shim_state["why"] = "Debian's signed shim unavailable: %s" % (
                said[-1][len("shimfiles: "):] if said else "scripts/shimfiles.sh exit 2")
        else:
            _shim_state["why"] = None
            if p.returncode == 0:
                print("secureboot: shim and MokManager from %s%s" % (
                    os.path.dirname(p.stdout.split("\n")[0]),
                    " (downloaded now)" if any("fetching" in l for l in said) else ""),
                    flush=True)
    return _shim_state["why"]


def packages_missing():
    """None when the Secure Boot cases can run here, else the reason (for SKIP)."""
    missing = sorted({pkg for path, pkg in NEEDS
                      if not (os.path.exists(path) if path.startswith("/") else shutil.which(path))})
    if missing:
        return ("packages not installed (%s): make deps-test or make deps-secureboot installs "
                "them" % ", ".join(missing))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return _shim_unavailable(root)


# ---- the pieces ------------------------------------------------------------------------------

def _make_stick(h, img, args, key_dir):
    """scripts/mkefi.sh --secureboot, as `make secureboot-usb` runs it, signed with the test
    key in key_dir (made there the first time by scripts/sbkey.sh)."""
    env = dict(os.environ, SB_DIR=key_dir)
    env.pop("SB_KEY", None)
    env.pop("SB_CERT", None)
    cmd = [os.path.join(h.root, "scripts", "mkefi.sh"), "--secureboot", img] + ([args] if args else [])
    p = subprocess.run(cmd, cwd=h.root, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise fwscreen.UiTimeout("mkefi.sh --secureboot failed: %s" % (p.stderr or p.stdout)[-800:])


def _tamper(img):
    """One byte of the signed ticklab.efi changed after signing: the 's' of its greeting
    (UCS-2 "starting the ticklab kernel") becomes 'S', so a run that got past shim would
    even say so."""
    needle = "starting the ticklab kernel".encode("utf-16-le")
    with open(img, "r+b") as f:
        data = f.read()
        at = data.find(needle)
        if at < 0 or data.find(needle, at + 1) >= 0:
            raise fwscreen.UiTimeout("tamper: the greeting is not in the image exactly once")
        f.seek(at)
        f.write(b"S")


class Machine:
    """One QEMU run: q35 with SMM, Secure Boot OVMF, the variable store `vars_fd`, the stick
    `img` on xHCI, COM1 on a socket (fwscreen.SerialConsole writes it to `log`), the monitor
    on another (screendumps). reboot: let a reset restart the machine (MokManager's Reboot)
    instead of ending QEMU."""

    def __init__(self, h, case, img, vars_fd, log, reboot):
        self.h, self.case, self.log = h, case, log
        base = os.path.join(h.out, "%s.%d" % (case.name, os.getpid()))
        self.ser, self.mon = base + ".ser", base + ".mon"
        for p in (self.ser, self.mon):
            if os.path.exists(p):
                os.remove(p)
        cmd = ["qemu-system-x86_64", "-machine", "q35,smm=on", "-m", case.mem,
               "-smp", str(case.smp), "-display", "none",
               "-global", "driver=cfi.pflash01,property=secure,value=on",
               "-drive", "if=pflash,format=raw,unit=0,readonly=on,file=" + OVMF_SB_CODE,
               "-drive", "if=pflash,format=raw,unit=1,file=" + vars_fd,
               "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04", "-nic", "none",
               "-chardev", "socket,id=com1,path=%s,server=on,wait=on" % self.ser,
               "-serial", "chardev:com1",
               "-monitor", "unix:%s,server=on,wait=off" % self.mon] + h.usb_stick_args(img)
        if not reboot:
            cmd.append("-no-reboot")
        self.stderr = open(base + ".stderr", "w+")
        self.p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=self.stderr)
        self.t0 = time.monotonic()
        self.con = fwscreen.SerialConsole(self.ser, log)
        try:
            self.con.connect(60, lambda: self.p.poll() is None)
        except fwscreen.UiTimeout:
            self.stop()
            raise

    def left(self):
        return max(1.0, self.case.timeout_s - (time.monotonic() - self.t0))

    def wait_exit(self, timeout_s):
        try:
            return self.p.wait(timeout=min(timeout_s, self.left()))
        except subprocess.TimeoutExpired:
            return None

    def lit_pixels(self):
        """A screendump through the monitor: the pixels that are not black. QEMU writes the
        file before it shows its next prompt."""
        shot = self.mon + ".ppm"
        if os.path.exists(shot):
            os.remove(shot)
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(20)
        try:
            s.connect(self.mon)

            def prompt(buf=b""):
                while b"(qemu)" not in buf:
                    chunk = s.recv(4096)
                    if not chunk:
                        raise fwscreen.UiTimeout("the QEMU monitor closed")
                    buf += chunk
            prompt()
            s.sendall(b"screendump %s\n" % shot.encode())
            prompt()
        except OSError as e:
            raise fwscreen.UiTimeout("screendump through the monitor: %s" % e)
        finally:
            s.close()
        if not os.path.exists(shot):
            raise fwscreen.UiTimeout("the monitor wrote no screendump")
        return self.h.lit_pixels(open(shot, "rb").read())

    def stop(self):
        """Ends QEMU (if it still runs) and cleans up; returns its stderr. Idempotent."""
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait(timeout=30)
        if self.stderr.closed:
            return self.err
        self.con.close()
        self.stderr.seek(0)
        self.err = self.stderr.read()
        self.stderr.close()
        for p in (self.ser, self.mon, self.mon + ".ppm", self.stderr.name):
            if os.path.exists(p):
                os.remove(p)
        return self.err


def refused_before_running(m, what):
    """shim's refusal, before any line of ticklab.efi: the key is not trusted (yet). A
    ticklab.efi line instead fails at once. Then the error box is acknowledged, as a person
    would, and MokManager offers itself."""
    got = m.con.wait("waiting for shim's refusal (%s)" % what, lambda s, d: (
        "ran" if b"ticklab.efi" in d or b"TLR " in d else
        "refused" if any(r in d for r in REFUSED_RAW) else None), FIRMWARE_S)
    if got == "ran":
        raise fwscreen.UiTimeout("%s: shim started ticklab.efi, which must be refused" % what)
    m.con.choose("OK", STEP_S)
    m.con.wait_any("waiting for MokManager's countdown", COUNTDOWN, STEP_S)


def enroll_from_disk(m):
    """MokManager's countdown is answered at once (it boots on after 10 s), then the
    screens docs/real-hardware.md describes: Enroll key from disk, the stick's volume
    (TICKLAB), ticklab.cer, Continue, Yes, Reboot."""
    m.con.send(b" ")
    for label in ("Enroll key from disk", "TICKLAB", "ticklab.cer", "Continue", "Yes"):
        m.con.choose(label, STEP_S)
    before = bytes(m.con.data)
    if b"ticklab.efi" in before or b"TLR " in before:
        raise fwscreen.UiTimeout("ticklab.efi ran before its key was enrolled")
    m.con.choose("Reboot", STEP_S)


def runs_after_enrollment(m, since, what):
    """After the enrollment (bytes before `since` are the earlier boot's): ticklab.efi
    starts, else a second refusal fails at once (the key did not hold). Then waits for the
    run's end record (the log then holds the whole run)."""
    got = m.con.wait("waiting for ticklab.efi (%s)" % what, lambda s, d: (
        "ran" if b"ticklab.efi" in d[since:] or b"TLR " in d[since:] else
        "refused" if any(r in d[since:] for r in REFUSED_RAW) else None), FIRMWARE_S)
    if got == "refused":
        raise fwscreen.UiTimeout("%s: shim refused ticklab.efi again: the enrolled key did "
                                 "not hold" % what)
    m.con.wait("waiting for the run's end record", lambda s, d: b'"type":"end"' in d[since:],
               m.left())


def _failed(m, e):
    """(stderr, message) for a step that failed: when QEMU had ended by itself, its exit
    status and the end of its stderr go into the message."""
    if m is None:
        return "", str(e)
    if m.con.closed:          # the serial port closes as QEMU ends: let it finish
        m.wait_exit(10)
    ended = m.p.poll() is not None
    err = m.stop()
    if ended:
        return err, "%s (QEMU had ended: exit status %s%s)" % (
            e, m.p.returncode, "; stderr: " + err.strip()[-400:] if err.strip() else "")
    return err, str(e)


# ---- the cases' boot procedures (boottest.py calls case.run(case, log, harness)) ------------

def _key_dir(h, case, which="main"):
    return os.path.join(h.out, "sb-keys", "%s-%s" % (case.name, which))


def _fresh_vars(h, case, tag):
    path = os.path.join(h.out, "%s.%d.%s.vars.fd" % (case.name, os.getpid(), tag))
    shutil.copyfile(OVMF_SB_VARS, path)
    return path


def _summary_on_screen(m, min_pixels):
    """qemu_exit=0: the kernel halts with its summary screen up. Two screendumps 2 s apart
    with the same lit pixels (give or take a cursor), at least min_pixels: the screen is
    drawn and done."""
    deadline = time.monotonic() + 120
    last = None
    while True:
        lit = m.lit_pixels()
        shutil.copyfile(m.mon + ".ppm", os.path.join(m.h.out, m.case.name + ".ppm"))
        if last is not None and lit >= min_pixels and abs(lit - last) <= 64:
            return None
        if time.monotonic() > deadline:
            return "the summary screen: %d lit pixels, expected a settled screen with at " \
                   "least %d" % (lit, min_pixels)
        last = lit
        time.sleep(2)


def run_enroll_and_boot(case, log, h):
    """secureboot-enroll-mok-and-run and the long tier's as-shipped case. Returns
    (exit code or None, QEMU's stderr, why the run was stopped or None), as boottest's
    run_qemu does. With qemu_exit=0 the kernel halts at its summary screen: the screen is
    checked, then QEMU is stopped (exit code None, which the case expects)."""
    img = h.stick_image(case)
    vars_fd = _fresh_vars(h, case, "enroll")
    m = None
    try:
        _make_stick(h, img, case.args, _key_dir(h, case))
        m = Machine(h, case, img, vars_fd, log, reboot=True)
        refused_before_running(m, "before enrollment")
        enroll_from_disk(m)
        runs_after_enrollment(m, len(m.con.data), "after MokManager's reboot")
        if "qemu_exit=0" in case.args:
            why = _summary_on_screen(m, SUMMARY_MIN_PIXELS)
            return None, m.stop(), why
        rc = m.wait_exit(case.end_grace_s)
        why = None if rc is not None else (
            "the end record came, then QEMU did not exit within %d s" % case.end_grace_s)
        return rc, m.stop(), why
    except fwscreen.UiTimeout as e:
        return (None,) + _failed(m, e)
    finally:
        if m:
            m.stop()
        if os.path.exists(vars_fd):
            os.remove(vars_fd)


def run_signature_checked(case, log, h):
    """secureboot-signature-checked: an enrollment run (-no-reboot: MokManager's reset ends
    QEMU, the store keeps the key), then on that store: the stick signed with another key
    and the tampered one, each refused before ticklab.efi says a word; then the right stick,
    which must run (its log is the case's)."""
    img = h.stick_image(case)
    sticks = {"other-key": img + ".other-key.img", "tampered": img + ".tampered.img"}
    vars_fd = _fresh_vars(h, case, "enrolled")
    machines = []

    def machine(stick, suffix):
        machines.append(Machine(h, case, stick, vars_fd, log + suffix, reboot=False))
        return machines[-1]
    try:
        _make_stick(h, img, case.args, _key_dir(h, case))
        _make_stick(h, sticks["other-key"], case.args, _key_dir(h, case, "other"))
        shutil.copyfile(img, sticks["tampered"])
        _tamper(sticks["tampered"])

        m = machine(img, ".enroll")
        refused_before_running(m, "before enrollment")
        enroll_from_disk(m)
        if m.wait_exit(STEP_S) is None:
            return None, m.stop(), "QEMU did not end at MokManager's reboot (-no-reboot)"
        m.stop()
        for name, what in (("other-key", "signed with another key"),
                           ("tampered", "with one byte changed after signing")):
            m = machine(sticks[name], "." + name)
            refused_before_running(m, "ticklab.efi %s, the key enrolled" % what)
            m.stop()

        m = machine(img, "")
        runs_after_enrollment(m, 0, "the right stick on the enrolled store (if it were "
                              "refused, the refusals above would prove nothing)")
        rc = m.wait_exit(case.end_grace_s)
        why = None if rc is not None else (
            "the end record came, then QEMU did not exit within %d s" % case.end_grace_s)
        return rc, m.stop(), why
    except fwscreen.UiTimeout as e:
        return (None,) + _failed(machines[-1] if machines else None, e)
    finally:
        for m in machines:
            m.stop()
        for p in [vars_fd] + list(sticks.values()):
            if os.path.exists(p):
                os.remove(p)


def secure_boot_by_shim(ctx):
    """The boot record of the run after enrollment: the EFI path, Secure Boot on (not setup
    mode), started by shim, which verifies."""
    b = ctx.runs[0].boot
    want = {"secure_boot": True, "setup_mode": False, "shim": "verifying"}
    bad = {k: b.get(k) for k, v in want.items() if b.get(k) != v}
    if bad:
        return "boot record says %r, expected %r" % (bad, want)


def _case(name, doc, run, args, timeout_s, checks, **kw):
    return Case(name, doc, firmware="uefi", boot="usb", stick="secureboot", args=args,
                timeout_s=timeout_s, checks=checks, run=run, requires=packages_missing, **kw)


SECUREBOOT_CASES = [
    _case("secureboot-enroll-mok-and-run", "Secure Boot on, Microsoft's keys: shim refuses "
          "ticklab.efi until the test enrolls ticklab.cer in MokManager; after its reboot the "
          "stick runs to the end, secure_boot true, started by shim; summary on screen",
          run_enroll_and_boot, "exp=none qemu_exit=0 qr=off", 420,
          [efi_boot("none", True, "exp=none qemu_exit=0 qr=off"), secure_boot_by_shim,
           has_record("console", screen="rgb", screen_active=True)] + CLEAN,
          exit_code=None),
    _case("secureboot-signature-checked", "key enrolled: ticklab.efi signed with another key "
          "and a signed image with one byte changed are refused; the right stick on the same "
          "variable store runs, secure_boot true", run_signature_checked, "exp=none", 600,
          [efi_boot("none", True, "exp=none"), secure_boot_by_shim] + CLEAN),
    # About a minute alone under TCG (the quick profile's experiments), more under load. The
    # figures themselves are the kernel's, the same on every path: their plausibility is
    # usb-stick-as-shipped-seabios's to check (under heavy load on two cores both flag
    # sleep-accuracy's select mode at HZ=10000 waking early; not a Secure Boot matter).
    _case("secureboot-as-shipped-quick", "the stick as make secureboot-usb writes it (no "
          "command line: the quick profile, every experiment) after enrollment: to the end, "
          "secure_boot true, every experiment reports", run_enroll_and_boot, "", 600,
          [efi_boot("none", False, ""), secure_boot_by_shim, exp_checks.every_experiment_reports]
          + CLEAN),
]
