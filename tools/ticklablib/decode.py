"""`ticklab decode IMAGE...`: the QR codes of a run's last screen back into a record log.

A PC without a serial port shows its records at the end of the run as numbered QR codes
(kernel/report/qrscreen.c; the part format is in docs/report-format.md, "QR parts"). Photos
or screenshots of them (PNG, PPM, JPEG: whatever zbarimg reads) are read with zbar; a
photo zbar cannot read as it is (taken a little off square, blurred, unevenly lit) is
straightened first (photo.py: OpenCV finds the code and undoes the perspective) and read
again. The parts are checked (each its CRC-32), put in order by their number, joined,
decompressed (zlib) and checked against the CRC-32 of the record bytes the kernel put in
every part; the result is written as a log that `check` and `report` read like a serial
capture.

Duplicates (the same part photographed twice, or the screen's next round) do no harm. A
missing part is named ("part 3 of 7 missing"); parts of two runs are told apart by their
run id and never mixed; a damaged code is named and left out.
"""

import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

from . import EXIT_USAGE, photo

NAME = "decode"
HELP = "read photos or screenshots of the last screen's QR codes back into a record log"

MAGIC = b"TQ"
FORMAT = 1
HEAD = struct.Struct("<2sBBIHHIII")     # magic, format, flags, run id, k, n, offset, length, crc
TAIL = 4
FLAG_PARTIAL = 1
ZBAR = ["zbarimg", "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", "-Sbinary"]

EPILOG = """\
exit status:
  0  every part of one run was read and the records verified (their CRC-32 and zlib's)
  1  parts are missing or damaged, or the images hold parts of several runs (--run picks
     one), or the kernel's own store had overflowed (the log is written, check reports it)
  3  usage error, an image cannot be read, zbarimg is missing, or LOG exists (--force)
"""


class Part:
    __slots__ = ("flags", "run_id", "k", "n", "offset", "length", "records_crc", "data",
                 "source")

    def __init__(self, fields, data, source):
        (_, _, self.flags, self.run_id, self.k, self.n, self.offset, self.length,
         self.records_crc) = fields
        self.data = data
        self.source = source


def part_size(n, length, k):
    """Bytes of stream part k of n carries: the stream cut in equal slices, the last short."""
    chunk = -(-length // n)
    return max(0, min(chunk, length - (k - 1) * chunk))


def parse_parts(raw, source, problems):
    """Every ticklab part in zbar's output for one image (the symbols' bytes one after the
    other), each CRC-checked; a damaged one is named in problems and skipped."""
    parts, at = [], 0
    while True:
        at = raw.find(MAGIC + bytes([FORMAT]), at)
        if at < 0 or len(raw) - at < HEAD.size + TAIL:
            return parts
        fields = HEAD.unpack_from(raw, at)
        _, _, _, _, k, n, offset, length, _ = fields
        size = part_size(n, length, k) if 1 <= k <= n else -1
        end = at + HEAD.size + size
        if size < 0 or end + TAIL > len(raw) or offset != (k - 1) * -(-length // n):
            problems.append("%s: a code that looks like a ticklab part but whose header is "
                            "inconsistent (part %d of %d): ignored" % (source, k, n))
            at += 1
            continue
        crc = struct.unpack_from("<I", raw, end)[0]
        if zlib.crc32(raw[at:end]) != crc:
            problems.append("%s: part %d of %d is damaged (its CRC-32 does not match): "
                            "ignored" % (source, k, n))
            at += 1
            continue
        parts.append(Part(fields, raw[at + HEAD.size:end], source))
        at = end + TAIL


def read_image(path, *more):
    """(zbar's raw bytes, None) or (None, why); `more`: other images read in the same
    call (their codes' bytes follow)."""
    if not os.path.isfile(path):
        return None, "%s: no such file" % path
    try:
        p = subprocess.run(ZBAR + [path] + list(more), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
    except FileNotFoundError:
        return None, "zbarimg is missing: install Debian's zbar-tools (make deps)"
    except subprocess.TimeoutExpired:
        return None, "%s: zbarimg took more than 120 s" % path
    if p.returncode in (0, 4):  # 4: some image (maybe every one) held no code
        return p.stdout, None
    if p.returncode != 0:
        why = p.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, "%s: zbarimg cannot read it (%s)" % (path, why[-1] if why else
                                                          "exit %d" % p.returncode)
    return p.stdout, None


def group_runs(parts):
    """run id -> {k: Part}; conflicting duplicates (same run and k, other bytes) named."""
    runs, conflicts = {}, []
    for p in parts:
        have = runs.setdefault(p.run_id, {})
        old = have.get(p.k)
        if old is None:
            have[p.k] = p
        elif (old.data, old.n, old.length) != (p.data, p.n, p.length):
            conflicts.append("part %d of run %08x differs between %s and %s" %
                             (p.k, p.run_id, old.source, p.source))
    return runs, conflicts


def assemble(have):
    """(records bytes, problems, partial flag) from one run's parts {k: Part}."""
    first = next(iter(have.values()))
    n, length, crc = first.n, first.length, first.records_crc
    problems = []
    odd = [p for p in have.values() if (p.n, p.length, p.records_crc) != (n, length, crc)]
    if odd:
        return None, ["the parts of run %08x disagree on its size (%s)" %
                      (first.run_id, ", ".join(sorted({p.source for p in odd})))], False
    missing = [k for k in range(1, n + 1) if k not in have]
    for k in missing:
        problems.append("part %d of %d missing" % (k, n))
    if missing:
        return None, problems, False
    stream = b"".join(have[k].data for k in range(1, n + 1))
    try:
        data = zlib.decompress(stream)
    except zlib.error as e:
        return None, ["the joined parts do not decompress (%s)" % e], False
    if zlib.crc32(data) != crc:
        return None, ["the decompressed records do not match the kernel's CRC-32"], False
    return data, problems, bool(first.flags & FLAG_PARTIAL)


def register(subparsers):
    p = subparsers.add_parser(NAME, help=HELP, description=HELP[0].upper() + HELP[1:] + ".",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("images", metavar="IMAGE", nargs="+",
                   help="photos or screenshots of the codes, in any order (PNG, PPM, JPEG; "
                   '"-": one image on standard input)')
    p.add_argument("-o", "--output", metavar="LOG", default="ticklab-qr.log",
                   help="the record log to write (default: ticklab-qr.log)")
    p.add_argument("--run", metavar="ID", help="the run id (8 hex digits) to decode when the "
                   "images hold codes of several runs")
    p.add_argument("--force", action="store_true", help="overwrite LOG")
    p.set_defaults(func=run)


def read_parts(path, work):
    """The parts in one image: zbar on the image as it is, and where that finds no whole
    part, on its straightened code(s) (photo.py). Returns (parts, problems) or raises
    ValueError with why the image cannot be read."""
    raw, why = read_image(path)
    if why:
        raise ValueError(why)
    problems = []
    found = parse_parts(raw, path, problems)
    if found or not photo.available():
        return found, problems
    for binarize in (False, True):   # the straight code as it is, then in black and white
        squares = photo.straightened(path, work, binarize)
        if not squares:
            break
        raw, why = read_image(*squares)
        if why:
            continue
        later = []
        found = unique(parse_parts(raw, path, later))
        if found:
            return found, []   # the photo's own misreads are moot now
        problems += [p for p in later if p not in problems]
    return found, problems


def unique(parts):
    """Each part once (a straightened square is read plain and thresholded)."""
    out, seen = [], set()
    for p in parts:
        key = (p.run_id, p.k, p.data)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def run(args):
    if os.path.exists(args.output) and not args.force:
        print("decode: %s exists (--force to overwrite)" % args.output, file=sys.stderr)
        return EXIT_USAGE
    parts, problems = [], []
    work = tempfile.mkdtemp(prefix="ticklab-decode-")
    try:
        for path in args.images:
            if path == "-":   # one image on standard input
                path = os.path.join(work, "stdin-image")
                with open(path, "wb") as f:
                    f.write(sys.stdin.buffer.read())
            try:
                found, said = read_parts(path, work)
            except ValueError as e:
                print("decode: %s" % e, file=sys.stderr)
                return EXIT_USAGE
            problems += said
            if not found and not any(s.startswith(path + ":") for s in said):
                problems.append("%s: no ticklab QR code found" % path)
            parts += found
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not photo.available():
        print("decode: python3-opencv is not installed: pictures are read by zbar alone, "
              "which misses codes photographed off square (make deps installs it)",
              file=sys.stderr)
    runs, conflicts = group_runs(parts)
    problems += conflicts
    for s in problems:
        print("decode: " + s, file=sys.stderr)
    if not runs:
        print("decode: no part of any run was read", file=sys.stderr)
        return 1
    if args.run:
        try:
            want = int(args.run, 16)
        except ValueError:
            print("decode: --run wants 8 hex digits, not %r" % args.run, file=sys.stderr)
            return EXIT_USAGE
        if want not in runs:
            print("decode: no part of run %s in the images (runs: %s)" %
                  (args.run, ", ".join("%08x" % r for r in sorted(runs))), file=sys.stderr)
            return 1
        runs = {want: runs[want]}
    if len(runs) > 1:
        for rid, have in sorted(runs.items()):
            n = next(iter(have.values())).n
            print("decode: run %08x: parts %s of %d (%s)" % (
                rid, ",".join(str(k) for k in sorted(have)), n,
                ", ".join(sorted({p.source for p in have.values()}))), file=sys.stderr)
        print("decode: the images hold codes of %d runs: give --run ID, or decode each "
              "run's photos apart" % len(runs), file=sys.stderr)
        return 1
    rid, have = next(iter(runs.items()))
    data, more, partial = assemble(have)
    for s in more:
        print("decode: run %08x: %s" % (rid, s), file=sys.stderr)
    if data is None:
        return 1
    with open(args.output, "wb") as f:
        f.write(data)
    n = next(iter(have.values())).n
    print("decode: run %08x: %d parts, %d bytes of records (%d lines) -> %s" %
          (rid, n, len(data), data.count(b"\n"), args.output))
    if partial:
        print("decode: the kernel's record store was full: records are missing from the "
              "codes (check counts them against the end record)", file=sys.stderr)
        return 1
    return 1 if conflicts else 0
