"""`ticklab check` as a user runs it: the real executable, its output and exit codes."""
import json
import os
import subprocess

import pytest

from streams import join, run_bytes, run_lines

TICKLAB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ticklab")


def check(tmp_path, data, *extra, stdin=False):
    """Run `ticklab check` on data (from a file, or stdin); return (code, stdout, stderr)."""
    if stdin:
        args, inp = ["check", "-", *extra], data
    else:
        log = tmp_path / "serial.log"
        log.write_bytes(data)
        args, inp = ["check", str(log), *extra], None
    p = subprocess.run([TICKLAB, *args], input=inp, capture_output=True, timeout=60)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def test_whole_ok_run_exits_0(tmp_path):
    code, out, _ = check(tmp_path, run_bytes(samples=2))
    assert code == 0
    assert "run 1, lines 1-8: version=0.1.0 boot=multiboot1; 4 records" in out
    assert "status \"ok\"; whole" in out
    assert out.rstrip().endswith("ok (1 run(s), 0 not whole, 0 failed)")


def test_failed_status_exits_2(tmp_path):
    code, out, _ = check(tmp_path, run_bytes() + run_bytes(status="failed"))
    assert code == 2 and "failed (2 run(s), 0 not whole, 1 failed)" in out


def test_damage_beats_failed_and_is_located(tmp_path):
    lines = run_lines(samples=3)
    lines[5] = lines[5].replace(b'"i":1', b'"i":7')
    code, out, _ = check(tmp_path, join(lines) + run_bytes(status="failed"))
    log = str(tmp_path / "serial.log")
    assert code == 1
    assert "%s:6: bad-crc: CRC " % log in out


@pytest.mark.parametrize("data", [b"", b"BdsDxe: nothing else\n", run_bytes()[:-30]])
def test_empty_or_cut_exits_1(tmp_path, data):
    assert check(tmp_path, data)[0] == 1


def test_stdin(tmp_path):
    code, out, _ = check(tmp_path, join(run_lines(), b"\r\n"), stdin=True)
    assert code == 0 and out.startswith("<stdin>: run 1,")
    lines = run_lines()
    del lines[5]
    code, out, _ = check(tmp_path, join(lines), stdin=True)
    assert code == 1 and "<stdin>:%d: count-mismatch: " % (len(lines)) in out


def test_json_output(tmp_path):
    first = run_lines(samples=4)[:5]
    code, out, _ = check(tmp_path, join(first) + run_bytes(), "--json")
    doc = json.loads(out)
    assert code == 1 and doc["exit_code"] == 1 and doc["verdict"] == "damaged"
    a, b = doc["runs"]
    assert a["whole"] is False and a["end"] is None and a["boot"]["version"] == "0.1.0"
    assert [(p["line"], p["kind"]) for p in a["problems"]] == [(6, "missing-end")]
    assert b["whole"] is True and b["status"] == "ok" and b["records"] == 5


@pytest.mark.parametrize("args", [[], ["check"], ["nosuch"], ["check", "/nonexistent/x.log"]])
def test_usage_and_unreadable_exit_3(args):
    p = subprocess.run([TICKLAB, *args], capture_output=True, timeout=60)
    assert p.returncode == 3 and p.stderr


def test_help_documents_exit_codes():
    p = subprocess.run([TICKLAB, "check", "--help"], capture_output=True, timeout=60)
    text = p.stdout.decode()
    assert p.returncode == 0
    for line in ("0  at least one run", "1  the capture is damaged", "2  every run is whole",
                 "3  usage error"):
        assert line in text
