"""Make ticklablib importable without installing it (tools/ is not a package), and keep
hypothesis's caches out of the tree."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    from hypothesis import configuration
except ImportError:  # the property tests skip themselves
    pass
else:
    configuration.set_hypothesis_home_dir(tempfile.mkdtemp(prefix="ticklab-hypothesis-"))


import pytest  # noqa: E402

# The database tests' engines: a SQLite file, and a PostgreSQL server the session starts.
from pgserver import db_target, pg_server  # noqa: E402,F401


def wide_full_records():
    """The full synthetic run plus one record far wider than any screen, and one device
    whose rows come with raw samples."""
    from fullrun import full_run_records, samples_device_records
    recs = full_run_records()
    at = max(i for i, r in enumerate(recs) if r.get("exp") == "wakeup-latency") + 1
    recs[at:at] = samples_device_records()
    wide = {"type": "wide_thing"}
    wide.update({"key_%02d_with_a_long_name" % i: "value-%d-" % i * 4 for i in range(40)})
    recs.insert(-1, wide)
    recs[-1] = dict(recs[-1], records=len(recs) - 1)
    return recs


@pytest.fixture(scope="session")
def full_report(tmp_path_factory):
    """One report of the full run, shared by the report and browser tests (drawing its
    sixteen figures is the slowest thing the suite does). Returns (out dir, output,
    records sent)."""
    from streams import join, record
    from tooling import run_tool
    tmp = tmp_path_factory.mktemp("full")
    recs = wide_full_records()
    log = tmp / "serial.log"
    log.write_bytes(join(record(r) for r in recs))
    code, out, err = run_tool("report", log, "-o", tmp / "out", "--svg")
    assert code == 0, out + err
    return tmp / "out", out + err, recs


FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
REAL = {"exact": "icount0-quick-f7e080e.log", "plain": "tcg-quick-f7e080e-1.log",
        "plain2": "tcg-quick-f7e080e-2.log"}


def unpack_fixture(folder, name):
    """A real capture of fixtures/ and its capture record, unpacked into folder."""
    import gzip
    import shutil
    log = folder / name
    with gzip.open(os.path.join(FIXTURES, name + ".gz"), "rb") as f:
        log.write_bytes(f.read())
    shutil.copy(os.path.join(FIXTURES, name + ".capture.json"), str(log) + ".capture.json")
    return log


@pytest.fixture(scope="session")
def real_logs(tmp_path_factory):
    """The quick profile's real captures at f7e080e (fixtures/README.md), by mode."""
    tmp = tmp_path_factory.mktemp("reallogs")
    return {mode: unpack_fixture(tmp, name) for mode, name in REAL.items()}


@pytest.fixture(scope="session")
def real_reports(real_logs, tmp_path_factory):
    """`ticklab report` of the exact-mode and the plain-emulation quick run, shared by the
    figure and browser tests. Returns {mode: (out dir, output)}."""
    from tooling import run_tool
    tmp = tmp_path_factory.mktemp("realreports")
    out = {}
    for mode in ("exact", "plain"):
        code, so, se = run_tool("report", real_logs[mode], "-o", tmp / mode, "--svg")
        assert code == 0, so + se
        out[mode] = (tmp / mode, so + se)
    return out
