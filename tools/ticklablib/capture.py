"""`ticklab capture`: record a run's serial stream, from QEMU or from a serial device.

The raw bytes go to the log file as they arrive, before any parsing, so that nothing the
parser misunderstands is lost: `ticklab check` and `ticklab report` read the same file
later. While the bytes arrive they are also fed to the incremental parser, which drives
the progress line (current phase, records so far, damaged lines) and the stop: the capture
ends at the `end` record of the last expected run, when the source closes (QEMU exited),
at the timeout, or on Ctrl-C. The exit code judges what was captured, as `check` does.

QEMU runs through scripts/qemu-run.sh, the script behind `make run`, with its settings in
the environment, so a capture boots exactly what `make run` would; the serial console is
that script's standard output.
"""

import argparse
import datetime
import os
import selectors
import signal
import subprocess
import sys
import time

from . import EXIT_USAGE, check, records

NAME = "capture"
HELP = "capture a run's serial stream from QEMU or a serial device, raw bytes to a log file"

EPILOG = """\
sources:
  (default)          boot the kernel in QEMU through scripts/qemu-run.sh, as `make run`;
                     --machine/--firmware/--boot/--icount/--args/--smp/--mem/--qemu-extra
                     default to the environment variables MACHINE, FIRMWARE, ... as make
                     exports them
  --serial DEVICE    read a serial port (/dev/ttyUSB0, /dev/ttyS0) or a pyserial URL
                     (socket://host:port, rfc2217://...) at --baud (115200), 8N1
stops at:
  the end record of the --runs'th run (default 1), the source closing (QEMU exited),
  --timeout seconds (default 900; 0: none), or Ctrl-C
exit status (as `ticklab check` on the captured log):
  0  every run captured is whole and ended ok     2  whole, but a run ended "failed"
  1  damaged, cut, timed out or no run at all      3  usage error, device or file error"""

QEMU_SETTINGS = (  # option, environment variable (as scripts/qemu-run.sh reads it), help
    ("machine", "MACHINE", "q35 or pc"),
    ("firmware", "FIRMWARE", "bios or uefi"),
    ("boot", "BOOT", "kernel (QEMU -kernel), iso (GRUB image), or as scripts/qemu-run.sh"),
    ("icount", "ICOUNT", "N: -icount shift=N,sleep=off (exact, repeatable virtual time)"),
    ("args", "ARGS", "the kernel command line"),
    ("smp", "SMP", "CPUs"),
    ("mem", "MEM", "memory"),
    ("qemu_extra", "QEMU_EXTRA", "more QEMU arguments"),
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
READ_SIZE = 4096
POLL_S = 0.2


def register(subparsers):
    p = subparsers.add_parser(NAME, help=HELP, description=HELP[0].upper() + HELP[1:] + ".",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", metavar="LOG",
                   help="raw capture file (default: ticklab-capture-<date>-<time>.log here)")
    p.add_argument("--force", action="store_true", help="overwrite LOG if it exists")
    p.add_argument("--serial", metavar="DEVICE", help="capture from this serial device")
    p.add_argument("--baud", type=int, default=115200, help="serial speed (default 115200)")
    p.add_argument("--timeout", type=float, default=900.0, metavar="S",
                   help="stop after S seconds of real time (default 900; 0: never)")
    p.add_argument("--runs", type=int, default=1, metavar="N",
                   help="stop after the end record of the N'th run (default 1)")
    p.add_argument("--quiet", action="store_true", help="no progress, only the summary")
    q = p.add_argument_group("QEMU settings (as `make run`)")
    for opt, env, text in QEMU_SETTINGS:
        q.add_argument("--" + opt.replace("_", "-"), dest=opt, default=os.environ.get(env),
                       metavar=env, help="%s (default: $%s)" % (text, env))
    q.add_argument("--no-build", action="store_true",
                   help="do not run `make kernel` before booting")
    p.set_defaults(func=run)


class CaptureError(Exception):
    """The source could not be opened or read: a usage-class failure (exit 3)."""


class QemuSource:
    """scripts/qemu-run.sh as a child process; its stdout is the guest's serial port.

    The script's own messages (the QEMU command line, its verdict) arrive on stderr and are
    passed to `note` line by line so they do not tear the progress line.
    """

    def __init__(self, settings, timeout, note):
        env = dict(os.environ)
        for opt, var, _ in QEMU_SETTINGS:
            value = settings.get(opt)
            if value is None:
                env.pop(var, None)
            else:
                env[var] = str(value)
        env.pop("SERIAL_LOG", None)  # the capture is the log
        # qemu-run.sh's own limit backs up ours; ours (SIGTERM below) normally comes first.
        env["TIMEOUT"] = str(int(timeout) + 30 if timeout else 10 ** 7)
        self.note = note
        self.proc = subprocess.Popen([os.path.join(ROOT, "scripts", "qemu-run.sh")], cwd=ROOT,
                                     env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ, "serial")
        self.sel.register(self.proc.stderr, selectors.EVENT_READ, "script")
        self._err = b""
        self.serial_open = True
        self.describe = "QEMU (scripts/qemu-run.sh)"
        self.drain_s = 10.0  # QEMU exits by itself right after the end record

    def read(self):
        """Bytes from the serial port; b"" when none came in a while; None at the end.
        The script's stderr may close before or after its stdout: only stdout counts."""
        if not self.serial_open:
            return None
        out = b""
        for key, _ in self.sel.select(POLL_S):
            chunk = os.read(key.fileobj.fileno(), READ_SIZE)
            if not chunk:
                self.sel.unregister(key.fileobj)
                if key.data == "serial":
                    self.serial_open = False
            elif key.data == "serial":
                out += chunk
            else:
                self._relay(chunk)
        return out if self.serial_open or out else None

    def _relay(self, chunk):
        lines = (self._err + chunk).split(b"\n")
        self._err = lines.pop()
        for line in lines:
            if line.strip():
                self.note(line.decode("utf-8", "replace"))

    def close(self):
        """Stop QEMU if it still runs; return a line about how it ended."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            rc = self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            rest = stream.read() if not stream.closed else b""
            if stream is self.proc.stderr:
                self._relay(rest + b"\n")
            stream.close()
        return "qemu-run.sh exit %d" % rc


class SerialSource:
    """A serial port through pyserial (python3-serial), 8N1, no flow control."""

    def __init__(self, device, baud):
        try:
            import serial  # python3-serial; imported here so QEMU captures do not need it
        except ImportError as e:
            raise CaptureError("python3-serial is not installed (scripts/setup-deps.sh): %s"
                               % e) from e
        try:
            self.port = serial.serial_for_url(device, baudrate=baud, timeout=POLL_S,
                                              bytesize=8, parity="N", stopbits=1)
        except (serial.SerialException, ValueError, OSError) as e:
            raise CaptureError("cannot open %s: %s" % (device, e)) from e
        self.error = serial.SerialException
        self.describe = "%s at %d baud, 8N1" % (device, baud)

    def read(self):
        try:
            return self.port.read(READ_SIZE)
        except (self.error, OSError) as e:  # unplugged adapter: end, keep what came
            self.failure = str(e)
            return None

    def close(self):
        self.port.close()
        failure = getattr(self, "failure", None)
        return "serial port error: %s" % failure if failure else "serial port closed"


class Progress:
    """What the terminal shows while bytes arrive: one rewritten line on a terminal,
    otherwise a line whenever the phase changes."""

    def __init__(self, stream, quiet):
        self.stream = stream
        self.quiet = quiet
        self.tty = stream.isatty()
        self.start = time.monotonic()
        self.phase = "waiting for a boot record"
        self.nbytes = 0
        self.shown = ""
        self.last_line_phase = None

    def update(self, parser, new_records, nbytes):
        self.nbytes += nbytes
        if not new_records and not self.shown and not self.quiet:
            self._show(self._text(parser))  # the first line, before any record
        for rec in new_records:
            self.phase = phase_of(rec)
            if not self.quiet and not self.tty:
                self._show(self._text(parser))  # every phase, even several in one read
        if not self.quiet and self.tty:
            self._show(self._text(parser))

    def _text(self, parser):
        runs = parser.runs
        run = runs[-1] if runs else None
        damaged = sum(p.kind in records.DAMAGE_KINDS for r in runs for p in r.problems)
        crc = sum(p.kind == records.BAD_CRC for r in runs for p in r.problems)
        return "%6.1f s  %d bytes  run %d  %d records  %d damaged (%d CRC)  %s" % (
            time.monotonic() - self.start, self.nbytes, len(runs),
            len(run.records) if run else 0, damaged, crc, self.phase)

    def _show(self, text):
        if self.tty:
            if text != self.shown:
                self.stream.write("\r\x1b[K" + text)
                self.stream.flush()
                self.shown = text
        elif self.phase != self.last_line_phase:
            self.last_line_phase = self.phase
            self.shown = text
            print(text, file=self.stream, flush=True)

    def note(self, line):
        """A message from the source, printed above the progress line."""
        if self.tty and self.shown:
            self.stream.write("\r\x1b[K")
        print(line, file=self.stream, flush=True)
        if self.tty and self.shown:
            self.stream.write(self.shown)
            self.stream.flush()

    def done(self):
        if self.tty and self.shown:
            self.stream.write("\n")
            self.stream.flush()


def phase_of(rec):
    """A short name for where the run is, from its latest record."""
    if isinstance(rec.get("exp"), str):  # result rows, exp_start, exp_end
        return "experiment %s" % rec["exp"]
    if rec.type == "end":
        return "end (status %s)" % rec.get("status")
    return rec.type


def default_output():
    return "ticklab-capture-%s.log" % datetime.datetime.now().strftime("%Y%m%d-%H%M%S")


def pump(source, out_fd, parser, progress, want_runs, timeout):
    """Move bytes from the source to the file, then to the parser, until a stop.
    Returns why it stopped."""
    deadline = time.monotonic() + timeout if timeout else None
    ends = 0
    while True:
        if deadline is not None and time.monotonic() >= deadline:
            return "timeout after %g s" % timeout
        chunk = source.read()
        if chunk is None:
            return "source closed"
        write_all(out_fd, chunk)  # raw bytes reach the disk before anything looks at them
        new = parser.feed(chunk)
        ends += sum(rec.type == "end" for rec in new)
        progress.update(parser, new, len(chunk))
        if ends >= want_runs:
            drain(source, out_fd, parser, progress)
            return "end record of run %d" % ends


def drain(source, out_fd, parser, progress):
    """After the last end record, keep what a source that ends by itself still sends (QEMU:
    the kernel's closing text, then the exit) for a few seconds."""
    deadline = time.monotonic() + getattr(source, "drain_s", 0)
    while time.monotonic() < deadline:
        chunk = source.read()
        if chunk is None:
            return
        write_all(out_fd, chunk)
        progress.update(parser, parser.feed(chunk), len(chunk))


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def build_kernel(progress):
    """`make -s kernel` in the repository, so QEMU boots the current source."""
    p = subprocess.run(["make", "-s", "kernel"], cwd=ROOT, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    if p.returncode != 0:
        progress.note(p.stdout.decode("utf-8", "replace").rstrip())
        raise CaptureError("`make kernel` failed (exit %d)" % p.returncode)


def open_source(args, progress):
    if args.serial:
        return SerialSource(args.serial, args.baud)
    if not args.no_build:
        build_kernel(progress)
    settings = {opt: getattr(args, opt) for opt, _, _ in QEMU_SETTINGS}
    return QemuSource(settings, args.timeout, progress.note)


def run(args):
    if args.runs < 1 or args.timeout < 0 or args.baud <= 0:
        print("ticklab capture: --runs must be >= 1, --timeout >= 0, --baud > 0",
              file=sys.stderr)
        return EXIT_USAGE
    path = args.output or default_output()
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | (0 if args.force else os.O_EXCL)
    try:
        out_fd = os.open(path, flags, 0o644)
    except OSError as e:
        hint = " (--force overwrites)" if isinstance(e, FileExistsError) else ""
        print("ticklab capture: cannot create %s: %s%s" % (path, e.strerror, hint),
              file=sys.stderr)
        return EXIT_USAGE
    progress = Progress(sys.stderr, args.quiet)
    parser = records.StreamParser()
    try:
        try:
            source = open_source(args, progress)
        except CaptureError as e:
            print("ticklab capture: %s" % e, file=sys.stderr)
            os.unlink(path)  # empty: nothing was captured
            return EXIT_USAGE
        progress.note("capture: %s -> %s" % (source.describe, path))
        try:
            why = pump(source, out_fd, parser, progress, args.runs, args.timeout)
        except KeyboardInterrupt:
            why = "interrupted (Ctrl-C)"
        finally:
            how = source.close()
    finally:
        os.close(out_fd)
    progress.done()
    runs = parser.close()
    result = records.verdict(runs)
    print("capture: stopped: %s; %s; %d bytes in %s" % (why, how, progress.nbytes, path),
          file=sys.stderr)
    check.print_text(path, runs, result)
    return check.EXIT_CODES[result]
