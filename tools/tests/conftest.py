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


def wide_full_records():
    """The full synthetic run plus one record far wider than any screen."""
    from fullrun import full_run_records
    recs = full_run_records()
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
    code, out, err = run_tool("report", log, "-o", tmp / "out")
    assert code == 0, out + err
    return tmp / "out", out + err, recs
