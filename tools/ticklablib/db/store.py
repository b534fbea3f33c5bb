"""`db add`: every run of a capture into the database, whole.

A run is stored with every verified record as sent (in order, with its capture line), its
problems, the capture file itself (compressed, once however many runs it holds), its
capture record, the summary `report` would write, and the figures the cross-machine page
reads (its verdicts, their intervals, its latency series). A damaged run is stored like a
whole one, with its problems; a run with no verified record has nothing to store and is
named.

A run is the same run when its records are: its key is a hash of its verified records
(and, when the log has a capture record, the capture's start and the run's place in the
log). Adding a log again, or the QR-decoded copy of a run whose serial capture is stored,
stores nothing new. Each run is one transaction: several `db add` at once are safe (SQLite
queues writers; PostgreSQL's unique keys make the second writer of a run find the first's).
"""

import datetime
import hashlib
import json
import os
import zlib

from .. import check, dataset, inputs, provenance, records, summary
from . import identity, schema

# The kinds of figures (provenance.mode_of) as the database names them.
MODES = {"icount": "exact", "tcg": "emulation", "kvm": "kvm", "hardware": "hardware",
         "other-vm": "other-vm"}
UNKNOWN_MODE = "unknown"

RUN_COLUMNS = ("run_key", "machine_id", "log_id", "run_index", "first_line", "last_line",
               "started_utc", "added_utc", "mode", "whole", "status", "records", "damaged",
               "problems", "errors", "kernel", "git", "boot", "firmware", "profile",
               "cmdline", "chosen_device", "chosen_p99_ns", "chosen_lo_ns", "chosen_hi_ns",
               "calibration_ppb", "hpet", "tsc_deadline", "errata", "summary_json")


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def log_files(paths):
    """The logs named: files as given, folders searched (below them too) for *.log and
    *.log.gz."""
    out = []
    for path in paths:
        if not os.path.isdir(path):
            out.append(path)
            continue
        for root, dirs, files in os.walk(path):
            dirs.sort()
            out += [os.path.join(root, f) for f in sorted(files) if f.endswith((".log", ".log.gz"))]
    return out


def _json(obj):
    return json.dumps(obj, ensure_ascii=True, separators=(",", ":"), default=str)


def run_key(texts, data, capture):
    """texts: the run's records as stored (their keys in the order sent, so the same record
    lines give the same text)."""
    h = hashlib.sha256()
    for text in texts:
        h.update(text.encode("ascii") + b"\n")
    if capture and isinstance(capture.get("started_utc"), str):
        h.update(b"\0capture %s run %d" % (capture["started_utc"].encode("utf-8", "replace"),
                                          data.index))
    return h.hexdigest()


def _real(value):
    """A figure as a float column holds it (a huge integer too), or None."""
    value = dataset.num(value)
    return float(value) if value is not None else None


def _text(value):
    return value if isinstance(value, str) else (None if value is None else dataset.cell(value))


def chosen(verdicts):
    """(device, p99, lo, hi) from the clockevent verdict: its choice, and the interval of
    that device (of the fastest, first listed, when too close to call)."""
    for rec in verdicts:
        if rec.get("topic") != "clockevent":
            continue
        ivs = summary.intervals_of(rec.get("intervals"))
        choice = _text(rec.get("choice"))
        mine = [i for i in ivs if identity.device_of(i["what"]) == choice] or ivs[:1]
        if mine:
            return choice, _real(mine[0]["value_ns"]), _real(mine[0]["lo_ns"]), \
                _real(mine[0]["hi_ns"])
        return choice, None, None, None
    return None, None, None, None


def calibration_spread(data):
    """How far the TSC's references disagree: the largest |disagreement_ppb|, or None."""
    found = [abs(v) for v in (dataset.num(r.get("disagreement_ppb"))
                              for r in data.by_type.get("calibration", [])
                              if r.get("target") == "tsc" and r.get("status") == "ok")
             if v is not None]
    return float(max(found)) if found else None


def errata(data):
    out = []
    for rec in data.by_type.get("clockevent", []):
        state = rec.get("erratum")
        if isinstance(state, str) and state != "none":
            out.append("%s erratum %s" % (_text(rec.get("name")), state))
    return ", ".join(dict.fromkeys(out)) or None


def verdict_of(verdicts, topic):
    return next((_text(v.get("choice")) for v in verdicts if v.get("topic") == topic), None)


def run_values(data, summ, capture, key, machine_id, log_id):
    """The runs table's row for one run."""
    boot, verdicts = data.boot, data.by_type.get("verdict", [])
    device, p99, lo, hi = chosen(verdicts)
    return (key, machine_id, log_id, data.index, data.run.first_line, data.run.last_line,
            (capture or {}).get("started_utc") if isinstance((capture or {}).get(
                "started_utc"), str) else None, now_utc(),
            MODES.get(summ["environment"]["mode"], UNKNOWN_MODE), bool(data.run.whole),
            _text(data.run.status), len(data.run.records), data.run.damaged,
            len(data.run.problems), len(data.by_type.get("error", [])),
            _text(boot.get("version")), _text(boot.get("git")), _text(boot.get("boot")),
            _text(boot.get("firmware")), _text(boot.get("profile")), _text(boot.get("cmdline")),
            device, p99, lo, hi, calibration_spread(data), verdict_of(verdicts, "hpet"),
            verdict_of(verdicts, "tsc_deadline"), errata(data), _json(summ))


def _machine_id(db, ident):
    key = identity.machine_key(ident)
    found = db.one("SELECT id FROM machines WHERE machine_key = ?", (key,))
    if found is not None:   # asked first: a refused insert would use up an id
        return found, key
    db.execute("INSERT INTO machines (machine_key, hardware_key, label, name, identity_json, "
               "added_utc) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (machine_key) DO NOTHING",
               (key, identity.hardware_key(ident), ident.get("label"), identity.name(ident),
                _json(ident), now_utc()))
    return db.one("SELECT id FROM machines WHERE machine_key = ?", (key,)), key


def _log_id(db, log):
    found = db.one("SELECT id FROM logs WHERE sha256 = ?", (log["sha256"],))
    if found is not None:
        return found
    db.execute("INSERT INTO logs (sha256, name, bytes, content, capture_json) VALUES "
               "(?, ?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING",
               (log["sha256"], log["name"], len(log["raw"]), zlib.compress(log["raw"], 6),
                _json(log["capture"]) if log["capture"] is not None else None))
    return db.one("SELECT id FROM logs WHERE sha256 = ?", (log["sha256"],))


def _children(db, run_id, data, summ, texts):
    db.bulk("records", ("run_id", "seq", "line", "type", "exp", "json"),
            [(run_id, i, rec.line, rec.type, _text(rec.get("exp")), text)
             for i, (rec, text) in enumerate(zip(data.run.records, texts))])
    db.bulk("problems", ("run_id", "seq", "line", "kind", "message"),
            [(run_id, i, p.line, p.kind, p.message) for i, p in enumerate(data.run.problems)])
    verdicts = data.by_type.get("verdict", [])
    db.bulk("verdicts", ("run_id", "seq", "topic", "choice", "decided", "claim"),
            [(run_id, i, _text(v.get("topic")), _text(v.get("choice")),
              v.get("decided") if isinstance(v.get("decided"), bool) else None,
              _text(v.get("claim"))) for i, v in enumerate(verdicts)])
    db.bulk("intervals", schema.INTERVAL_COLUMNS, schema.interval_rows(run_id, verdicts))
    db.bulk("latency", ("run_id", "seq", "device", "path", "wait", "p50_ns", "p99_ns",
                        "max_ns", "samples"),
            [(run_id, i, _text(r.get("device")), _text(r.get("path")), _text(r.get("wait")),
              _real(r.get("p50_ns")), _real(r.get("p99_ns")), _real(r.get("max_ns")),
              _real(r.get("samples"))) for i, r in enumerate(summ["latency"])])


def run_summary(data, runs, log):
    """What `report`'s summary.json says of the run, but the raw samples' census (the
    samples themselves are among the records)."""
    env = provenance.describe(log["capture"], data.boot, data.one("cpu"),
                              data.one("environment"))
    if log["capture_problem"]:
        env["warnings"].append(log["capture_problem"])
    return {"log": log["name"], "capture_verdict": records.verdict([data.run]),
            "run": summary.run_state(data, runs), "environment": env,
            "capture": log["capture"], "settings": summary.settings(data),
            "latency": summary.latency_rows(data), "impossible": summary.impossible(data),
            "unmet": check.unmet([data.run]), "verdict": summary.verdict_lines(data),
            "experiments": [{"exp": s.name, "state": s.state, "note": s.describe(),
                             "rows": len(s.rows), "errors": len(s.errors)}
                            for s in data.experiments()],
            "problems": [{"line": p.line, "kind": p.kind, "message": p.message}
                         for p in data.run.problems]}


def store_run(db, data, runs, log, label):
    """Stores one run. Returns ("stored" or "already", run id, machine key)."""
    summ = run_summary(data, runs, log)
    ident = identity.of_run(data, label)
    texts = [_json(rec) for rec in data.run.records]
    key = run_key(texts, data, log["capture"])
    with db.transaction():
        found = db.one("SELECT id FROM runs WHERE run_key = ?", (key,))
        if found is not None:
            return "already", found, None
        machine_id, machine_key = _machine_id(db, ident)
        log_id = _log_id(db, log)
        run_id = db.one("INSERT INTO runs (%s) VALUES (%s) ON CONFLICT (run_key) DO NOTHING "
                        "RETURNING id" % (", ".join(RUN_COLUMNS), ", ".join("?" * len(
                            RUN_COLUMNS))),
                        run_values(data, summ, log["capture"], key, machine_id, log_id))
        if run_id is None:   # another `db add` stored it a moment ago
            return "already", db.one("SELECT id FROM runs WHERE run_key = ?", (key,)), None
        _children(db, run_id, data, summ, texts)
    return "stored", run_id, machine_key


def read_log(path):
    """The log's bytes (gunzipped when it is gzip's) and parsed runs, and its capture
    record. inputs.InputError propagates."""
    raw = inputs.read(path)
    capture, problem = provenance.load(path)
    name = os.path.basename(path)
    runs = records.parse_stream(raw)
    return {"name": name, "raw": raw, "sha256": hashlib.sha256(raw).hexdigest(),
            "capture": capture, "capture_problem": problem,
            "runs": runs, "datas": [dataset.group(r, i, name) for i, r in enumerate(runs, 1)]}


def add_log(db, path, label, say):
    """Stores every run of one log; says one line per run. Returns [(state, run id)], state
    "stored", "already" or "empty" (a run without a verified record)."""
    log = read_log(path)
    out = []
    if not log["datas"]:
        say("%s: no run in it (no record line): nothing stored" % path)
        return [("empty", None)]
    for data in log["datas"]:
        where = "%s run %d" % (path, data.index)
        if not data.run.records:
            say("%s: no verified record (%d problem(s)): nothing to store" % (
                where, len(data.run.problems)))
            out.append(("empty", None))
            continue
        state, run_id, mkey = store_run(db, data, log["runs"], log, label)
        if state == "already":
            say("%s: already stored as run %s" % (where, run_id))
        else:
            damage = "" if data.run.whole else ", NOT whole: %d problem(s) stored with it" % (
                len(data.run.problems))
            say("%s: stored as run %s, machine %s%s" % (where, run_id, mkey[:8], damage))
        out.append((state, run_id))
    return out
