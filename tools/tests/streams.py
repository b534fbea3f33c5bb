"""Builds serial captures the way the kernel writes them, for the tests to damage.

The CRC is computed here with zlib directly, not with records.format_record, so the
parser is checked against the contract rather than against itself.
"""
import json
import zlib


def record(obj):
    """One record line without its line end."""
    payload = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return b"TLR %08x %s" % (zlib.crc32(payload), payload)


def run_lines(samples=3, status="ok", version="0.1.0"):
    """The lines of one run: boot, a table of text, `samples` records, end."""
    lines = [record({"type": "boot", "version": version, "boot": "multiboot1",
                     "cmdline": "hz=250 profile=quick"}),
             b"ticklab %s: timers found" % version.encode(),
             b"  name      freq_hz     rating",
             b"  hpet      100000000   250"]
    for i in range(samples):
        lines.append(record({"type": "sample", "exp": "oneshot", "i": i, "late_ns": 40 + i,
                             "unit": "\u00b5s"}))  # non-ASCII on purpose: UTF-8 is the contract
    lines.append(b"done: %d samples" % samples)
    lines.append(record({"type": "end", "records": samples + 1, "status": status}))
    return lines


def join(lines, eol=b"\n"):
    return b"".join(line + eol for line in lines)


def run_bytes(**kw):
    return join(run_lines(**kw))


def record_line_numbers(data):
    """1-based numbers of the lines that hold an intact record marker."""
    return [n for n, line in enumerate(data.split(b"\n"), 1) if b"TLR " in line]


def line_span(data, lineno):
    """(start, end) byte offsets of line `lineno`, end including its "\\n" if any."""
    start = 0
    for _ in range(lineno - 1):
        start = data.index(b"\n", start) + 1
    end = data.find(b"\n", start)
    return start, (len(data) if end < 0 else end + 1)
