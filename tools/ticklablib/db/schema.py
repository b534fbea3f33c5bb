"""The tables, their version, and the steps from each version to the next.

`meta` holds `schema_version`. Opening a database runs every step from its version up to
VERSION in one transaction (under PostgreSQL an advisory lock, under SQLite the write
lock), so two `db add` that meet an old or empty database migrate it once. A database newer
than this tool is refused, never written.

Version 1: machines, logs (each capture file once, compressed), runs, records (every
verified record, as sent, in order), problems, verdicts, latency (one row per latency
series). Version 2: machines.hardware_key (the identity without firmware and microcode:
one PC across BIOS and microcode updates) and `intervals` (the figures a verdict rests on,
with their bounds); both filled for the runs already stored, from their records.
"""

import json

from . import identity

VERSION = 2
LOCK_KEY = 0x7469636B  # PostgreSQL advisory lock for migrations ("tick")

TYPES = {
    "sqlite": {"id": "INTEGER PRIMARY KEY AUTOINCREMENT", "int": "INTEGER", "real": "REAL",
               "bool": "INTEGER", "blob": "BLOB"},
    "postgresql": {"id": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", "int": "BIGINT",
                   "real": "DOUBLE PRECISION", "bool": "BOOLEAN", "blob": "BYTEA"},
}

V1 = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE machines (id {id}, machine_key TEXT NOT NULL UNIQUE, label TEXT, "
    "name TEXT NOT NULL, identity_json TEXT NOT NULL, added_utc TEXT NOT NULL)",
    "CREATE TABLE logs (id {id}, sha256 TEXT NOT NULL UNIQUE, name TEXT NOT NULL, "
    "bytes {int} NOT NULL, content {blob} NOT NULL, capture_json TEXT)",
    "CREATE TABLE runs (id {id}, run_key TEXT NOT NULL UNIQUE, "
    "machine_id {int} NOT NULL REFERENCES machines(id), log_id {int} NOT NULL REFERENCES "
    "logs(id), run_index {int} NOT NULL, first_line {int}, last_line {int}, "
    "started_utc TEXT, added_utc TEXT NOT NULL, mode TEXT NOT NULL, whole {bool} NOT NULL, "
    "status TEXT, records {int} NOT NULL, damaged {int} NOT NULL, problems {int} NOT NULL, "
    "errors {int} NOT NULL, kernel TEXT, git TEXT, boot TEXT, firmware TEXT, profile TEXT, "
    "cmdline TEXT, chosen_device TEXT, chosen_p99_ns {real}, chosen_lo_ns {real}, "
    "chosen_hi_ns {real}, calibration_ppb {real}, hpet TEXT, tsc_deadline TEXT, "
    "errata TEXT, summary_json TEXT NOT NULL)",
    "CREATE INDEX runs_machine ON runs (machine_id)",
    "CREATE TABLE records (run_id {int} NOT NULL REFERENCES runs(id), seq {int} NOT NULL, "
    "line {int} NOT NULL, type TEXT NOT NULL, exp TEXT, json TEXT NOT NULL, "
    "PRIMARY KEY (run_id, seq))",
    "CREATE TABLE problems (run_id {int} NOT NULL REFERENCES runs(id), seq {int} NOT NULL, "
    "line {int} NOT NULL, kind TEXT NOT NULL, message TEXT NOT NULL, "
    "PRIMARY KEY (run_id, seq))",
    "CREATE TABLE verdicts (run_id {int} NOT NULL REFERENCES runs(id), seq {int} NOT NULL, "
    "topic TEXT, choice TEXT, decided {bool}, claim TEXT, PRIMARY KEY (run_id, seq))",
    "CREATE TABLE latency (run_id {int} NOT NULL REFERENCES runs(id), seq {int} NOT NULL, "
    "device TEXT, path TEXT, wait TEXT, p50_ns {real}, p99_ns {real}, max_ns {real}, "
    "samples {real}, PRIMARY KEY (run_id, seq))",
)

V2 = (
    "ALTER TABLE machines ADD COLUMN hardware_key TEXT",
    "CREATE INDEX machines_hardware ON machines (hardware_key)",
    "CREATE TABLE intervals (run_id {int} NOT NULL REFERENCES runs(id), seq {int} NOT NULL, "
    "topic TEXT, what TEXT, device TEXT, value_ns {real}, lo_ns {real}, hi_ns {real}, "
    "PRIMARY KEY (run_id, seq))",
)

INTERVAL_COLUMNS = ("run_id", "seq", "topic", "what", "device", "value_ns", "lo_ns", "hi_ns")


def _fill_v2(db):
    """Version 2's columns and rows for what version 1 stored: each machine's hardware key
    from its identity, each run's intervals from its verdict records."""
    for mid, ident in db.rows("SELECT id, identity_json FROM machines"):
        db.execute("UPDATE machines SET hardware_key = ? WHERE id = ?",
                   (identity.hardware_key(json.loads(ident)), mid))
    verdicts = {}
    for run_id, text in db.rows("SELECT run_id, json FROM records WHERE type = 'verdict' "
                                "ORDER BY run_id, seq"):
        verdicts.setdefault(run_id, []).append(json.loads(text))
    db.bulk("intervals", INTERVAL_COLUMNS,
            [row for run_id, recs in verdicts.items() for row in interval_rows(run_id, recs)])


def interval_rows(run_id, verdicts):
    """The intervals table's rows for a run's verdict records."""
    from .. import summary
    out = []
    for rec in verdicts:
        for iv in summary.intervals_of(rec.get("intervals")):
            out.append((run_id, len(out), rec.get("topic") if isinstance(
                rec.get("topic"), str) else None, iv["what"], identity.device_of(iv["what"]),
                _real(iv["value_ns"]), _real(iv["lo_ns"]), _real(iv["hi_ns"])))
    return out


def _real(value):
    return float(value) if isinstance(value, (int, float)) else None


STEPS = {1: (V1, None), 2: (V2, _fill_v2)}


def version(db):
    if not db.has_table("meta"):
        return 0
    found = db.one("SELECT value FROM meta WHERE key = 'schema_version'")
    return int(found) if found is not None else 0


def migrate(db, target=VERSION):
    """Brings the database up to `target` (VERSION unless a test asks for less). Returns
    the version it found."""
    from .engine import DbError
    with db.transaction():
        if db.kind == "postgresql":
            db.execute("SELECT pg_advisory_xact_lock(?)", (LOCK_KEY,))
        found = version(db)
        if found > VERSION:
            raise DbError("%s has schema version %d; this tool knows up to %d: use a newer "
                          "ticklab" % (db.shown, found, VERSION))
        for step in range(found + 1, target + 1):
            ddl, fill = STEPS[step]
            for statement in ddl:
                db.execute(statement.format(**TYPES[db.kind]))
            if fill:
                fill(db)
            db.execute("DELETE FROM meta WHERE key = 'schema_version'")
            db.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(step),))
    return found
