"""The record stream parser against intact, noisy and deliberately damaged captures."""
import json
import random
import zlib

import pytest

from streams import join, line_span, record, record_line_numbers, run_bytes, run_lines
from ticklablib import records
from ticklablib.records import (DAMAGE_KINDS, DAMAGED, FAILED, OK, StreamParser,
                                parse_stream, verdict)


def kinds(run):
    return [p.kind for p in run.problems]


def all_problems(runs):
    return [p for run in runs for p in run.problems]


def assert_whole(runs, n=1):
    assert len(runs) == n
    for run in runs:
        assert run.whole, run.problems
    assert verdict(runs) == OK


# --- intact streams ------------------------------------------------------------------

def test_whole_run():
    data = run_bytes(samples=3)
    runs = parse_stream(data)
    assert_whole(runs)
    run = runs[0]
    assert [r["type"] for r in run.records] == ["boot", "sample", "sample", "sample", "end"]
    assert run.boot is run.records[0] and run.end is run.records[-1]
    assert [r.line for r in run.records] == record_line_numbers(data)
    assert run.records[1]["unit"] == "\u00b5s"
    assert (run.first_line, run.last_line) == (1, data.count(b"\n"))
    assert run.status == "ok" and run.damaged == 0


def test_record_is_plain_json_to_consumers():
    rec = parse_stream(run_bytes())[0].boot
    assert isinstance(rec, dict) and "line" not in rec and rec.line == 1
    assert json.loads(json.dumps(rec)) == dict(rec)


def test_format_record_matches_contract():
    obj = {"type": "x", "v": "\u00b5"}
    assert records.format_record(obj) == record(obj)


def test_no_final_newline_is_still_whole():
    assert_whole(parse_stream(run_bytes().rstrip(b"\n")))


def test_crlf_and_stray_cr():
    lines = run_lines()
    assert_whole(parse_stream(join(lines, b"\r\n")))
    assert_whole(parse_stream(join(lines, b"\r\r\n")))
    assert_whole(parse_stream(b"".join(b"\r" + line + b"\r\n" for line in lines)))


def test_firmware_noise_around_records():
    lines = run_lines()
    noisy = [b"\x1b[2J\x1b[01;01H\x1b[=3h\x1b[2J\x1b[01;01H",
             b"SeaBIOS (version 1.16.2-debian-1.16.2-1)",
             b"BdsDxe: loading Boot0001 \"UEFI QEMU DVD-ROM QM00003 \" from PciRoot(0x0)",
             b"BdsDxe: starting Boot0001 \"UEFI QEMU DVD-ROM QM00003 \"",
             b"\x1b[0m\x1b[30m\x1b[40m\x1b[2J\x1b[01;01HWelcome to GRUB!",
             b"\r\x1b[K  Booting `ticklab quick'",
             b"\x1b[0m\x1b[37m\x1b[40m" + lines[0]]  # noise on the record's own line
    noisy += lines[1:3] + [b"\r" + lines[3], b"\x1b[1;1H\x1b[0m" + lines[4]] + lines[5:]
    noisy += [b"\x1b[2J", b"\xff\xfe garbage after the run \x00"]
    runs = parse_stream(join(noisy, b"\r\n"))
    assert_whole(runs)
    assert len(runs[0].records) == 5 and runs[0].boot.line == 7


def test_two_runs_concatenated():
    a, b = run_bytes(samples=2), run_bytes(samples=4, version="0.2.0")
    runs = parse_stream(a + b)
    assert_whole(runs, 2)
    assert runs[1].boot["version"] == "0.2.0" and len(runs[1].records) == 6
    assert runs[1].first_line == a.count(b"\n") + 1


def test_failed_status_is_whole_but_failed():
    runs = parse_stream(run_bytes() + run_bytes(status="failed"))
    assert all(r.whole for r in runs)
    assert verdict(runs) == FAILED


def test_incremental_feed_equals_one_shot():
    data = join(run_lines(), b"\r\n") + run_bytes()[:-20]
    parser = StreamParser()
    seen = []
    for i in range(len(data)):
        seen += parser.feed(data[i:i + 1])
    runs = parser.close()
    expected = parse_stream(data)
    assert [r.summary() for r in runs] == [r.summary() for r in expected]
    assert [r.line for r in seen] == [r.line for run in expected for r in run.records]


# --- empty and garbage input --------------------------------------------------------

@pytest.mark.parametrize("data", [b"", b"\n", b"\r\n\r\n", b"hello\nworld"])
def test_no_records(data):
    runs = parse_stream(data)
    assert runs == [] and verdict(runs) == DAMAGED


def test_binary_garbage_never_raises():
    rng = random.Random(1234)
    alphabet = b"TLR {}\"\n\r\x1b0123456789abcdef:,[]" + bytes(range(256))
    for size in (1, 7, 64, 1000, 20000):
        for _ in range(20):
            data = bytes(rng.choice(alphabet) for _ in range(size))
            runs = parse_stream(data)
            assert verdict(runs) in (OK, FAILED, DAMAGED)
    # garbage that contains markers is reported, not dropped, and never crashes
    runs = parse_stream(b"\x00\xffTLR \x80\x81\nTLR zzzzzzzz {}\nTLR 00000000 \n")
    assert kinds(runs[0]) == ["bad-json", "bad-json", "bad-json"]
    assert verdict(runs) == DAMAGED


def test_verified_but_unusable_json():
    def raw(payload):
        return b"TLR %08x %s" % (zlib.crc32(payload), payload)
    bad = [raw(b"\xff\xfe{}"),                    # CRC fine, not UTF-8
           raw(b"[1,2]"),                         # not an object
           raw(b'{"type":"a","type":"b"}'),       # duplicate key
           raw(b'{"type":"x","v":NaN}'),          # not JSON
           raw(b"[" * 100000 + b"]" * 100000),    # nesting past the recursion limit
           raw(b'{"records":3}'),                 # no type
           raw(b'{"type":7}')]                    # type not a string
    lines = run_lines(samples=len(bad))
    lines[4:4 + len(bad)] = bad
    data = join(lines)
    runs = parse_stream(data)
    assert kinds(runs[0]) == ["bad-json"] * 5 + ["no-type"] * 2
    assert [p.line for p in runs[0].problems] == list(range(5, 5 + len(bad)))
    assert runs[0].damaged == len(bad)  # counted as arrived: no count-mismatch on top


# --- damage ------------------------------------------------------------------------

def test_truncated_at_every_offset_of_last_lines():
    data = run_bytes() + run_bytes(samples=2)
    start, _ = line_span(data, data.count(b"\n") - 3)
    for cut in range(start, len(data) + 1):
        runs = parse_stream(data[:cut])
        assert len(runs) == 2 and runs[0].whole
        if cut >= len(data) - 1:  # only the final "\n" lost: the end record is intact
            assert runs[1].whole
        else:
            assert "missing-end" in kinds(runs[1]), cut
            assert verdict(runs) == DAMAGED


@pytest.mark.parametrize("mask", [0x01, 0x20, 0x80])
def test_flipped_byte_is_reported_at_its_line(mask):
    data = run_bytes(samples=2)
    for lineno in record_line_numbers(data):
        start, end = line_span(data, lineno)
        for off in range(start, end):
            bad = bytearray(data)
            bad[off] ^= mask
            runs = parse_stream(bytes(bad))
            assert verdict(runs) == DAMAGED
            damage = [p for p in all_problems(runs) if p.kind in DAMAGE_KINDS]
            assert damage and damage[0].line == lineno, (lineno, off - start, damage)
            assert damage[0].kind in ("bad-crc", "bad-json")


def test_inserted_newline_is_reported_at_its_line_or_the_next():
    data = run_bytes(samples=2)
    for lineno in record_line_numbers(data):
        start, end = line_span(data, lineno)
        for off in range(start, end - 1):  # the last byte already is the "\n"
            bad = data[:off] + b"\n" + data[off + 1:]
            runs = parse_stream(bad)
            assert verdict(runs) == DAMAGED
            damage = [p for p in all_problems(runs) if p.kind in DAMAGE_KINDS]
            assert damage and damage[0].line in (lineno, lineno + 1), (lineno, off - start)


def test_merged_lines_keep_the_second_record():
    lines = run_lines(samples=3)
    lines[4:6] = [lines[4] + lines[5]]  # a lost "\n" between two records
    runs = parse_stream(join(lines))
    assert kinds(runs[0]) == ["bad-crc"] and runs[0].problems[0].line == 5
    assert [r.get("i") for r in runs[0].records[1:-1]] == [1, 2]


@pytest.mark.parametrize("which", ["middle", "boot", "end"])
def test_dropped_line(which):
    lines = run_lines(samples=3)
    index = {"middle": 5, "boot": 0, "end": len(lines) - 1}[which]
    del lines[index]
    runs = parse_stream(join(lines))
    assert verdict(runs) == DAMAGED
    expected = {"middle": ["count-mismatch"], "boot": ["missing-boot", "count-mismatch"],
                "end": ["missing-end"]}[which]
    assert kinds(runs[0]) == expected
    if which == "middle":
        assert "1 lost" in runs[0].problems[0].message
        assert runs[0].problems[0].line == runs[0].end.line


def test_duplicated_line_anywhere():
    lines = run_lines(samples=3)
    for i, line in enumerate(lines):
        if not line.startswith(b"TLR "):
            continue
        runs = parse_stream(join(lines[:i + 1] + [line] + lines[i + 1:]))
        assert verdict(runs) == DAMAGED, i
    runs = parse_stream(join(lines[:5] + [lines[5]] + lines[5:]))
    assert kinds(runs[0]) == ["count-mismatch"]
    assert "1 more than sent" in runs[0].problems[0].message
    runs = parse_stream(join(lines + lines[-1:]))
    assert kinds(runs[0]) == ["after-end"] and runs[0].problems[0].line == len(lines) + 1


def test_reboot_mid_stream():
    first = run_lines(samples=5)[:6]  # cut after the second sample: no end
    second = run_bytes(samples=2)
    runs = parse_stream(join(first) + second)
    assert len(runs) == 2
    assert kinds(runs[0]) == ["missing-end"]
    assert runs[0].problems[0].line == len(first) + 1  # where the new boot came
    assert runs[1].whole and verdict(runs) == DAMAGED


def test_records_before_any_boot():
    lines = run_lines(samples=2)
    runs = parse_stream(join(lines[4:] + lines))
    assert kinds(runs[0]) == ["missing-boot", "count-mismatch"] and runs[0].boot is None
    assert runs[1].whole


def test_damaged_boot_is_counted_not_lost():
    lines = run_lines(samples=2)
    lines[0] = lines[0][:-3] + b"XX}"
    runs = parse_stream(join(lines))
    assert len(runs) == 1 and runs[0].boot is None
    assert kinds(runs[0]) == ["bad-crc", "missing-boot"]


def test_damage_before_boot_only_is_a_fragment():
    runs = parse_stream(b"TLR 1234\n" + run_bytes())
    assert len(runs) == 2 and kinds(runs[0]) == ["bad-json"] and runs[0].records == []
    assert runs[1].whole and verdict(runs) == DAMAGED


@pytest.mark.parametrize("end, kind", [
    ({"type": "end", "records": 4, "status": "maybe"}, "bad-status"),
    ({"type": "end", "records": 4}, "bad-status"),
    ({"type": "end", "records": "4", "status": "ok"}, "count-mismatch"),
    ({"type": "end", "records": True, "status": "ok"}, "count-mismatch"),
    ({"type": "end", "status": "ok"}, "count-mismatch"),
])
def test_bad_end_record(end, kind):
    lines = run_lines(samples=3)
    lines[-1] = record(end)
    runs = parse_stream(join(lines))
    assert kinds(runs[0]) == [kind] and verdict(runs) == DAMAGED


def test_uppercase_crc_is_malformed():
    lines = run_lines()
    lines[4] = lines[4][:4] + lines[4][4:12].upper() + lines[4][12:]
    if lines[4][4:12].isdigit():
        pytest.skip("CRC has no letters")
    runs = parse_stream(join(lines))
    assert kinds(runs[0]) == ["bad-json"]
