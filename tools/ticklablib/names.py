"""File names derived from what records say (a record type, an experiment or device name).

A record may carry any string, so a name is never used as it came: `Stems` turns each into
a stem of letters, digits, `-` and `_`, at most 60 characters, and keeps every stem unique
(case-insensitively, for file systems that fold case) and clear of the names the tool
writes itself. A name that had to change, or that would collide, gets the CRC-32 of the
original appended, so `a/b` and `a_b` land in different files and a record of type
`records` cannot replace data/records.jsonl.
"""

import re
import zlib

MAX_STEM = 60
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class Stems:
    """Unique safe stems for one folder. reserved: stems the tool writes itself."""

    def __init__(self, reserved=()):
        self.taken = {r.lower() for r in reserved}
        self.given = {}

    def __call__(self, name, key=None):
        """The stem for `name`; `key` tells apart two things that share a name (an
        experiment's file "result-x" and a record type "result-x"): same key, same stem."""
        name = str(name)
        key = name if key is None else key
        if key in self.given:
            return self.given[key]
        stem = _UNSAFE.sub("_", name)[:MAX_STEM] or "_"
        if stem != name or stem.lower() in self.taken:
            stem = "%s-%08x" % (stem[:MAX_STEM - 9], zlib.crc32(name.encode("utf-8",
                                                                           "replace")))
        n = 1
        base = stem
        while stem.lower() in self.taken:  # a CRC collision, or a name chosen to look like one
            n += 1
            stem = "%s-%d" % (base, n)
        self.taken.add(stem.lower())
        self.given[key] = stem
        return stem
