"""`ticklab capture`: a real QEMU boot, and a serial device (a pseudo-terminal pair standing
in for a USB serial adapter, so pyserial's real code path runs)."""
import json
import os
import re
import pty
import subprocess
import time

import pytest

from fullrun import full_run_lines, small_run_lines
from pages import check_png_file, parse_html
from streams import join, record
from ticklablib import records

TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICKLAB = os.path.join(TOOLS, "ticklab")
KERNEL = os.path.join(os.path.dirname(TOOLS), "build", "ticklab.elf")


CAPTURE_KEYS = {"format", "tool_version", "tool_git", "started_utc", "log", "host_kernel",
                "host_cpu", "timeout_s", "runs_wanted", "finished", "source", "qemu_argv",
                "cwd", "serial_device", "baud", "accel", "accel_requested", "accel_reason",
                "icount_shift", "machine", "cpu_model", "firmware", "boot", "kernel_args",
                "smp", "mem", "qemu_extra", "qemu_version", "kvm_usable", "kvm_reason",
                "stopped", "exit_code", "qemu_verdict", "capture_exit", "wall_s", "log_bytes"}


def test_capture_then_report_from_a_real_qemu_boot(tmp_path):
    """One quick boot under icount (about 2 s): the raw log is whole, the terminal shows
    the kernel's text and not its records, the capture record says how QEMU ran, and the
    report of it draws the figures its records support."""
    assert os.path.exists(KERNEL), "build the kernel first: make kernel"
    log = tmp_path / "qemu.log"
    p = subprocess.run([TICKLAB, "capture", "-o", str(log), "--no-build", "--icount", "0",
                        "--args", "exp=period-compare", "--timeout", "240"],
                       capture_output=True, timeout=300)
    err, out = p.stderr.decode(), p.stdout.decode()
    assert p.returncode == 0, err
    assert "QEMU verdict: ticklab finished its run ok (exit 33)" in err
    # the kernel's plan record names one experiment and its budget
    assert "capture: experiment 1 of 1: period-compare | " in err
    assert re.search(r" \| about [0-9.]+ s left \| ", err)
    assert "capture: end (status ok) | " in err
    assert "+ qemu-system-x86_64 -machine q35 -accel tcg " in err
    # the kernel's human text on stdout, its record lines only in the log
    assert "period-compare: a 1 s hrtimer and 1 s jiffies timers" in out
    assert "TLR " not in out and "ticklab: run finished ok" in out
    raw = log.read_bytes()
    runs = records.parse_stream(raw)
    assert len(runs) == 1 and runs[0].whole and runs[0].status == "ok"
    # exact mode: the kernel sees virtual time and polls by itself (idle=auto), saying so
    assert runs[0].boot["cmdline"] == "exp=period-compare"
    env = [r for r in runs[0].records if r.get("type") == "environment"][0]
    assert env["idle"] == "poll" and "virtual time" in env["idle_reason"], env
    assert raw.count(b"\nTLR ") + raw.startswith(b"TLR ") == runs[0].end["records"] + 1
    assert b"ticklab: run finished ok" in raw  # text after the end record is kept too

    made = json.loads((tmp_path / "qemu.log.capture.json").read_text())
    assert set(made) == CAPTURE_KEYS
    assert made["source"] == "qemu" and made["accel"] == "tcg" and made["icount_shift"] == 0
    assert made["exit_code"] == 33 and made["finished"] is True and made["capture_exit"] == 0
    assert made["kernel_args"] == "exp=period-compare"
    assert made["qemu_argv"][made["qemu_argv"].index("-icount") + 1] == "shift=0,sleep=off"
    assert "-nic" in made["qemu_argv"] and "clock=vm" in made["qemu_argv"]
    serial = made["qemu_argv"][made["qemu_argv"].index("-serial") + 1]
    assert serial.startswith("file:") and not os.path.exists(serial[5:])   # read, then removed
    assert made["log_bytes"] == len(raw) and made["wall_s"] > 0
    assert made["qemu_version"].startswith("7.")

    r = subprocess.run([TICKLAB, "report", str(log)], capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    out = tmp_path / "qemu-report"
    page = parse_html((out / "report.html").read_text())
    assert "experiments" in page.ids and "exp-period-compare" in page.ids
    assert "virtual time (icount shift=0): figures are instruction counts" in page.text
    for name in ("calibration", "period_compare"):
        check_png_file(out / "plots" / (name + ".png"))
        assert "fig-" + name in page.ids


def test_qemu_source_loses_nothing_to_a_reader_that_stalls(tmp_path):
    """The serial file is read as it grows and to its end after QEMU exits, however late
    the reader comes: a stand-in for QEMU writes 300 KiB (far over a pipe's 64 KiB) while
    nobody reads, then a tail after a pause; every byte arrives, in order, and the file and
    its directory are gone after close (regression: -serial stdio kept 65542 of 134215
    bytes when the reader slept 30 s)."""
    from ticklablib.capture import QemuSource
    d = tmp_path / "cap"
    d.mkdir()
    serial = str(d / "serial.raw")
    body = b"".join(b"TLR %06d\n" % i for i in range(30000))
    script = ("import sys, time\n"
              "f = open(sys.argv[1], 'ab', buffering=0)\n"
              "f.write(open(sys.argv[2], 'rb').read())\n"
              "time.sleep(0.5)\n"
              "f.write(b'tail\\n')\n")
    src_file = tmp_path / "body"
    src_file.write_bytes(body)
    notes = []
    source = QemuSource(["python3", "-c", script, serial, str(src_file)], notes.append, serial)
    time.sleep(1.0)                               # the reader stalls; the writer goes on
    got = b""
    while True:
        chunk = source.read()
        if chunk is None:
            break
        got += chunk
    source.close("test")
    assert got == body + b"tail\n"
    assert not os.path.exists(serial) and not d.exists()
    assert source.exit_code == 0 and notes == []


def test_icount_with_kvm_is_a_usage_error(tmp_path):
    log = tmp_path / "x.log"
    p = subprocess.run([TICKLAB, "capture", "-o", str(log), "--no-build", "--icount", "0",
                        "--accel", "kvm"], capture_output=True, timeout=60)
    err = p.stderr.decode().strip().splitlines()
    assert p.returncode == 3 and len(err) == 1 and "--icount needs TCG" in err[0], err
    assert not log.exists() and not (tmp_path / "x.log.capture.json").exists()


class FakeSerial:
    """A pseudo-terminal: capture opens the slave as its serial device, the test writes the
    'PC's' bytes into the master."""

    def __init__(self):
        self.master, self.slave = pty.openpty()
        self.device = os.ttyname(self.slave)

    def start(self, log, *extra):
        self.proc = subprocess.Popen([TICKLAB, "capture", "--serial", self.device, "-o",
                                      str(log), *extra], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while not os.path.exists(log) or os.path.getsize(log) == 0 and self._not_open():
            assert time.monotonic() < deadline, "capture did not open the device"
            time.sleep(0.05)
        # bytes sent before pyserial opened the port (and flushed its input) are lost: wait
        # until the capture holds the device open, however loaded the machine
        while not self._held_open():
            assert time.monotonic() < deadline, "capture did not open the device"
            time.sleep(0.05)
        time.sleep(0.3)  # pyserial has put the line in raw mode once the log exists

    def _held_open(self):
        fds = "/proc/%d/fd" % self.proc.pid
        try:
            return any(os.readlink(os.path.join(fds, f)) == self.device
                       for f in os.listdir(fds))
        except OSError:
            return self.proc.poll() is not None

    def _not_open(self):
        return self.proc.poll() is None and not os.path.exists(self.device)

    def send(self, data, chunk=97):
        for i in range(0, len(data), chunk):
            os.write(self.master, data[i:i + chunk])
            time.sleep(0.002)

    def finish(self):
        out, err = self.proc.communicate(timeout=60)
        os.close(self.master)
        os.close(self.slave)
        return self.proc.returncode, out.decode(), err.decode()


def test_serial_capture_keeps_every_byte_and_stops_at_end(tmp_path):
    noise = b"\x1b[2J\x1b[01;01HBdsDxe: starting Boot0001\r\nWelcome to GRUB!\r\n\xff\x00"
    data = noise + join(full_run_lines(), b"\r\n")
    log = tmp_path / "serial.log"
    port = FakeSerial()
    port.start(log, "--timeout", "60")
    port.send(data)
    code, out, err = port.finish()
    # whole and ok, but the run's error record says the kernel refused the word bogus=1:
    # named last, and the exit says the run did not do all it was asked
    assert code == 4, err
    assert out.splitlines()[-2] == ("capture: the kernel refused or ignored the command-line "
                                    "word 'bogus=1': unknown key (default used)")
    assert log.read_bytes() == data  # raw, byte for byte, CRs and noise included
    assert "stopped: end record of run 1" in err
    assert "capture: experiment 1 of ?: wakeup-latency | " not in err  # no exp_start sent
    assert "capture: end (status ok) | " in err and "| 58 records" in err
    assert "  table row 3   123   456" in out and "TLR " not in out  # text shown, records not
    assert "Welcome to GRUB!" in out and "\x1b" not in out  # escape codes taken out
    assert "whole" in out
    made = json.loads((tmp_path / "serial.log.capture.json").read_text())
    assert made["source"] == "serial" and made["serial_device"] == port.device
    assert made["baud"] == 115200 and made["qemu_argv"] is None and made["exit_code"] is None


def test_capture_ends_with_the_verdict_one_line_per_question(tmp_path):
    """make run and capture ended with the report's path; the verdict was somewhere
    above."""
    log = tmp_path / "small.log"
    port = FakeSerial()
    port.start(log, "--timeout", "60")
    port.send(join(small_run_lines()))
    code, out, err = port.finish()
    assert code == 0, err
    lines = out.splitlines()
    verdict = [line for line in lines if line.startswith("verdict: ")]
    assert lines[-len(verdict):] == verdict and len(verdict) == 2, lines[-6:]
    assert verdict[0] == ("verdict: Which timer (clock event device): lapic (callback hlt: "
                          "p50 393 ns, p99 402 ns, max 402 ns; 500 wake-ups; no interval: "
                          "this kernel does not send one, so how sure the choice is is not "
                          "known)")
    assert verdict[1].startswith("verdict: Which clock (clocksource): ")
    port = FakeSerial()
    port.start(tmp_path / "quiet.log", "--timeout", "60", "--no-verdict")
    port.send(join(small_run_lines()))
    code, out, _ = port.finish()
    assert code == 0 and "verdict: " not in out


def test_serial_capture_cut_run_times_out_and_counts_damage(tmp_path):
    lines = full_run_lines()
    bad = bytearray(join(lines[:12]))
    bad[-20] ^= 0x01  # a flipped bit on the last line sent
    log = tmp_path / "cut.log"
    port = FakeSerial()
    port.start(log, "--timeout", "2")
    port.send(bytes(bad))
    code, out, err = port.finish()
    assert code == 1
    assert log.read_bytes() == bytes(bad)
    assert "stopped: timeout after 2 s" in err
    assert "capture: line 12: bad-crc: CRC " in err and "| 1 damaged" in err
    assert "cut.log:12: bad-crc: " in out and "cut.log:12: missing-end: " in out


def test_serial_capture_two_runs(tmp_path):
    data = join(full_run_lines()) + join(full_run_lines())
    log = tmp_path / "two.log"
    port = FakeSerial()
    port.start(log, "--runs", "2", "--timeout", "60")
    port.send(data, chunk=4096)
    code, out, _ = port.finish()
    assert code == 4 and "ok (2 run(s), 0 not whole, 0 failed)" in out  # 4: bogus=1, twice
    assert "capture: run 2: the kernel refused or ignored the command-line word" in out
    assert log.read_bytes() == data


def test_existing_log_is_not_overwritten(tmp_path):
    log = tmp_path / "keep.log"
    log.write_bytes(b"precious")
    p = subprocess.run([TICKLAB, "capture", "--serial", "/dev/null", "-o", str(log)],
                       capture_output=True, timeout=60)
    assert p.returncode == 3 and b"--force overwrites" in p.stderr
    assert log.read_bytes() == b"precious"


@pytest.mark.parametrize("args", [["--serial", "/nonexistent/ttyUSB9"], ["--runs", "0"],
                                  ["--serial", "/dev/null", "--baud", "-5"]])
def test_bad_device_or_arguments_exit_3(tmp_path, args):
    log = tmp_path / "x.log"
    p = subprocess.run([TICKLAB, "capture", "-o", str(log), *args], capture_output=True,
                       timeout=60)
    assert p.returncode == 3 and p.stderr
    assert not log.exists()


def test_raw_shows_the_stream_as_it_is(tmp_path):
    data = join(full_run_lines())
    log = tmp_path / "raw.log"
    port = FakeSerial()
    port.start(log, "--timeout", "60", "--raw")
    port.send(data, chunk=4096)
    code, out, err = port.finish()
    assert code == 4  # the run's bogus=1 (test_a_refused_word_...)
    assert out.startswith(data.decode())  # every byte, records included, then the summary
    assert "capture: end (status ok)" not in err  # no status line in raw mode


def test_status_counts_experiments_from_the_plan(tmp_path):
    from streams import record
    recs = [{"type": "boot", "version": "p"},
            {"type": "plan", "experiments": [{"exp": "a", "budget_ns": 10 ** 9,
                                              "expected_ns": 10 ** 8},
                                             {"exp": "b", "budget_ns": 10 ** 9}]},
            {"type": "exp_start", "exp": "a"}, {"type": "exp_end", "exp": "a",
                                                "duration_ns": 10 ** 8},
            {"type": "exp_start", "exp": "b"}, {"type": "exp_end", "exp": "b",
                                                "duration_ns": 10 ** 8}]
    recs.append({"type": "end", "records": len(recs), "status": "ok"})
    lines = []
    for r in recs:
        lines += [record(r), b"  progress of %s" % r["type"].encode()]
    log = tmp_path / "plan.log"
    port = FakeSerial()
    port.start(log, "--timeout", "60")
    port.send(join(lines), chunk=40)
    code, out, err = port.finish()
    assert code == 0, err
    assert "capture: experiment 1 of 2: a | " in err and "left" in err
    assert "capture: experiment 2 of 2: b | " in err
    assert "  progress of exp_start" in out and "TLR" not in out


def test_a_refused_word_or_an_experiment_that_did_not_run_is_named(tmp_path):
    """ARGS="exp=none,bogus" ran all ten experiments and ended "ok", exit 0, saying nothing
    about the word. The kernel's error record names it; capture repeats it last
    and exits 4. An experiment exp= named that sent nothing is named too."""
    from ticklablib import check, records
    refused = [{"type": "boot", "cmdline": "exp=none,bogus"},
               {"type": "error", "what": "cmdline", "word": "exp=none,bogus",
                "reason": "not one of the choices", "accepted": "none, all, ...",
                "action": "default used"},
               {"type": "end", "records": 2, "status": "ok"}]
    runs = records.parse_stream(join(record(r) for r in refused))
    assert check.unmet(runs) == ["the kernel refused or ignored the command-line word "
                                 "'exp=none,bogus': not one of the choices (default used)"]
    missing = [{"type": "boot", "cmdline": "exp=hwlat,tsc-sync"},
               {"type": "exp_start", "exp": "hwlat"}, {"type": "exp_end", "exp": "hwlat"},
               {"type": "end", "records": 3, "status": "ok"}]
    runs = records.parse_stream(join(record(r) for r in missing))
    assert check.unmet(runs) == ["exp= asked for tsc-sync, which sent no record"]
    log = tmp_path / "refused.log"
    port = FakeSerial()
    port.start(log, "--timeout", "60")
    port.send(join(record(r) for r in refused))
    code, out, err = port.finish()
    assert code == 4, out + err
    assert out.splitlines()[-1].startswith("capture: exit 4: the run is whole and ok, but")
