"""Which PC a run came from: its machine identity.

The identity is what the kernel's records say of the machine, never a serial number (the
kernel does not send one): the SMBIOS system (manufacturer, product, version), baseboard
(manufacturer, product, version) and BIOS (vendor, version, date), the CPU by CPUID
(vendor, brand, family, model, stepping) and its microcode revision, and the label given at
`db add --machine-name`. Every run of one PC has the same identity; two PCs of one model
differ where any of these differ. Two identical PCs with identical firmware have one
identity unless labelled apart (docs/host-tool.md). A run from a kernel that sends no
`smbios` record is identified by its CPU alone (`basis`).

machine_key: a hash of the whole identity; hardware_key: the same without the BIOS and the
microcode, so that one PC keeps its hardware key across firmware updates.
"""

import hashlib
import json

SYSTEM = ("manufacturer", "product", "version")
BOARD = ("manufacturer", "product", "version")
BIOS = ("vendor", "version", "date")
CPU = ("vendor", "brand", "family", "model", "stepping")
FIRMWARE_PARTS = ("bios", "microcode")
INTERVAL_SUFFIX = " callback p99"   # the kernel's verdict intervals: "<device> callback p99"


def _pick(obj, keys):
    if not isinstance(obj, dict):
        return None
    return {k: obj.get(k) if isinstance(obj.get(k), (str, int)) else None for k in keys}


def of_run(data, label=None):
    """The identity of a run (dataset.RunData) as a JSON-ready dict."""
    smbios, cpu = data.one("smbios"), data.one("cpu")
    present = smbios.get("present") is True
    micro = cpu.get("microcode")
    return {
        "basis": "smbios and cpuid" if present else "cpuid only (no smbios record)",
        "system": _pick(smbios.get("system"), SYSTEM) if present else None,
        "baseboard": _pick(smbios.get("baseboard"), BOARD) if present else None,
        "bios": _pick(smbios.get("bios"), BIOS) if present else None,
        "cpu": _pick(cpu, CPU) if cpu else None,
        "microcode": micro if isinstance(micro, str) else None,
        "label": label or None,
    }


def _digest(obj):
    text = json.dumps(obj, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


def machine_key(ident):
    return _digest(ident)


def hardware_key(ident):
    return _digest({k: v for k, v in ident.items() if k not in FIRMWARE_PARTS})


def _words(*parts):
    return " ".join(p.strip() for p in parts if isinstance(p, str) and p.strip())


def name(ident):
    """The machine as people name it: its label, else the SMBIOS system (and board when the
    system says nothing useful), else the CPU."""
    if ident.get("label"):
        return ident["label"]
    system, board, cpu = ident.get("system") or {}, ident.get("baseboard") or {}, \
        ident.get("cpu") or {}
    text = _words(system.get("manufacturer"), system.get("product"), system.get("version"))
    if not text or text.lower().startswith(("to be filled", "system manufacturer")):
        text = _words(board.get("manufacturer"), board.get("product")) or text
    return text or _words(cpu.get("brand")) or "unknown machine"


def firmware(ident):
    """BIOS version and date, and microcode, in one line."""
    bios = ident.get("bios") or {}
    parts = [_words(bios.get("vendor"), bios.get("version"), bios.get("date"))]
    if ident.get("microcode"):
        parts.append("microcode %s" % ident["microcode"])
    return ", ".join(p for p in parts if p) or "-"


def device_of(what):
    """The clock event device an interval of the kernel's verdict is about, or None."""
    if isinstance(what, str) and what.endswith(INTERVAL_SUFFIX):
        return what[:-len(INTERVAL_SUFFIX)] or None
    return None
