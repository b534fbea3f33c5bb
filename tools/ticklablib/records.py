"""Reading the ticklab record stream out of a raw serial capture.

The kernel sends every measurement as one line ``TLR <crc> <json>``: ``<crc>`` is eight
lowercase hex digits of zlib's CRC-32 of the JSON bytes, ``<json>`` one object with a string
``"type"``. A run opens with a ``boot`` record and closes with an ``end`` record whose
``records`` counts the records sent before it (boot included), so a lost, duplicated or
damaged line is always visible to the reader.

A real capture is dirtier than that: OVMF and GRUB write escape codes and banners to the
same port, sometimes on the line the kernel's first record lands on; the capture may have
``\\r\\n`` or stray ``\\r``; a run can be cut by a reboot or by the capture stopping. So
this module never trusts a line: a record is accepted only if its frame parses and its CRC
matches, and everything else that looks like a record is reported as damaged. Nothing here
raises on any input bytes: every defect becomes a `Problem` attached to a `Run`.

Public API: `parse_stream`, `StreamParser` (incremental, for live captures), `scan_line`,
`format_record`, `verdict`, and the `Run`, `Record` and `Problem` types.
"""

import json
import re
import zlib
from dataclasses import dataclass, field

MARKER = b"TLR "

# Problem kinds. The three "damage" kinds are record lines that could not be used.
BAD_CRC = "bad-crc"            # frame is fine, CRC does not match the JSON bytes
BAD_JSON = "bad-json"          # frame/CRC field malformed, or the JSON itself is not usable
NO_TYPE = "no-type"            # verified JSON object without a string "type"
MISSING_BOOT = "missing-boot"  # records with no boot record before them
MISSING_END = "missing-end"    # stream ended, or a new boot came, before the run's end
COUNT_MISMATCH = "count-mismatch"  # end.records != record lines that arrived
AFTER_END = "after-end"        # records after an end record and before the next boot
BAD_STATUS = "bad-status"      # end.status is neither "ok" nor "failed"
MIXED_RUNS = "mixed-runs"      # a once-per-boot record came twice: two boots interleaved
DAMAGE_KINDS = frozenset({BAD_CRC, BAD_JSON, NO_TYPE})

END_STATUSES = ("ok", "failed")

# Record types the kernel sends once per boot (docs/report-format.md). A second one in the
# same run means the lines of two boots are interleaved in the capture (two QEMUs writing
# one file): the run's figures would mix two machines, so the run is not whole.
ONCE_PER_BOOT = frozenset({"cpu", "memory", "console", "paging", "acpi_summary", "plan",
                           "environment", "irq_stats", "serial_ports", "smbios",
                           "acpi_mode"})

# Stream verdicts, in increasing order of trust: see `verdict`.
DAMAGED, FAILED, OK = "damaged", "failed", "ok"

# The longest JSON a record line may carry. The kernel's own limit is 2048 bytes (an `error`
# record with what=record_too_long replaces a longer one); four times that leaves room while
# bounding the work on a hostile line: only markers this close to the line end are tried.
MAX_RECORD_BYTES = 8192

# A record frame after the marker: the CRC field, one space, the JSON (to the line end).
_FRAME = re.compile(rb"([0-9a-f]{8}) (.*)\Z", re.S)
# Where a frame may start: the marker, eight lowercase hex digits and a space.
_FRAME_START = re.compile(rb"TLR [0-9a-f]{8} ")
# Lines with no intact marker that still look like a record: "TLR" not followed by a word
# character (marker's space damaged), or "<crc> {" (marker's letters damaged). Without this
# a flipped bit in the marker would turn a record into "text" and only the end count would
# notice, at the wrong line. Human text and firmware noise do not contain either pattern.
_SUSPECT = re.compile(rb"TLR(?![A-Za-z0-9_])|[0-9a-f]{8} \{")
# A line end: "\n" with any "\r" before it, or a run of "\r" alone (a CR-only capture).
_EOL = re.compile(rb"\r*\n|\r+")


@dataclass(frozen=True)
class Problem:
    """One defect in the stream: 1-based line number in the capture, kind, explanation;
    for a damaged record line, what its unverified bytes still say it was (its type, its
    experiment and the keys that name its row: never used as data, only to name what was
    lost), or None."""
    line: int
    kind: str
    message: str
    unverified: object = field(default=None, compare=False, repr=False)


# A "key":"short text" or "key":integer pair: what a damaged line's bytes may still say.
_PAIR = re.compile(rb'"([A-Za-z_][A-Za-z0-9_]{0,40})":("([^"\\]{0,60})"|-?[0-9]{1,20}(?![0-9.eE]))')


def unverified_fields(payload):
    """The top-level scalars of a record whose CRC failed, as far as they read: the JSON
    parsed when it still parses (a flipped digit), else its intact "key":value pairs. Only
    for naming what was lost."""
    try:
        obj = json.loads(payload.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        obj = None
    if isinstance(obj, dict):
        return {k: v for k, v in obj.items() if isinstance(v, (str, int, float, bool))}
    out = {}
    for m in _PAIR.finditer(payload):
        key = m.group(1).decode()
        if key in out:
            continue
        out[key] = m.group(3).decode("utf-8", "replace") if m.group(3) is not None \
            else int(m.group(2))
    return out or None


class Record(dict):
    """A verified record: the JSON object itself, plus `line` (1-based, in the capture).

    A dict subclass so that consumers index it like the JSON and json.dumps it unchanged,
    while the line number stays out of the record's own keys (no name can collide).
    """
    __slots__ = ("line",)

    def __init__(self, obj, line):
        super().__init__(obj)
        self.line = line

    @property
    def type(self):
        return self["type"]


@dataclass
class Run:
    """One boot of the kernel as seen in the capture, or a fragment of one.

    records   every verified record of the run in stream order, boot first and end last
              when present (records after the end are in `after_end` instead)
    boot      the boot record, or None if the run has none (a fragment: see missing-boot)
    end       the end record, or None (see missing-end)
    problems  Problems found in this run, sorted by line
    first_line, last_line  its first and last record line, verified or damaged
    damaged   record lines in this run (before its end) that could not be used; they count
              toward the end record's `records`, so damage is not reported twice as loss
    after_end verified records after the end record with no boot before them
    mixed     a record sent once per boot came twice (see mixed-runs)
    """
    records: list = field(default_factory=list)
    boot: Record = None
    end: Record = None
    problems: list = field(default_factory=list)
    first_line: int = 0
    last_line: int = 0
    damaged: int = 0
    after_end: list = field(default_factory=list)
    mixed: bool = False

    @property
    def whole(self):
        """Boot first, end present, counts match, no damaged line, valid status."""
        return self.boot is not None and self.end is not None and not self.problems

    @property
    def status(self):
        """The end record's "status" as sent ("ok", "failed", or anything), or None."""
        return None if self.end is None else self.end.get("status")

    def summary(self):
        """A JSON-ready description of the run, for --json output and test logs."""
        return {
            "first_line": self.first_line,
            "last_line": self.last_line,
            "boot": self.boot,
            "end": self.end,
            "records": len(self.records),
            "damaged": self.damaged,
            "after_end": len(self.after_end),
            "status": self.status,
            "whole": self.whole,
            "problems": [{"line": p.line, "kind": p.kind, "message": p.message}
                         for p in self.problems],
        }


def format_record(obj):
    """Encode one record as the kernel does (a line without its line end), as bytes."""
    payload = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()
    return b"%s%08x %s" % (MARKER, zlib.crc32(payload), payload)


def _strict_object(pairs):
    """object_pairs_hook: a duplicated key means the kernel's writer is broken."""
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError("duplicate key %r" % key)
        obj[key] = value
    return obj


def _reject_constant(name):
    raise ValueError("%s is not JSON" % name)


def _decode(frame, lineno):
    """Decode the bytes after one marker. Returns (Record or Problem, crc_ok).

    crc_ok tells the caller the bytes are what the kernel sent: a later marker in the same
    line is then part of this record's JSON, not another record.
    """
    m = _FRAME.match(frame)
    if m is None:
        return Problem(lineno, BAD_JSON, "malformed record frame: 'TLR ' is not followed "
                       "by 8 lowercase hex digits and a space"), False
    sent, payload = int(m.group(1), 16), m.group(2)
    got = zlib.crc32(payload)
    if got != sent:
        return Problem(lineno, BAD_CRC, "CRC %08x does not match the %d JSON bytes (crc32 "
                       "%08x)" % (sent, len(payload), got),
                       unverified_fields(payload)), False
    try:
        obj = json.loads(payload.decode("utf-8"), object_pairs_hook=_strict_object,
                         parse_constant=_reject_constant)
    except UnicodeDecodeError as e:
        return Problem(lineno, BAD_JSON, "JSON is not valid UTF-8 at byte %d" % e.start), True
    except (ValueError, RecursionError) as e:
        return Problem(lineno, BAD_JSON, "invalid JSON: %s" % (str(e) or type(e).__name__)), True
    if not isinstance(obj, dict):
        return Problem(lineno, BAD_JSON, "JSON is a %s, not an object" % type(obj).__name__), True
    if not isinstance(obj.get("type"), str):
        return Problem(lineno, NO_TYPE, "record has no string \"type\" key"), True
    return Record(obj, lineno), True


def scan_line(line, lineno):
    """Find the record in one capture line. Returns (Record or None, Problem or None,
    damaged), where `damaged` is how many record lines the line holds that could not be
    used (they count toward the end record's `records`, so damage is not reported again
    as loss).

    The record may start anywhere in the line (firmware noise before it). Each marker is a
    record the kernel began; the first frame whose bytes verify is the line's record, and
    every marker before it was a record whose line end was lost. Only frames within
    MAX_RECORD_BYTES of the line end are checksummed, so a line of any length costs time
    linear in its length. A line yields at most one problem, however many markers it holds.
    """
    line = line.rstrip(b"\r")
    window = len(line) - len(MARKER) - 9 - MAX_RECORD_BYTES
    first = None
    for m in _FRAME_START.finditer(line):
        start = m.start()
        if start < window:
            first = first or Problem(lineno, BAD_JSON, "record frame longer than %d bytes: "
                                     "not a record (its line end was lost?)" % MAX_RECORD_BYTES)
            continue
        result, crc_ok = _decode(line[start + len(MARKER):], lineno)
        if isinstance(result, Record):
            before = line.count(MARKER, 0, start)
            return result, _one_problem(first, before, lineno), before
        first = first or result
        if crc_ok:  # the kernel really sent this; nothing after it is another record
            before = line.count(MARKER, 0, start) + 1
            return None, _one_problem(first, before, lineno), before
    markers = line.count(MARKER)
    if markers:
        return None, _one_problem(first, markers, lineno), markers
    if _SUSPECT.search(line):
        return None, Problem(lineno, BAD_JSON, "damaged record marker: looks like a record "
                             "line but has no intact 'TLR <crc> ' frame"), 1
    return None, None, 0


def _one_problem(first, damaged, lineno):
    """The line's one problem: the first frame's failure, or a malformed marker, with how
    many more damaged markers the line held."""
    if damaged == 0:
        return None
    if first is None:
        first = Problem(lineno, BAD_JSON, "malformed record frame: 'TLR ' is not followed by "
                        "8 lowercase hex digits and a space")
    if damaged == 1:
        return first
    return Problem(lineno, first.kind, "%s (the line holds %d damaged record markers)"
                   % (first.message, damaged), first.unverified)


class StreamParser:
    """Incremental parser: feed() capture bytes as they arrive, close() at the end.

    For live captures (progress, early stop on an end record); `parse_stream` is the
    one-shot form. A line ends at "\n" (with any "\r" before it, so CRLF counts once, as an
    editor counts it) or at a run of "\r" alone, so a CR-only capture reads line by line;
    "\r" at the start of a line is noise, not an empty line.

    on_line, when given, is called for every line with (lineno, line bytes, Record or None,
    Problem or None): the capture's terminal view shows the kernel's text from it.
    """

    def __init__(self, on_line=None):
        self.runs = []       # every Run so far; the last one may still be open
        self.lineno = 0      # capture lines consumed
        self._run = None     # the run new lines belong to
        self._buf = bytearray()  # bytes after the last line end
        self._scan = 0       # where in _buf the search for a line end resumes
        self.on_line = on_line

    def feed(self, data):
        """Consume bytes; return the Records verified in the complete lines among them."""
        self._buf += data
        found, pos = [], 0
        while True:
            m = _EOL.search(self._buf, self._scan)
            if m is None:
                self._scan = len(self._buf)
                break
            if m.end() == len(self._buf) and self._buf[-1:] == b"\r":
                self._scan = m.start()  # a "\n" may follow in the next bytes
                break
            line = bytes(self._buf[pos:m.start()])
            self._scan = pos = m.end()
            if line or m.group().endswith(b"\n"):
                rec = self._line(line)
                if rec is not None:
                    found.append(rec)
        if pos:
            del self._buf[:pos]
            self._scan -= pos
        return found

    def close(self):
        """Consume the final unterminated line, finish the open run, return all runs."""
        rest = bytes(self._buf).rstrip(b"\r")
        self._buf, self._scan = bytearray(), 0
        if rest:
            self._line(rest)
        if self._run is not None:
            self._finish(self._run, None)
            self._run = None
        return self.runs

    def _line(self, line):
        self.lineno += 1
        record, problem, damaged = scan_line(line, self.lineno)
        if problem is not None:
            run = self._run if self._run is not None else self._open(problem.line)
            run.problems.append(problem)
            run.last_line = problem.line
            if run.end is None:
                run.damaged += damaged
        if record is not None:
            self._record(record)
        if self.on_line is not None:
            self.on_line(self.lineno, line, record, problem)
        return record

    def _open(self, line):
        if self._run is not None:
            self._finish(self._run, line)
        self._run = Run(first_line=line, last_line=line)
        self.runs.append(self._run)
        return self._run

    def _record(self, rec):
        if rec.type == "boot":
            run = self._open(rec.line)
            run.boot = rec
        else:
            run = self._run if self._run is not None else self._open(rec.line)
        run.last_line = rec.line
        if run.end is not None:
            run.after_end.append(rec)
            return
        if run.boot is None and not run.records:
            run.problems.append(Problem(rec.line, MISSING_BOOT, "%s record with no boot "
                                        "record before it" % rec.type))
        if rec.type in ONCE_PER_BOOT and not run.mixed:
            earlier = next((r for r in run.records if r.type == rec.type), None)
            if earlier is not None:
                run.mixed = True
                run.problems.append(Problem(rec.line, MIXED_RUNS, "a second %s record (the "
                                            "first at line %d): the lines of two boots are "
                                            "interleaved here, so this run's figures mix "
                                            "them" % (rec.type, earlier.line)))
        run.records.append(rec)
        if rec.type == "end":
            run.end = rec
            self._check_end(run, rec)

    @staticmethod
    def _check_end(run, end):
        """The end record's count is what makes loss visible: compare it, check status."""
        sent = end.get("records")
        valid = len(run.records) - 1
        arrived = valid + run.damaged
        if not isinstance(sent, int) or isinstance(sent, bool):
            run.problems.append(Problem(end.line, COUNT_MISMATCH, "end record has no integer "
                                        "\"records\" (got %s)" % json.dumps(sent)))
        elif sent != arrived:
            how = "%d lost" % (sent - arrived) if sent > arrived else \
                  "%d more than sent: duplicated or foreign lines" % (arrived - sent)
            run.problems.append(Problem(end.line, COUNT_MISMATCH, "end record says %d records "
                                        "were sent, %d arrived (%d verified, %d damaged): %s"
                                        % (sent, arrived, valid, run.damaged, how)))
        if end.get("status") not in END_STATUSES:
            run.problems.append(Problem(end.line, BAD_STATUS, "end status is %s, not \"ok\" or "
                                        "\"failed\"" % json.dumps(end.get("status"))))

    def _finish(self, run, next_boot_line):
        """Close a run: it was cut by a new boot (at next_boot_line) or by end of stream."""
        if run.after_end:
            first, last = run.after_end[0].line, run.after_end[-1].line
            run.problems.append(Problem(first, AFTER_END, "%d record(s) after the end record "
                                        "(lines %d-%d) with no boot record before them"
                                        % (len(run.after_end), first, last)))
        if run.end is None and run.records:  # damage-only fragments report just the damage
            if next_boot_line is None:
                run.problems.append(Problem(self.lineno, MISSING_END, "stream ended before "
                                            "the end record of the run from line %d"
                                            % run.first_line))
            else:
                run.problems.append(Problem(next_boot_line, MISSING_END, "new boot record "
                                            "before the end record of the run from line %d "
                                            "(reboot, or the end was lost)" % run.first_line))
        run.problems.sort(key=lambda p: p.line)


def parse_stream(data):
    """Parse a whole capture (bytes) into Runs; every defect is a Problem in some Run."""
    parser = StreamParser()
    parser.feed(data)
    return parser.close()


def verdict(runs):
    """Judge a parsed capture: OK, FAILED or DAMAGED.

    OK      at least one run, every run whole, every end status "ok"
    FAILED  at least one run, every run whole, some end status "failed": the data is
            trustworthy and says the kernel's own checks failed
    DAMAGED no run at all, or some run not whole (damaged, cut, lost or extra lines, or an
            invalid end status): the capture cannot be trusted as a complete record
    """
    if not runs or not all(run.whole for run in runs):
        return DAMAGED
    return OK if all(run.status == "ok" for run in runs) else FAILED
