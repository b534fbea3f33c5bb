"""Reading a capture, as every subcommand that reads one does: a file, a gzipped file (the
committed fixtures are .log.gz; told by its magic bytes, not its name), or "-" for standard
input; and what to call a file that holds no run because it is empty or is not a capture at
all, rather than "damaged".
"""

import gzip
import os
import sys
import zlib

STDIN = "-"
GZIP_MAGIC = b"\x1f\x8b"
# Bytes that never occur in a serial capture's text: C0 controls other than tab, line
# ends, form feed and escape (GRUB's and OVMF's escape codes are text here), and DEL.
_TEXT_SET = {bytes([b]) for b in list(range(0x20, 0x7F)) + [0x09, 0x0A, 0x0D, 0x0C, 0x1B]}
BINARY_SHARE = 0.3    # more than this share of other bytes in the first 64 KiB: not a capture
SNIFF = 65536


class InputError(Exception):
    """The capture cannot be read (a usage-class failure: exit 3)."""


def name_of(path):
    """How the capture is named in messages."""
    return "<stdin>" if path == STDIN else path


def read(path):
    """The capture's bytes, gunzipped when they are gzip's; raises InputError."""
    try:
        if path == STDIN:
            raw = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                raw = f.read()
    except OSError as e:
        raise InputError("cannot read %s: %s" % (name_of(path), e.strerror or e)) from e
    if raw[:2] == GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as e:
            raise InputError("%s is gzip data that does not decompress: %s"
                             % (name_of(path), e)) from e
    return raw


def what_it_is(raw):
    """None for something that may hold records; else why it holds no run, in words:
    "empty (0 bytes)", or "binary, not a capture (...)"."""
    if not raw:
        return "empty (0 bytes)"
    head = raw[:SNIFF]
    # bytes >= 0x80 are text where they form UTF-8 (a record's strings); the rest, and
    # control bytes, are not
    text = head.decode("utf-8", "replace")
    other = text.count("\ufffd") + sum(1 for c in text if ord(c) < 0x80 and c.encode()
                                       not in _TEXT_SET)
    if other > BINARY_SHARE * len(text):
        return ("binary, not a capture (%d %% of its first %d bytes are not text)"
                % (round(100.0 * other / len(text)), len(head)))
    return None


def capture_record_paths(path):
    """Where the capture record of `path` may be: LOG.capture.json, and for LOG.gz also
    LOG's (a gzipped capture keeps the record written for the plain log)."""
    if path == STDIN:
        return []
    out = [path]
    if path.endswith(".gz"):
        out.append(path[:-3])
    return out


def base_name(path):
    """The capture's file name without .gz and .log: the stem of its default folders."""
    if path == STDIN:
        return "stdin"
    name = path[:-3] if path.endswith(".gz") else path
    return name[:-4] if name.endswith(".log") else name


def exists(path):
    return path == STDIN or os.path.exists(path)
