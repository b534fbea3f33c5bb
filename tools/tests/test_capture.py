"""`ticklab capture`: a real QEMU boot, and a serial device (a pseudo-terminal pair standing
in for a USB serial adapter, so pyserial's real code path runs)."""
import os
import pty
import subprocess
import time

import pytest

from fullrun import full_run_lines
from pages import check_png_file, parse_html
from streams import join
from ticklablib import records

TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICKLAB = os.path.join(TOOLS, "ticklab")
KERNEL = os.path.join(os.path.dirname(TOOLS), "build", "ticklab.elf")


def test_capture_then_report_from_a_real_qemu_boot(tmp_path):
    """One quick boot under icount (about 2 s): the raw log is whole, and the report of
    it draws the figures its records support."""
    assert os.path.exists(KERNEL), "build the kernel first: make kernel"
    log = tmp_path / "qemu.log"
    p = subprocess.run([TICKLAB, "capture", "-o", str(log), "--no-build", "--icount", "0",
                        "--args", "exp=period-compare", "--timeout", "240"],
                       capture_output=True, timeout=300)
    err = p.stderr.decode()
    assert p.returncode == 0, err
    assert "QEMU verdict: ticklab finished its run ok (exit 33)" in err
    assert "experiment period-compare" in err and "end (status ok)" in err
    raw = log.read_bytes()
    runs = records.parse_stream(raw)
    assert len(runs) == 1 and runs[0].whole and runs[0].status == "ok"
    assert runs[0].boot["cmdline"] == "exp=period-compare"
    assert raw.count(b"\nTLR ") + raw.startswith(b"TLR ") == runs[0].end["records"] + 1
    assert b"ticklab: run finished ok" in raw  # text after the end record is kept too

    r = subprocess.run([TICKLAB, "report", str(log)], capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    out = tmp_path / "qemu-report"
    page = parse_html((out / "report.html").read_text())
    assert "experiments" in page.ids and "exp-period-compare" in page.ids
    for name in ("calibration", "period_compare"):
        check_png_file(out / "plots" / (name + ".png"))
        assert "fig-" + name in page.ids


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
        time.sleep(0.3)  # pyserial has put the line in raw mode once the log exists

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
    assert code == 0, err
    assert log.read_bytes() == data  # raw, byte for byte, CRs and noise included
    assert "stopped: end record of run 1" in err
    assert "experiment wakeup-latency" in err and "54 records" in err
    assert "whole" in out


def test_serial_capture_cut_run_times_out_and_counts_damage(tmp_path):
    lines = full_run_lines()
    bad = bytearray(join(lines[:12]))
    bad[-20] ^= 0x01  # a flipped bit on the last line sent
    log = tmp_path / "cut.log"
    port = FakeSerial()
    port.start(log, "--timeout", "3")
    port.send(bytes(bad))
    code, out, err = port.finish()
    assert code == 1
    assert log.read_bytes() == bytes(bad)
    assert "stopped: timeout after 3 s" in err
    assert "1 damaged (1 CRC)" in err
    assert "cut.log:12: bad-crc: " in out and "cut.log:12: missing-end: " in out


def test_serial_capture_two_runs(tmp_path):
    data = join(full_run_lines()) + join(full_run_lines())
    log = tmp_path / "two.log"
    port = FakeSerial()
    port.start(log, "--runs", "2", "--timeout", "60")
    port.send(data, chunk=4096)
    code, out, _ = port.finish()
    assert code == 0 and "ok (2 run(s), 0 not whole, 0 failed)" in out
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
