"""The parser against hostile captures: each is one clear problem line, read in
time linear in its length, and never mixes two boots into one run."""
import time

import pytest

from streams import join, record, run_bytes, run_lines
from ticklablib.records import (BAD_JSON, DAMAGED, MAX_RECORD_BYTES, MIXED_RUNS, OK,
                                StreamParser, parse_stream, verdict)


def kinds(run):
    return [p.kind for p in run.problems]


def timed_parse(data):
    start = time.monotonic()
    runs = parse_stream(data)
    return runs, time.monotonic() - start


@pytest.mark.parametrize("name, line", [
    ("bare markers", b"TLR " * 250000),                                   # 1 MB
    ("well-formed frames", b"TLR 0000abcd " * 80000),                     # 1 MB
    ("frames that open JSON", b"TLR 00000000 {" * 70000 + b"}"),
    ("one marker at the end of 1 MB", b"x" * 1000000 + b"TLR "),
], ids=lambda v: v if isinstance(v, str) else "")
def test_line_full_of_markers_is_one_problem_in_linear_time(name, line):
    """At 19bd55f a 1 MB line of markers took 53 s and gave 76,925 problem lines."""
    small = run_bytes() + b"TLR " * 2500 + b"\n" + run_bytes()
    _, base = timed_parse(small)
    runs, took = timed_parse(run_bytes() + line + b"\n" + run_bytes())
    problems = [p for r in runs for p in r.problems]
    assert [(p.kind, p.line) for p in problems] == [(BAD_JSON, 10)], problems
    assert len(runs) == 2 and runs[1].whole  # the damage sits after run 1's end record
    assert took < 2.0 + 100 * base, (name, took)


def test_record_after_a_long_noise_line_still_verifies():
    noise = b"\x1b[0m" * 100000  # 400 kB of escape codes, then the record on the same line
    lines = run_lines()
    lines[2] = noise + lines[2] if lines[2].startswith(b"TLR ") else lines[2]
    lines[4] = noise + lines[4]
    runs = parse_stream(join(lines))
    assert verdict(runs) == OK


def test_frame_longer_than_any_record_is_damage():
    lines = run_lines(samples=1)
    lines[4] = record({"type": "sample", "pad": "x" * (MAX_RECORD_BYTES + 10)})
    runs = parse_stream(join(lines))
    assert kinds(runs[0]) == [BAD_JSON]
    assert "longer than %d bytes" % MAX_RECORD_BYTES in runs[0].problems[0].message
    assert runs[0].damaged == 1  # counted as arrived: no count-mismatch on top


def test_merged_markers_count_once_each():
    lines = run_lines(samples=3)
    lines[4:7] = [lines[4] + lines[5] + lines[6]]  # two line ends lost
    runs = parse_stream(join(lines))
    assert kinds(runs[0]) == ["bad-crc"]
    assert "2 damaged record markers" in runs[0].problems[0].message
    assert runs[0].damaged == 2 and runs[0].records[1]["i"] == 2  # the last one verified


def test_cr_only_line_ends():
    """At 19bd55f a CR-only capture was one line: "no verified record"."""
    data = join(run_lines(samples=3), b"\r")
    runs = parse_stream(data)
    assert verdict(runs) == OK and len(runs[0].records) == 5
    assert [r.line for r in runs[0].records] == [1, 5, 6, 7, 9]  # as an editor numbers them


def test_cr_only_incremental_byte_by_byte():
    data = join(run_lines(samples=2), b"\r")
    parser = StreamParser()
    seen = []
    for i in range(len(data)):
        seen += parser.feed(data[i:i + 1])
    runs = parser.close()
    assert verdict(runs) == OK
    assert len(seen) == 3  # the end record is complete only at close (a "\n" might follow)


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r\r\n", b"\r"])
def test_line_numbers_agree_across_line_end_styles(eol):
    lines = run_lines(samples=2)
    runs = parse_stream(join([b"\r" + lines[0]] + lines[1:], eol))  # a CR opening a line
    assert [r.line for r in runs[0].records] == [1, 5, 6, 8]


def test_many_cr_is_linear():
    runs, took = timed_parse(b"\r" * 1000000 + b"x" + b"\r" * 1000000 + run_bytes())
    assert verdict(runs) == OK and took < 3


def test_interleaved_boots_are_flagged_not_mixed():
    """Two runs' lines interleaved in one log were reported under one headline."""
    a = [record({"type": "boot", "version": "a"}), record({"type": "cpu", "brand": "A"}),
         record({"type": "memory", "usable_bytes": 1}), record({"type": "end", "records": 3,
                                                                "status": "ok"})]
    b = [record({"type": "boot", "version": "b"}), record({"type": "cpu", "brand": "B"}),
         record({"type": "memory", "usable_bytes": 2}), record({"type": "end", "records": 3,
                                                                "status": "ok"})]
    mixed = [x for pair in zip(a, b) for x in pair]
    runs = parse_stream(join(mixed))
    assert verdict(runs) == DAMAGED
    second = runs[1]
    assert second.mixed
    mix = [p for p in second.problems if p.kind == MIXED_RUNS]
    assert len(mix) == 1 and mix[0].line == 4 and "first at line 3" in mix[0].message


def test_two_boots_one_after_the_other_are_not_mixed():
    runs = parse_stream(run_bytes() + run_bytes())
    assert len(runs) == 2 and not any(r.mixed for r in runs) and verdict(runs) == OK
