"""`ticklab compare`: runs side by side, rows matched by name, differences against run 1."""
import os
import subprocess

from fullrun import full_run_bytes, full_run_records
from pages import inline_pngs, parse_html, read_csv
from streams import join, record

TICKLAB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ticklab")


def compare(*args):
    p = subprocess.run([TICKLAB, "compare", *map(str, args)], capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode() + p.stderr.decode()


def test_two_pcs_differences(tmp_path):
    a, b = tmp_path / "pc-a.log", tmp_path / "pc-b.log"
    a.write_bytes(full_run_bytes(brand="Fast CPU"))
    b.write_bytes(full_run_bytes(brand="Slow CPU", scale=2.0))
    code, out = compare(a, b, "-o", tmp_path / "cmp")
    assert code == 0, out
    assert "[1] pc-a.log: lines 2-66, 57 records, whole" in out
    assert "CPU" in out and "Fast CPU | Slow CPU" in out
    # a latency doubled, a value equal in both runs not listed by default
    assert "device=lapic path=irq p99_ns" in out
    assert "2250 | 4500 | d=+2250 +100.00%" in out
    assert "device=lapic path=irq samples" not in out
    html = parse_html((tmp_path / "cmp" / "compare.html").read_text())
    assert "Fast CPU" in html.text and "Slow CPU" in html.text
    # every figure of both runs, side by side
    assert len(inline_pngs(html)) == 2 * 7
    header, rows = read_csv(tmp_path / "cmp" / "compare.csv")
    assert header == ["section", "row", "key", "pc-a.log", "pc-b.log", "delta_pc-b.log",
                      "differs"]
    p99 = [r for r in rows if r[:3] == ["result wakeup-latency", "device=lapic path=irq",
                                        "p99_ns"]]
    assert p99 == [["result wakeup-latency", "device=lapic path=irq", "p99_ns", "2250", "4500",
                    "+2250", "1"]]
    code, everything = compare(a, b, "--all")
    assert "device=lapic path=irq samples" in everything and "1000 | 1000" in everything


def test_two_runs_in_one_log_and_a_missing_row(tmp_path):
    recs = full_run_records()
    fewer = [r for r in recs if r.get("device") != "rtc"]
    fewer[-1] = dict(fewer[-1], records=len(fewer) - 1)
    log = tmp_path / "both.log"
    log.write_bytes(full_run_bytes() + join(record(r) for r in fewer))
    code, out = compare(log)
    assert code == 0, out
    assert "[1] both.log#1" in out and "[2] both.log#2" in out
    assert "device=rtc path=irq p50_ns" in out and "5000 | absent" in out


def test_damaged_input_is_compared_and_flagged(tmp_path):
    good, cut = tmp_path / "good.log", tmp_path / "cut.log"
    good.write_bytes(full_run_bytes())
    cut.write_bytes(full_run_bytes()[:-200])
    code, out = compare(good, cut)
    assert code == 1
    assert "[2] cut.log: lines 2-64, 54 records, NOT whole (2 problems)" in out


def test_fewer_than_two_runs(tmp_path):
    one = tmp_path / "one.log"
    one.write_bytes(full_run_bytes())
    code, out = compare(one)
    assert code == 3 and "need at least two runs with a boot record; found 1" in out
    assert compare(one, tmp_path / "nonexistent.log")[0] == 3
