"""What the database holds, per machine and per run, for `db list`, `db show` and the page."""

import json
from dataclasses import dataclass, field

from . import identity

RUN_FIELDS = ("id", "machine_id", "started_utc", "added_utc", "mode", "whole", "status",
              "records", "problems", "errors", "kernel", "git", "profile", "chosen_device",
              "chosen_p99_ns", "chosen_lo_ns", "chosen_hi_ns", "calibration_ppb", "hpet",
              "tsc_deadline", "errata", "run_index", "log_name")


@dataclass
class Machine:
    id: int
    key: str
    hardware_key: str
    label: str
    name: str
    identity: dict
    runs: list = field(default_factory=list)   # dicts of RUN_FIELDS, oldest first

    @property
    def last(self):
        return self.runs[-1] if self.runs else {}

    @property
    def modes(self):
        return list(dict.fromkeys(r["mode"] for r in self.runs))

    def latest(self, mode):
        found = [r for r in self.runs if r["mode"] == mode]
        return found[-1] if found else None


def when(run):
    """A run's time: when its capture started, else when it was added."""
    return run["started_utc"] or run["added_utc"]


def machines(db):
    """Every machine with its runs (in time order), in the order they were first added."""
    out = {}
    for row in db.rows("SELECT id, machine_key, hardware_key, label, name, identity_json "
                       "FROM machines ORDER BY id"):
        out[row[0]] = Machine(row[0], row[1], row[2], row[3], row[4], json.loads(row[5]))
    cols = ", ".join("r." + f for f in RUN_FIELDS[:-1]) + ", l.name"
    for row in db.rows("SELECT %s FROM runs r JOIN logs l ON l.id = r.log_id ORDER BY r.id"
                       % cols):
        run = dict(zip(RUN_FIELDS, row))
        run["whole"] = bool(run["whole"])
        if run["machine_id"] in out:
            out[run["machine_id"]].runs.append(run)
    for m in out.values():
        m.runs.sort(key=lambda r: (when(r), r["id"]))
    return [m for m in out.values() if m.runs]


def find(found, word):
    """The machine `word` names: its number, a prefix of its key, or its label or name
    (case ignored). Returns (machine or None, [candidates when ambiguous])."""
    if word.isdigit():
        hit = [m for m in found if m.id == int(word)]
        if hit:
            return hit[0], []
    low = word.lower()
    for test in (lambda m: m.key.startswith(low),
                 lambda m: (m.label or "").lower() == low,
                 lambda m: m.name.lower() == low,
                 lambda m: low in m.name.lower()):
        hit = [m for m in found if test(m)]
        if len(hit) == 1:
            return hit[0], []
        if hit:
            return None, hit
    return None, []


def counts(db):
    return {"machines": db.one("SELECT COUNT(*) FROM machines"),
            "runs": db.one("SELECT COUNT(*) FROM runs"),
            "logs": db.one("SELECT COUNT(*) FROM logs"),
            "records": db.one("SELECT COUNT(*) FROM records")}


def intervals(db, run_ids):
    """{run id: [(device, value, lo, hi)]} of the clockevent verdict's intervals."""
    out = {}
    ids = sorted(set(run_ids))
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for run_id, device, value, lo, hi in db.rows(
                "SELECT run_id, device, value_ns, lo_ns, hi_ns FROM intervals WHERE topic = "
                "'clockevent' AND run_id IN (%s) ORDER BY run_id, seq" % ", ".join(
                    "?" * len(chunk)), chunk):
            if device:
                out.setdefault(run_id, []).append((device, value, lo, hi))
    return out


def ns_text(value):
    if value is None:
        return "-"
    for unit, scale in (("ms", 1e6), ("us", 1e3)):
        if abs(value) >= scale:
            return "%.3g %s" % (value / scale, unit)
    return "%d ns" % round(value)


def chosen_text(run):
    """"hpet p99 12.3 us [11.9 us, 12.8 us]", or what the verdict said instead."""
    device = run.get("chosen_device")
    if not device:
        return "not measured"
    if run.get("chosen_p99_ns") is None:
        return device
    head = "too close to call (fastest p99" if device == "too_close" else "%s p99" % device
    return "%s %s [%s, %s]%s" % (head, ns_text(run["chosen_p99_ns"]),
                                 ns_text(run["chosen_lo_ns"]), ns_text(run["chosen_hi_ns"]),
                                 ")" if device == "too_close" else "")


def ppb_text(value):
    return "-" if value is None else ("%.0f ppb" % value if abs(value) < 10000 else
                                      "%.1f ppm" % (value / 1000))


def machine_line(m):
    """The columns of one machine's row in `db list` and on the page."""
    last = m.last
    return [str(m.id), m.key[:8], m.name, identity.firmware(m.identity), str(len(m.runs)),
            when(last), last["mode"], chosen_text(last), ppb_text(last["calibration_ppb"]),
            last["hpet"] or "-", last["tsc_deadline"] or "-", last["errata"] or "-",
            problems_text(m.runs)]


MACHINE_HEADER = ["#", "key", "machine", "firmware", "runs", "last run", "mode",
                  "clock event device (last run)", "calibration", "hpet", "tsc-deadline",
                  "errata", "problems"]


def problems_text(runs):
    bad = sum(not r["whole"] for r in runs)
    probs = sum(r["problems"] for r in runs)
    errs = sum(r["errors"] for r in runs)
    failed = sum(r["status"] == "failed" for r in runs)
    parts = ["%d not whole" % bad if bad else "", "%d failed" % failed if failed else "",
             "%d problem(s)" % probs if probs else "", "%d error record(s)" % errs if errs else ""]
    return ", ".join(p for p in parts if p) or "none"


RUN_HEADER = ["run", "when", "mode", "log", "kernel", "profile", "state",
              "clock event device", "calibration", "hpet", "tsc-deadline", "problems"]


def run_line(run):
    state = ("whole" if run["whole"] else "NOT whole") + (", %s" % run["status"]
                                                           if run["status"] else "")
    return [str(run["id"]), when(run), run["mode"], "%s#%d" % (run["log_name"],
                                                               run["run_index"]),
            run["kernel"] or "-", run["profile"] or "-", state, chosen_text(run),
            ppb_text(run["calibration_ppb"]), run["hpet"] or "-", run["tsc_deadline"] or "-",
            problems_text([run])]
