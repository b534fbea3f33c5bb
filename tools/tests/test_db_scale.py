"""A fleet's worth: 1000 runs of 50 machines (the exact-mode fixture with 50 identities, 20
runs each a day apart, their p99 moved run to run) added with one `db add DIR` and reported,
on each engine, within a bound of time (docs/host-tool.md gives what it took here)."""
import json
import os
import time

import pytest

import dblogs
from tooling import run_tool

MACHINES, RUNS_EACH = 50, 20
ADD_BOUND_S = 300       # measured here (2 cores shared with other sessions): docs/host-tool.md
REPORT_BOUND_S = 120


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """The 1000 logs, written once for both engines."""
    folder = str(tmp_path_factory.mktemp("fleet") / "logs")
    base = dblogs.fixture_records(dblogs.EXACT)
    capture = dblogs.capture_record(dblogs.EXACT)
    os.makedirs(folder)
    for m in range(MACHINES):
        ident = dblogs.smbios("Rig %d" % (m // 2), bios_version="1.%d" % (m % 2))
        for r in range(RUNS_EACH):
            started = "2026-%02d-%02dT%02d:00:00Z" % (1 + r // 28, 1 + r % 28, m % 24)
            dblogs.write_log(os.path.join(folder, "m%02d-r%02d.log" % (m, r)),
                             dblogs.as_machine(base, ident, "0x%x" % (m % 3 + 1),
                                               p99_scale=1 + ((m * 7 + r * 3) % 10) / 20),
                             dict(capture, started_utc=started))
    return folder


def test_a_thousand_runs_are_added_and_reported_in_bounded_time(db_target, fleet, tmp_path):
    t0 = time.monotonic()
    code, out, err = run_tool("db", "add", "--db", db_target, fleet)
    added = time.monotonic() - t0
    assert code == 0, err + out[-2000:]
    assert "db: %d run(s) stored, 0 already there" % (MACHINES * RUNS_EACH) in out
    t0 = time.monotonic()
    code, out, err = run_tool("db", "report", "--db", db_target, "-o", tmp_path / "page")
    reported = time.monotonic() - t0
    assert code == 0, err
    page = (tmp_path / "page" / "db-report.html").read_text()
    assert page.count("Acme Lab Rig ") >= MACHINES
    code, out, _ = run_tool("db", "list", "--db", db_target)
    assert "db: %d machine(s), %d run(s)" % (MACHINES, MACHINES * RUNS_EACH) in out
    timing = {"engine": "postgresql" if "://" in db_target else "sqlite", "add_s": round(added, 1),
              "report_s": round(reported, 1)}
    print("db scale:", json.dumps(timing))
    with open(os.path.join(os.environ.get("TICKLAB_DB_TIMING_DIR", str(tmp_path)),
                           "db-scale-%s.json" % timing["engine"]), "w") as f:
        json.dump(timing, f)
    assert added < ADD_BOUND_S, timing
    assert reported < REPORT_BOUND_S, timing
