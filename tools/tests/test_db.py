"""`ticklab db`: runs of many PCs in one database. Every test here runs twice, on a SQLite
file and on a PostgreSQL server the session started (pgserver.py), through the command as a
user runs it, and reads the tables back to see what was stored."""
import json
import multiprocessing
import os
import zlib

import pytest

import dblogs
from tooling import run_tool
from ticklablib import records
from ticklablib.db import engine, schema


def add(target, *paths, **kw):
    extra = ["--machine-name", kw["label"]] if kw.get("label") else []
    return run_tool("db", "add", "--db", target, *extra, *paths)


def rows(target, sql, params=()):
    db = engine.Database(target)
    try:
        return db.rows(sql, params)
    finally:
        db.close()


def three_logs(folder):
    """Three different logs of three machines: the exact and the plain fixture (kernels
    without the smbios record: identified by the CPU QEMU emulated, one AMD and one Intel
    model), and a capture whose kernel sends the smbios record."""
    return (dblogs.copy_fixture(folder, dblogs.EXACT), dblogs.copy_fixture(folder, dblogs.PLAIN),
            dblogs.copy_fixture(folder, dblogs.SMBIOS))


def test_three_logs_and_one_again_are_three_runs(db_target, tmp_path):
    exact, plain, pc = three_logs(tmp_path)
    code, out, err = add(db_target, exact, plain, pc)
    assert code == 0, out + err
    code, out, err = add(db_target, exact)
    assert code == 0 and "already stored as run" in out, out + err
    assert rows(db_target, "SELECT COUNT(*) FROM runs") == [(3,)]
    code, out, err = run_tool("db", "list", "--db", db_target)
    assert code == 0, err
    keys = [k[:8] for k, in rows(db_target, "SELECT machine_key FROM machines")]
    names = ("QEMU Virtual CPU version 2.5+", "QEMU Standard PC (Q35 + ICH9, 2009) pc-q35-7.2")
    assert len(keys) == 3 and all(k in out for k in keys) and all(n in out for n in names), out
    assert "db: 3 machine(s), 3 run(s)" in out
    code, out, err = run_tool("db", "report", "--db", db_target, "-o", tmp_path / "page")
    assert code == 0, err
    page = (tmp_path / "page" / "db-report.html").read_text()
    assert all(n in page for n in names) and all(k in page for k in keys)
    assert out.strip().endswith("db-report.html")


def test_a_run_is_stored_whole(db_target, tmp_path):
    exact = dblogs.copy_fixture(tmp_path, dblogs.EXACT)
    assert add(db_target, exact)[0] == 0
    raw = open(exact, "rb").read()
    sent = records.parse_stream(raw)[0].records
    stored = rows(db_target, "SELECT seq, line, type, json FROM records ORDER BY seq")
    assert [json.loads(j) for _, _, _, j in stored] == [dict(r) for r in sent]
    assert [line for _, line, _, _ in stored] == [r.line for r in sent]
    content, capture = rows(db_target, "SELECT content, capture_json FROM logs")[0]
    assert zlib.decompress(bytes(content)) == raw
    assert json.loads(capture) == dblogs.capture_record(dblogs.EXACT)
    (summary,), = rows(db_target, "SELECT summary_json FROM runs")
    assert json.loads(summary)["run"]["whole"] is True
    types = {t for _, _, t, _ in stored}
    assert {"boot", "cpu", "environment", "result", "verdict", "samples", "end"} <= types
    mode, whole, device = rows(db_target, "SELECT mode, whole, chosen_device FROM runs")[0]
    assert (mode, bool(whole), device) == ("exact", True, "hpet")


def test_a_gzipped_log_is_the_run_its_plain_log_is(db_target, tmp_path):
    """The committed fixtures are .log.gz: db add reads them as they are (and finds them in a
    folder), and the same run unpacked is already stored; gzip data that does not
    decompress is one error naming the file, not a traceback."""
    folder = tmp_path / "logs"
    folder.mkdir()
    gz = folder / (dblogs.EXACT + ".gz")
    gz.write_bytes(open(os.path.join(dblogs.FIXTURES, dblogs.EXACT + ".gz"), "rb").read())
    # its capture record as the fixtures keep it: the plain log's, beside the .gz
    (folder / (dblogs.EXACT + ".capture.json")).write_text(json.dumps(
        dblogs.capture_record(dblogs.EXACT)))
    code, out, err = add(db_target, str(folder))
    assert code == 0 and "1 run(s) stored" in out, out + err
    code, out, err = add(db_target, dblogs.copy_fixture(tmp_path, dblogs.EXACT))
    assert code == 0 and "already stored as run" in out, out + err
    assert rows(db_target, "SELECT COUNT(*) FROM runs") == [(1,)]
    bad = tmp_path / "cut.log.gz"
    bad.write_bytes(gz.read_bytes()[:200])
    code, out, err = add(db_target, str(bad))
    assert code != 0 and "cut.log.gz" in err and "does not decompress" in err, out + err
    assert "Traceback" not in err


def test_a_damaged_log_is_stored_with_its_problems(db_target, tmp_path):
    raw = open(dblogs.copy_fixture(tmp_path, dblogs.EXACT), "rb").read()
    lines = raw.split(b"\n")
    at = next(i for i, line in enumerate(lines) if b'"type":"cpu"' in line)
    lines[at] = lines[at].replace(b'"family"', b'"fXmily"')      # its CRC fails now
    damaged = tmp_path / "damaged.log"
    damaged.write_bytes(b"\n".join(lines[:-40]))                  # and the end is cut off
    code, out, err = add(db_target, damaged)
    assert code == 0 and "NOT whole" in out, out + err
    want = records.parse_stream(damaged.read_bytes())[0]
    whole, problems = rows(db_target, "SELECT whole, problems FROM runs")[0]
    assert not whole and problems == len(want.problems) >= 2
    kinds = [k for k, in rows(db_target, "SELECT kind FROM problems ORDER BY seq")]
    assert kinds == [p.kind for p in want.problems]
    assert {"bad-crc", "missing-end"} <= set(kinds)


def test_a_log_of_two_runs_is_two_runs(db_target, tmp_path):
    a = dblogs.fixture_records(dblogs.EXACT)
    b = dblogs.as_machine(dblogs.fixture_records(dblogs.PLAIN), dblogs.smbios("Box"))
    both = tmp_path / "two.log"
    dblogs.write_log(both, a + b)
    code, out, err = add(db_target, both)
    assert code == 0 and "run 2: stored" in out, out + err
    got = rows(db_target, "SELECT r.run_index, COUNT(*) FROM runs r JOIN records c ON "
                          "c.run_id = r.id GROUP BY r.run_index ORDER BY r.run_index")
    assert got == [(1, len(a)), (2, len(b))]
    assert rows(db_target, "SELECT COUNT(*) FROM logs") == [(1,)]
    assert rows(db_target, "SELECT COUNT(DISTINCT machine_id) FROM runs") == [(2,)]


def test_a_qr_decoded_log_is_the_run_its_serial_capture_is(db_target, tmp_path):
    from test_decode import make_parts, to_png
    recs = dblogs.as_machine(dblogs.fixture_records(dblogs.EXACT)[:60] + [
        {"type": "end", "records": 0, "status": "ok"}], dblogs.smbios("QR Box"))
    serial = dblogs.write_log(tmp_path / "serial.log", recs)
    body = open(serial, "rb").read()
    images = [to_png(p, str(tmp_path / ("qr%d.png" % i)))
              for i, p in enumerate(make_parts(body, 3))]
    decoded = tmp_path / "decoded.log"
    code, out, err = run_tool("decode", *images, "-o", decoded)
    assert code == 0, err
    code, out, err = add(db_target, decoded)
    assert code == 0 and "stored as run" in out, out + err
    stored = rows(db_target, "SELECT json FROM records ORDER BY seq")
    assert [json.loads(j) for j, in stored] == recs
    code, out, err = add(db_target, serial)
    assert code == 0 and "already stored" in out, out + err


def test_identity_one_pc_one_machine_two_pcs_two(db_target, tmp_path):
    base = dblogs.fixture_records(dblogs.EXACT)
    logs = [dblogs.write_log(tmp_path / ("r%d.log" % i), dblogs.as_machine(
        base, dblogs.smbios("Rig 7"), "0x11", p99_scale=1 + i / 10), dblogs.capture_record(
        dblogs.EXACT) | {"started_utc": "2026-11-0%dT10:00:00Z" % (i + 1)}) for i in range(3)]
    other_board = dblogs.write_log(tmp_path / "o.log", dblogs.as_machine(
        base, dblogs.smbios("Rig 7", board="B-2"), "0x11"))
    new_bios = dblogs.write_log(tmp_path / "n.log", dblogs.as_machine(
        base, dblogs.smbios("Rig 7", bios_version="1.1"), "0x11"))
    assert add(db_target, *logs, other_board, new_bios)[0] == 0
    twin = dblogs.write_log(tmp_path / "twin.log", dblogs.as_machine(
        base, dblogs.smbios("Rig 7"), "0x11", p99_scale=3))
    assert add(db_target, twin, label="bench-2")[0] == 0
    got = rows(db_target, "SELECT m.id, m.hardware_key, m.label, COUNT(r.id) FROM machines m "
                          "JOIN runs r ON r.machine_id = m.id GROUP BY m.id, m.hardware_key, "
                          "m.label ORDER BY m.id")
    assert [n for _, _, _, n in got] == [3, 1, 1, 1]
    hw = [h for _, h, _, _ in got]
    assert hw[0] == hw[2] != hw[1]          # a BIOS update: same hardware, another machine
    assert got[3][2] == "bench-2" and hw[3] != hw[0]
    code, out, _ = run_tool("db", "show", "--db", db_target, "bench-2")
    assert code == 0 and "label      bench-2" in out
    code, out, _ = run_tool("db", "show", "--db", db_target, str(got[0][0]))
    assert "same hardware, other firmware: %d (LabBIOS 1.1" % got[2][0] in out, out
    assert out.count(" exact ") == 3


def _add_in_process(args):
    target, paths = args
    return add(target, *paths)


def test_several_adds_at_once_store_each_run_once(db_target, tmp_path):
    base = dblogs.fixture_records(dblogs.EXACT)
    logs = [dblogs.write_log(tmp_path / ("c%d.log" % i), dblogs.as_machine(
        base, dblogs.smbios("Rig %d" % (i % 3)), p99_scale=1 + i / 7)) for i in range(6)]
    jobs = [(db_target, logs[i:] + logs[:i]) for i in range(4)]   # every log in every job
    with multiprocessing.get_context("fork").Pool(4) as pool:
        results = pool.map(_add_in_process, jobs)
    assert all(code == 0 for code, _, _ in results), results
    assert rows(db_target, "SELECT COUNT(*) FROM runs") == [(6,)]
    assert rows(db_target, "SELECT COUNT(*) FROM machines") == [(3,)]
    assert rows(db_target, "SELECT COUNT(*) FROM records") == [(6 * len(base) + 6,)]
    stored = sum(out.count(": stored as run") for _, out, _ in results)
    assert stored == 6


def _downgrade_to_1(target):
    """What a version-1 database held: version 2's column and table taken away again."""
    db = engine.Database(target)
    try:
        with db.transaction():
            db.execute("DROP TABLE intervals")
            db.execute("DROP INDEX machines_hardware")
            db.execute("ALTER TABLE machines DROP COLUMN hardware_key")
            db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    finally:
        db.close()


def test_the_schema_has_a_version_and_migrates(db_target, tmp_path):
    exact = dblogs.copy_fixture(tmp_path, dblogs.EXACT)
    assert add(db_target, exact)[0] == 0
    before = rows(db_target, "SELECT topic, device, value_ns, lo_ns, hi_ns FROM intervals "
                             "ORDER BY seq")
    hw = rows(db_target, "SELECT hardware_key FROM machines")
    assert len(before) >= 3 and rows(db_target, "SELECT value FROM meta WHERE key = "
                                                "'schema_version'") == [(str(schema.VERSION),)]
    _downgrade_to_1(db_target)
    code, out, err = run_tool("db", "list", "--db", db_target)
    assert code == 0, err
    assert rows(db_target, "SELECT value FROM meta WHERE key = 'schema_version'") == [("2",)]
    assert rows(db_target, "SELECT topic, device, value_ns, lo_ns, hi_ns FROM intervals "
                           "ORDER BY seq") == before
    assert rows(db_target, "SELECT hardware_key FROM machines") == hw


def test_a_database_newer_than_the_tool_is_refused(db_target, tmp_path):
    assert add(db_target, dblogs.copy_fixture(tmp_path, dblogs.EXACT))[0] == 0
    db = engine.Database(db_target)
    db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    db.close()
    code, out, err = run_tool("db", "list", "--db", db_target)
    assert code == 3 and "schema version 99" in err


def test_values_are_bound_never_spliced(db_target, tmp_path):
    """Quotes, SQL, a NUL and a lone surrogate in what a log carries arrive as data."""
    hostile = "x'); DROP TABLE runs; --"
    recs = dblogs.as_machine(dblogs.fixture_records(dblogs.EXACT), dblogs.smbios(
        hostile, manufacturer="Bad\"Maker"))
    recs.insert(3, {"type": "note", "text": "nul\x00here \ud800 lone"})
    recs[-1] = dict(recs[-1], records=len(recs) - 1)
    log = dblogs.write_log(tmp_path / "hostile.log", recs)
    code, out, err = add(db_target, log, label="o'brien")
    assert code == 0, out + err
    assert rows(db_target, "SELECT label FROM machines") == [("o'brien",)]
    ident = json.loads(rows(db_target, "SELECT identity_json FROM machines")[0][0])
    assert ident["system"]["product"] == hostile
    note = [json.loads(j) for j, in rows(db_target, "SELECT json FROM records WHERE type = ?",
                                         ("note",))]
    assert note == [{"type": "note", "text": "nul\x00here \ud800 lone"}]
    assert run_tool("db", "show", "--db", db_target, "o'brien")[0] == 0


def test_modes_are_never_mixed_in_one_figure(db_target, tmp_path):
    exact = dblogs.write_log(tmp_path / "e.log", dblogs.as_machine(
        dblogs.fixture_records(dblogs.EXACT), dblogs.smbios("Exact Box")),
        dblogs.capture_record(dblogs.EXACT))
    plain = dblogs.write_log(tmp_path / "p.log", dblogs.as_machine(
        dblogs.fixture_records(dblogs.EXACT), dblogs.smbios("Plain Box")),
        dblogs.capture_record(dblogs.PLAIN))
    assert add(db_target, exact, plain)[0] == 0
    code, out, err = run_tool("db", "report", "--db", db_target, "-o", tmp_path / "page")
    assert code == 0, err
    plots = tmp_path / "page" / "plots"
    exact_svg = (plots / "db_p99_exact.svg").read_text()
    plain_svg = (plots / "db_p99_emulation.svg").read_text()
    assert "Exact Box" in exact_svg and "Plain Box" not in exact_svg
    assert "Plain Box" in plain_svg and "Exact Box" not in plain_svg
    assert (plots / "db_history_exact.png").exists()


def test_read_commands_need_a_database(tmp_path):
    missing = tmp_path / "none.sqlite"
    code, out, err = run_tool("db", "list", "--db", missing)
    assert code == 3 and "no database at" in err and not missing.exists()
    code, out, err = run_tool("db", "add", "--db", missing, tmp_path / "no.log")
    assert code == 3 and "no such file" in err


def test_the_default_database_is_a_file_here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TICKLAB_DB", raising=False)
    code, out, err = run_tool("db", "add", dblogs.copy_fixture(tmp_path, dblogs.EXACT))
    assert code == 0 and (tmp_path / "ticklab.sqlite").exists(), err
    assert "1 run(s)" in run_tool("db", "list")[1]
    monkeypatch.setenv("TICKLAB_DB", str(tmp_path / "other.sqlite"))
    assert "no database at" in run_tool("db", "list")[2]


def test_no_experiment_is_named_in_the_db_code():
    """The db package reaches experiments through the registry and record fields only."""
    from ticklablib import experiments
    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          "ticklablib", "db")
    names = [e.name for e in experiments.EXPERIMENTS]
    for f in sorted(os.listdir(folder)):
        if f.endswith(".py"):
            text = open(os.path.join(folder, f), encoding="utf-8").read()
            named = [n for n in names if n in text or n.replace("-", "_") in text]
            assert not named, "%s names %s" % (f, named)


@pytest.mark.parametrize("uri, shown", [
    ("postgresql://u:pw@h/db", "postgresql://u:***@h/db"),
    ("postgresql://u@/db?host=/s&password=pw", "postgresql://u@/db?host=/s&password=***"),
    ("runs.sqlite", "runs.sqlite")])
def test_a_password_is_shown_hidden(uri, shown):
    assert engine.redact(uri) == shown
