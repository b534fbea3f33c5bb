"""`ticklab capture`: record a run's serial stream, from QEMU or from a serial device.

The raw bytes go to the log file as they arrive, before any parsing, so that nothing the
parser misunderstands is lost: `ticklab check` and `ticklab report` read the same file
later. While the bytes arrive they are also fed to the incremental parser, which drives
the terminal view (view.py: the kernel's text, a status line) and the stop: the capture
ends at the `end` record of the last expected run, when the source closes (QEMU exited),
at the timeout, or on Ctrl-C. The exit code judges what was captured, as `check` does.

Beside the log, LOG.capture.json records how the run was made (provenance.py): the exact
QEMU command or the serial port, the accelerator and icount, the host, QEMU's exit status
and the wall time. It is written before QEMU starts and completed when the capture ends.
QEMU's command line is built in qemu.py from the same settings `make run` exports.
"""

import argparse
import datetime
import os
import selectors
import shlex
import signal
import subprocess
import sys
import tempfile
import time

from . import EXIT_USAGE, TOOL_VERSION, check, provenance, qemu, records, tool_git
from .view import View

NAME = "capture"
HELP = "capture a run's serial stream from QEMU or a serial device, raw bytes to a log file"

EPILOG = """\
sources:
  (default)          boot the kernel in QEMU as `make run` does; the QEMU settings default
                     to the environment variables MACHINE, FIRMWARE, BOOT, ICOUNT, ACCEL,
                     CPU, ARGS, SMP, MEM, QEMU_EXTRA as make exports them
  --serial DEVICE    read a serial port (/dev/ttyUSB0, /dev/ttyS0) or a pyserial URL
                     (socket://host:port, rfc2217://...) at --baud (115200), 8N1
the terminal:
  the kernel's text as it comes, record lines hidden (the log keeps every byte), and a
  status line: experiment k of N, elapsed, time left; --raw (RAW=1): the stream as it is
beside LOG:
  LOG.capture.json: how the run was made (command, accelerator, host, exit, wall time)
stops at:
  the end record of the --runs'th run (default 1), the source closing (QEMU exited),
  --timeout seconds (default $TIMEOUT, else 900; 0: none), or Ctrl-C
exit status (as `ticklab check` on the captured log):
  0  every run captured is whole and ended ok     2  whole, but a run ended "failed"
  1  damaged, cut, timed out or no run at all      3  usage error, device or file error
  4  whole and ok, but the kernel refused or ignored a command-line word (its error
     records), or an experiment exp= named sent nothing: each is named at the end"""

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
READ_SIZE = 65536
POLL_S = 0.2
DRAIN_S = 10.0  # QEMU exits by itself right after the end record; wait this long for it
EXIT_UNMET = 4  # whole and ok, but something asked for on the command line did not happen


def register(subparsers):
    p = subparsers.add_parser(NAME, help=HELP, description=HELP[0].upper() + HELP[1:] + ".",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", metavar="LOG",
                   help="raw capture file (default: ticklab-capture-<date>-<time>.log here)")
    p.add_argument("--force", action="store_true",
                   help="overwrite LOG (and LOG.capture.json) if it exists")
    p.add_argument("--serial", metavar="DEVICE", help="capture from this serial device")
    p.add_argument("--baud", type=int, default=115200, help="serial speed (default 115200)")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="stop after S seconds of real time (default $TIMEOUT, else 900; "
                   "0: never)")
    p.add_argument("--runs", type=int, default=1, metavar="N",
                   help="stop after the end record of the N'th run (default 1)")
    p.add_argument("--raw", action="store_true", default=None,
                   help="show the stream as it is, record lines included (default $RAW)")
    p.add_argument("--quiet", action="store_true", help="no text, no status: the summary only")
    p.add_argument("--no-verdict", action="store_true",
                   help="do not end with the verdict (make run: the report after it does)")
    q = p.add_argument_group("QEMU settings (as `make run`)")
    for opt, env, default, text in qemu.SETTINGS:
        q.add_argument("--" + opt.replace("_", "-"), dest=opt, default=None, metavar=env,
                       help="%s (default: $%s%s)" % (text, env,
                                                    ", else %s" % default if default else ""))
    q.add_argument("--no-build", action="store_true",
                   help="do not run `make kernel` (and `make efi`) before booting")
    p.set_defaults(func=run)


class CaptureError(Exception):
    """The source could not be opened or read: a usage-class failure (exit 3)."""


class QemuSource:
    """QEMU as a child process. The guest's serial port goes to serial_file, a file of ours
    (`-serial file:`; qemu.qemu_argv says why not a pipe), read as it grows; QEMU's stderr
    carries its own messages (passed to `note` line by line so they do not tear the status
    line)."""

    def __init__(self, argv, note, serial_file):
        self.note = note
        self.serial_file = serial_file
        open(serial_file, "wb").close()         # ours to read from the start, even if empty
        self._serial_fd = os.open(serial_file, os.O_RDONLY)
        try:
            self.proc = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                         start_new_session=True)
        except OSError as e:
            self._close_serial()
            raise CaptureError("cannot start %s: %s" % (argv[0], e.strerror or e)) from e
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stderr, selectors.EVENT_READ, "qemu")
        self._err = b""
        self._stderr_open = True
        self.serial_open = True
        self.describe = "QEMU"
        self.drain_s = DRAIN_S
        self.exit_code = None
        self.stopped_by_us = None

    def read(self):
        """Bytes from the serial port; b"" when none came in a while; None at the end: QEMU
        has exited and the file is read to its end. QEMU's stderr may close before or after
        that: it does not count."""
        if not self.serial_open:
            return None
        exited = self.proc.poll() is not None      # before the last read of the file
        if self._stderr_open:
            for key, _ in self.sel.select(POLL_S):
                chunk = os.read(key.fileobj.fileno(), READ_SIZE)
                if chunk:
                    self._relay(chunk)
                else:
                    self.sel.unregister(key.fileobj)
                    self._stderr_open = False
        else:
            time.sleep(POLL_S)
        out = b""
        while True:
            chunk = os.read(self._serial_fd, READ_SIZE)
            if not chunk:
                break
            out += chunk
        if exited:
            self.serial_open = False
        return out if self.serial_open or out else None

    def _close_serial(self):
        if self._serial_fd is not None:
            os.close(self._serial_fd)
            self._serial_fd = None
        if self.serial_file:
            for remove, path in ((os.unlink, self.serial_file),
                                 (os.rmdir, os.path.dirname(self.serial_file))):
                try:
                    remove(path)
                except OSError:
                    pass
            self.serial_file = None

    def _relay(self, chunk):
        lines = (self._err + chunk).split(b"\n")
        self._err = lines.pop()
        for line in lines:
            if line.strip():
                self.note("qemu: " + line.decode("utf-8", "replace").rstrip())

    def close(self, why):
        """Stop QEMU if it still runs; return its verdict line."""
        if self.proc.poll() is None:
            try:
                self.proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                self.stopped_by_us = why
                try:
                    os.killpg(self.proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            rc = self.proc.wait()
        rest = self.proc.stderr.read() if not self.proc.stderr.closed else b""
        self._relay(rest + b"\n")
        self.proc.stderr.close()
        self._close_serial()
        self.exit_code = rc
        return qemu.qemu_verdict(rc, self.stopped_by_us)[1]


class SerialSource:
    """A serial port through pyserial (python3-serial), 8N1, no flow control."""

    exit_code = None
    drain_s = 0.0

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

    def close(self, why):
        self.port.close()
        failure = getattr(self, "failure", None)
        return "serial port error: %s" % failure if failure else "serial port closed"


def default_output():
    return "ticklab-capture-%s.log" % datetime.datetime.now().strftime("%Y%m%d-%H%M%S")


def pump(source, out_fd, parser, view, want_runs, timeout):
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
        if chunk:
            write_all(out_fd, chunk)  # raw bytes reach the disk before anything looks at them
            view.raw_bytes(chunk)
            ends += sum(rec.type == "end" for rec in parser.feed(chunk))
        view.tick()
        if ends >= want_runs:
            drain(source, out_fd, parser, view)
            return "end record of run %d" % ends


def drain(source, out_fd, parser, view):
    """After the last end record, keep what a source that ends by itself still sends (QEMU:
    the kernel's closing text, then the exit) for a few seconds."""
    deadline = time.monotonic() + source.drain_s
    while time.monotonic() < deadline:
        chunk = source.read()
        if chunk is None:
            return
        if chunk:
            write_all(out_fd, chunk)
            view.raw_bytes(chunk)
            parser.feed(chunk)


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def build(targets, view):
    """`make -s kernel` (and `efi`) in the repository, so QEMU boots the current source."""
    p = subprocess.run(["make", "-s"] + targets, cwd=ROOT, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    if p.returncode != 0:
        view.note(p.stdout.decode("utf-8", "replace").rstrip())
        raise CaptureError("`make %s` failed (exit %d)" % (" ".join(targets), p.returncode))


def base_record(args, path):
    return {"format": provenance.FORMAT, "tool_version": TOOL_VERSION, "tool_git": tool_git(),
            "started_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds").replace("+00:00", "Z"),
            "log": os.path.basename(path), "host_kernel": qemu.host_kernel(),
            "host_cpu": qemu.host_cpu(), "timeout_s": args.timeout or None,
            "runs_wanted": args.runs, "finished": False}


def qemu_record(settings, accel, why, kvm, argv):
    firmware, boot = settings.effective()
    return {"source": "qemu", "qemu_argv": argv, "cwd": ROOT, "serial_device": None,
            "baud": None, "accel": accel, "accel_requested": settings.accel,
            "accel_reason": why, "icount_shift": settings.icount,
            "machine": settings.machine, "cpu_model": qemu.cpu_model(settings, accel),
            "firmware": firmware, "boot": boot, "kernel_args": settings.args,
            "smp": int(settings.smp), "mem": settings.mem, "qemu_extra": settings.qemu_extra,
            "qemu_version": qemu.qemu_version(settings.qemu), "kvm_usable": kvm[0],
            "kvm_reason": kvm[1]}


def serial_record(args):
    return {"source": "serial", "qemu_argv": None, "cwd": None, "serial_device": args.serial,
            "baud": args.baud, "accel": None, "accel_requested": None, "accel_reason": None,
            "icount_shift": None, "machine": None, "cpu_model": None, "firmware": None,
            "boot": None, "kernel_args": None, "smp": None, "mem": None, "qemu_extra": None,
            "qemu_version": None, "kvm_usable": None, "kvm_reason": None}


def open_qemu(args, view):
    """Build, choose the accelerator, lay out the image; returns (source, record part)."""
    settings = qemu.Settings.from_options(vars(args), os.environ)
    if settings.icount is not None and settings.accel == "auto":
        kvm = (False, "not probed: icount needs TCG")
        accel, why = "tcg", "auto: icount needs TCG"
    else:
        kvm = qemu.kvm_usable(settings.qemu)
        accel, why = qemu.choose_accel(settings.accel, kvm)
    if settings.accel == "auto":
        print("capture: accelerator %s (%s)" % (accel, why), file=sys.stderr)
    if not args.no_build:
        build(qemu.build_targets(settings), view)
    view.plan.icount = settings.icount is not None  # wall time is not machine time there
    problem = qemu.prepare_image(settings, ROOT)
    if problem:
        raise CaptureError(problem)
    serial_file = os.path.join(tempfile.mkdtemp(prefix="ticklab-capture-"), "serial.raw")
    argv = qemu.qemu_argv(settings, accel, serial_file)
    part = qemu_record(settings, accel, why, kvm, argv)
    view.note("+ " + shlex.join(argv))
    return QemuSource(argv, view.note, serial_file), part


def usage(text):
    print("ticklab capture: %s" % text, file=sys.stderr)
    return EXIT_USAGE


def run(args):
    if args.timeout is None:
        env = os.environ.get("TIMEOUT", "")
        try:
            args.timeout = float(env) if env else 900.0
        except ValueError:
            return usage("TIMEOUT=%r is not a number of seconds" % env)
    if args.raw is None:
        args.raw = os.environ.get("RAW", "") not in ("", "0")
    if args.runs < 1 or args.timeout < 0 or args.baud <= 0:
        return usage("--runs must be >= 1, --timeout >= 0, --baud > 0")
    if not args.serial:
        try:  # settings errors before anything is created
            qemu.Settings.from_options(vars(args), os.environ)
        except qemu.SettingsError as e:
            return usage(str(e))
    path = args.output or default_output()
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | (0 if args.force else os.O_EXCL)
    try:
        out_fd = os.open(path, flags, 0o644)
    except OSError as e:
        hint = " (--force overwrites)" if isinstance(e, FileExistsError) else ""
        return usage("cannot create %s: %s%s" % (path, e.strerror, hint))
    view = View(sys.stdout, sys.stderr, raw=args.raw, quiet=args.quiet)
    parser = records.StreamParser(on_line=view.line)
    record = base_record(args, path)
    start = time.monotonic()
    try:
        try:
            if args.serial:
                source, part = SerialSource(args.serial, args.baud), serial_record(args)
            else:
                source, part = open_qemu(args, view)
        except (CaptureError, qemu.SettingsError) as e:
            os.close(out_fd)
            out_fd = None
            os.unlink(path)  # empty: nothing was captured
            return usage(str(e))
        record.update(part)
        provenance.write(path, record)
        view.note("capture: %s -> %s" % (source.describe, path))
        try:
            why = pump(source, out_fd, parser, view, args.runs, args.timeout)
        except KeyboardInterrupt:
            why = "interrupted (Ctrl-C)"
        finally:
            how = source.close(why)
    finally:
        if out_fd is not None:
            os.close(out_fd)
    runs = parser.close()
    view.done()
    result = records.verdict(runs)
    code = check.EXIT_CODES[result]
    size = os.path.getsize(path)
    record.update({"finished": True, "stopped": why, "exit_code": source.exit_code,
                   "qemu_verdict": how if isinstance(source, QemuSource) else None,
                   "capture_exit": code, "wall_s": round(time.monotonic() - start, 3),
                   "log_bytes": size})
    provenance.write(path, record)
    if isinstance(source, QemuSource):
        print(how, file=sys.stderr)
    print("capture: stopped: %s; %s; %d bytes in %s (how it was made: %s)" % (
        why, "QEMU exit %s" % source.exit_code if isinstance(source, QemuSource) else how,
        size, path, provenance.record_path(path)), file=sys.stderr)
    check.print_text(path, runs, result)
    if not args.no_verdict:
        print_verdict(runs, path, record)
    unmet = check.unmet(runs)
    for line in unmet:  # last, where they are seen: a word that did nothing must not pass
        print("capture: %s" % line)
    if unmet and code == 0:
        print("capture: exit %d: the run is whole and ok, but it did not do everything asked "
              "for (above)" % EXIT_UNMET)
        return EXIT_UNMET
    return code


def print_verdict(runs, path, record):
    """The verdict of each run that sent one, one line per question: what the run was for,
    where a person looks last."""
    from . import dataset, summary
    name = os.path.basename(path)
    for i, run in enumerate(runs, 1):
        if run.boot is None:
            continue
        data = dataset.group(run, i, name)
        if not data.by_type.get("verdict"):
            continue
        s = summary.build(data, runs, record, None, name)
        if len(runs) > 1:
            print("run %d:" % i)
        for line in summary.verdict_terminal(s):
            print(line)
