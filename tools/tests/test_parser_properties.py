"""Property-based tests of the stream parser (Debian's python3-hypothesis): any bytes are
read without an exception, in any chunking, and a well-formed stream is read back exactly
whatever the noise and line ends around it."""
import json
import os

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="python3-hypothesis is not installed "
                                 "(apt-get install python3-hypothesis)")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from streams import record  # noqa: E402
from ticklablib.records import DAMAGED, OK, StreamParser, parse_stream, verdict  # noqa: E402

# The same examples at every run (derandomize): make test passes or fails on the tree, not
# on the draw. TICKLAB_FUZZ_EXAMPLES=N draws N fresh ones instead (a long search, by hand;
# what it finds goes into a plain test).
FUZZ_EXAMPLES = int(os.environ.get("TICKLAB_FUZZ_EXAMPLES", "0") or 0)
SETTINGS = settings(max_examples=FUZZ_EXAMPLES or 150, derandomize=not FUZZ_EXAMPLES,
                    deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])

# Bytes that make parsing interesting: markers, hex, JSON punctuation, line ends.
PIECES = st.sampled_from([b"TLR ", b"TLR", b"0123abcd", b" ", b"{", b"}", b"\"type\"", b":",
                          b"\n", b"\r", b"\r\n", b"\x1b[0m", b"\xff", b"\x00", b"x"])
HOSTILE = st.one_of(st.binary(max_size=2000),
                    st.lists(PIECES, max_size=300).map(b"".join))

# Human text the kernel may print: no marker, no "<8 hex> {", no line end.
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",),
                                      blacklist_characters="\r\n"), max_size=40) \
    .map(lambda t: t.encode("utf-8")) \
    .filter(lambda b: b"TLR" not in b and b"{" not in b)
VALUES = st.one_of(st.integers(-2 ** 70, 2 ** 70), st.text(max_size=20), st.booleans(),
                   st.none(), st.floats(allow_nan=False, allow_infinity=False))
BODY = st.dictionaries(st.text(min_size=1, max_size=10).filter(lambda k: k != "type"),
                       VALUES, max_size=5)


def chunks(data, cuts):
    points = sorted({c % (len(data) + 1) for c in cuts})
    out, last = [], 0
    for p in points + [len(data)]:
        out.append(data[last:p])
        last = p
    return out


@SETTINGS
@given(HOSTILE)
def test_any_bytes_parse_without_exception(data):
    runs = parse_stream(data)
    assert verdict(runs) in (OK, DAMAGED, "failed")
    last = max(1, data.count(b"\n") + data.count(b"\r") + 1)
    for run in runs:
        for p in run.problems:
            assert 1 <= p.line <= last
        assert run.damaged >= 0
        assert all(r.line >= 1 for r in run.records)


@SETTINGS
@given(HOSTILE, st.lists(st.integers(0, 10 ** 6), max_size=20))
def test_chunked_feed_equals_one_shot(data, cuts):
    parser = StreamParser()
    seen = []
    for piece in chunks(data, cuts):
        seen += parser.feed(piece)
    runs = parser.close()
    once = parse_stream(data)
    assert [r.summary() for r in runs] == [r.summary() for r in once]
    # every record verified while feeding is one the whole-file parse also found
    assert [r.line for r in seen] == [r.line for r in seen if any(
        r.line == x.line for run in once for x in run.records + run.after_end)]


@SETTINGS
@given(st.lists(st.tuples(BODY, st.lists(TEXT, max_size=2)), max_size=12),
       st.sampled_from([b"\n", b"\r\n", b"\r", b"\r\r\n"]),
       st.lists(st.integers(0, 10 ** 6), max_size=8))
def test_well_formed_stream_reads_back_exactly(bodies, eol, cuts):
    objs = [{"type": "boot", "version": "p"}]
    objs += [dict(body, type="sample") for body, _ in bodies]
    objs.append({"type": "end", "records": len(objs), "status": "ok"})
    lines = [b"ticklab: property run"]
    for i, obj in enumerate(objs):
        lines.append(record(obj))
        if 0 < i <= len(bodies):
            lines += [t for t in bodies[i - 1][1] if t.strip(b"\r")]
    data = eol.join(lines) + eol
    parser = StreamParser()
    for piece in chunks(data, cuts):
        parser.feed(piece)
    runs = parser.close()
    assert verdict(runs) == OK, [p for r in runs for p in r.problems]
    got = [json.loads(json.dumps(r)) for r in runs[0].records]
    assert got == [json.loads(json.dumps(o)) for o in objs]


@SETTINGS
@given(st.lists(BODY, min_size=1, max_size=6), st.data())
def test_one_changed_byte_in_a_record_is_never_ok(bodies, data):
    objs = [{"type": "boot"}] + [dict(b, type="sample") for b in bodies]
    objs.append({"type": "end", "records": len(objs), "status": "ok"})
    lines = [record(o) for o in objs]
    which = data.draw(st.integers(0, len(lines) - 1))
    at = data.draw(st.integers(0, len(lines[which]) - 1))
    new = data.draw(st.integers(0, 255).filter(lambda b: b != lines[which][at]))
    bad = bytearray(lines[which])
    bad[at] = new
    lines[which] = bytes(bad)
    runs = parse_stream(b"\n".join(lines) + b"\n")
    assert verdict(runs) == DAMAGED
