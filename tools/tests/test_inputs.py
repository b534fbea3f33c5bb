"""What every subcommand reads: a gzipped capture (the committed fixtures are .log.gz:
`check` said "damaged (no run found)" of them), standard input (`check -` read it, `report
-` could not), an empty file and a binary one named as such (both were "damaged"); and
`export`, the data without drawing."""
import gzip
import os
import subprocess
import sys

import pytest

from fullrun import small_run_lines
from streams import join
from tooling import TICKLAB, run_tool

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
GZ = os.path.join(FIXTURES, "icount0-quick.log.gz")


def tool(*args, stdin=None):
    """`ticklab ARGS` as a process (standard input given as bytes)."""
    p = subprocess.run([sys.executable, TICKLAB] + [str(a) for a in args], input=stdin,
                       capture_output=True, timeout=300)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def test_check_reads_a_gzipped_capture_and_its_capture_record():
    code, out, _ = run_tool("check", GZ)
    assert code == 0 and out.splitlines()[-1].endswith("ok (1 run(s), 0 not whole, 0 failed)")
    code, out, _ = run_tool("check", "--json", GZ)
    assert code == 0 and '"accel": "tcg"' in out   # icount0-quick.log.capture.json


@pytest.mark.parametrize("command", ["check", "report", "export"])
def test_every_subcommand_reads_standard_input(command, tmp_path):
    data = join(small_run_lines())
    extra = [] if command == "check" else ["-o", tmp_path / command]
    code, out, err = tool(command, "-", *extra, stdin=data)
    assert code == 0, out + err
    if command == "report":
        assert out.splitlines()[-1] == str((tmp_path / command).resolve() / "report.html")
        assert "&lt;stdin&gt;" in (tmp_path / command / "report.html").read_text()
    if command == "export":
        assert (tmp_path / command / "summary.json").exists()


def test_compare_reads_gzip_and_standard_input_once(tmp_path):
    with gzip.open(GZ, "rb") as f:
        plain = f.read()
    code, out, err = tool("compare", GZ, "-", stdin=plain)
    assert code == 0, err
    assert "0 changed beyond noise" in out.splitlines()[-1]
    code, _, err = tool("compare", "-", "-", stdin=plain)
    assert code == 3 and "standard input (-) can be read once only" in err


def test_report_of_a_gzipped_capture_goes_beside_it_without_gz_and_log(tmp_path):
    log = tmp_path / "run.log.gz"
    log.write_bytes(gzip.compress(join(small_run_lines())))
    code, out, err = run_tool("report", log)
    assert code == 0, err
    assert out.splitlines()[-1] == str(tmp_path.resolve() / "run-report" / "report.html")


@pytest.mark.parametrize("what,data,words", [
    ("empty", b"", "empty (0 bytes)"),
    ("binary", bytes(range(256)) * 64, "binary, not a capture"),
])
def test_empty_and_binary_inputs_are_named_as_such(what, data, words, tmp_path):
    log = tmp_path / ("%s.log" % what)
    log.write_bytes(data)
    code, out, _ = run_tool("check", log)
    assert code == 1 and words in out and "damaged" not in out
    code, out, _ = run_tool("report", log, "-o", tmp_path / "rep")
    assert code == 1 and words in out
    assert words in (tmp_path / "rep" / "report.html").read_text()
    code, _, err = run_tool("export", log, "-o", tmp_path / "exp")
    assert code == 1 and words in err


def test_export_writes_the_data_and_draws_nothing(tmp_path):
    code, out, err = run_tool("export", GZ, "-o", tmp_path / "x")
    assert code == 0, err
    files = set(os.listdir(tmp_path / "x"))
    assert {"summary.json", "results.csv", "histograms.csv", "histograms.txt",
            "data"} <= files
    assert "plots" not in files and "report.html" not in files
    assert out.splitlines()[-1] == str((tmp_path / "x").resolve())
    import json
    doc = json.loads((tmp_path / "x" / "summary.json").read_text())
    assert doc["figures"] == [] and doc["answer"][0]["question"].startswith("Which timer")
