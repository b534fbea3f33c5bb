"""Logs for the database tests: the real quick-profile captures of fixtures/, and runs made
from them with another machine's identity (an `smbios` record of its own, another
microcode) and another start time, written as the kernel writes them."""
import gzip
import json
import os
import zlib

from ticklablib import records

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
EXACT = "icount0-quick-11204e5.log"     # with raw samples and the verdicts' intervals
PLAIN = "tcg-quick-f7e080e-1.log"
SMBIOS = "icount0-quick-smbios.log"     # a kernel that sends the smbios record


def fixture_records(name):
    with gzip.open(os.path.join(FIXTURES, name + ".gz"), "rb") as f:
        run = records.parse_stream(f.read())[0]
    return [dict(r) for r in run.records]


def capture_record(name):
    with open(os.path.join(FIXTURES, name + ".capture.json"), encoding="utf-8") as f:
        return json.load(f)


def smbios(product, bios_version="1.0", board="B-1", manufacturer="Acme Lab"):
    return {"type": "smbios", "present": True, "source": "bios_scan", "reason": None,
            "entry_point": "3.0", "version": "3.6",
            "system": {"manufacturer": manufacturer, "product": product, "version": "v1",
                       "sku": "", "family": ""},
            "baseboard": {"manufacturer": "BoardCo", "product": board, "version": "1"},
            "bios": {"vendor": "LabBIOS", "version": bios_version, "date": "01/02/2026",
                     "release": None},
            "processors": 1, "withheld": "serial numbers, asset tags and the system UUID"}


def as_machine(recs, ident=None, microcode=None, p99_scale=1.0):
    """The records with an smbios record (replacing any) after the cpu record, another
    microcode, the verdicts' intervals scaled, and the end count made right."""
    out = []
    for rec in recs:
        rec = json.loads(json.dumps(rec))
        if rec["type"] == "smbios":
            continue
        if rec["type"] == "cpu" and microcode:
            rec["microcode"] = microcode
        if rec["type"] == "verdict" and isinstance(rec.get("intervals"), list):
            for iv in rec["intervals"]:
                for k in ("value_ns", "lo_ns", "hi_ns"):
                    iv[k] = int(iv[k] * p99_scale)
        out.append(rec)
        if rec["type"] == "cpu" and ident:
            out.append(ident)
    out[-1] = dict(out[-1], records=len(out) - 1)
    return out


def line(obj):
    """One record line; \\uXXXX escapes, so that even a lone surrogate can be sent."""
    payload = json.dumps(obj, separators=(",", ":")).encode("ascii")
    return b"TLR %08x %s\n" % (zlib.crc32(payload), payload)


def write_log(path, recs, capture=None):
    """A log of the records (and its capture record beside it, when given)."""
    with open(path, "wb") as f:
        f.write(b"".join(line(r) for r in recs))
    if capture is not None:
        with open(str(path) + ".capture.json", "w", encoding="utf-8") as f:
            json.dump(capture, f)
    return str(path)


def copy_fixture(folder, name):
    """A fixture log and its capture record, unpacked into folder."""
    path = os.path.join(str(folder), name)
    with gzip.open(os.path.join(FIXTURES, name + ".gz"), "rb") as f, open(path, "wb") as out:
        out.write(f.read())
    with open(path + ".capture.json", "w", encoding="utf-8") as f:
        json.dump(capture_record(name), f)
    return path
