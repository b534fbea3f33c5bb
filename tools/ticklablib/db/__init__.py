"""`ticklab db`: every run of many PCs in one database, and a page across machines.

  db add LOG|DIR... [--machine-name NAME]   store every run of each log (a folder: its *.log)
  db list                                   one line per machine
  db show MACHINE                           one machine: its identity and every run
  db report [-o DIR] [--force]              the page across machines

The database is `--db TARGET`: a SQLite file (default $TICKLAB_DB, else ticklab.sqlite in
the current folder), or a PostgreSQL database named by a libpq URI
(postgresql://user@host/db, ?host=/socket/dir for a unix socket). engine.py connects,
schema.py keeps the tables and their version, identity.py says which PC a run came from,
store.py adds runs, query.py reads them back, page.py draws the page.
"""

import argparse
import os
import sys

from .. import EXIT_USAGE, inputs
from . import engine, query, schema, store

NAME = "db"
HELP = "keep runs of many PCs in a database (SQLite or PostgreSQL) and report across them"
DEFAULT_FILE = "ticklab.sqlite"

EPILOG = """\
the database: --db TARGET, else $TICKLAB_DB, else ./%s (SQLite). A TARGET that starts
with postgresql:// is a PostgreSQL database (python3-psycopg): postgresql://user@host/db,
postgresql://user@/db?host=/run/postgresql; a password there or in PGPASSFILE is never
printed or stored.
exit status: 0 done; 1 (add) a log held no run to store; 3 usage error, unreadable log,
database error""" % DEFAULT_FILE


def register(subparsers):
    p = subparsers.add_parser(NAME, help=HELP, description=HELP[0].upper() + HELP[1:] + ".",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="db_command", metavar="ACTION", parser_class=type(p))
    sub.required = True

    def action(name, help_):
        a = sub.add_parser(name, help=help_, description=help_[0].upper() + help_[1:] + ".",
                           epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
        a.add_argument("--db", metavar="TARGET", help="SQLite file or postgresql:// URI")
        return a

    a = action("add", "store every run of each log (a folder: every *.log below it)")
    a.add_argument("paths", nargs="+", metavar="LOG|DIR")
    a.add_argument("--machine-name", metavar="NAME",
                   help="a label that tells this PC apart from others of identical make and "
                   "firmware (part of its identity)")
    a.set_defaults(func=run_add)
    action("list", "one line per machine").set_defaults(func=run_list)
    a = action("show", "one machine: its identity and every run")
    a.add_argument("machine", metavar="MACHINE", help="its number, key (a prefix), label or name")
    a.set_defaults(func=run_show)
    a = action("report", "the page across machines")
    a.add_argument("-o", "--output", metavar="DIR",
                   help="output folder (default: the SQLite file without its extension + "
                   "-report, or ticklab-db-report)")
    a.add_argument("--force", action="store_true", help="replace DIR if it holds an earlier "
                   "ticklab report")
    a.set_defaults(func=run_report)
    p.set_defaults(func=lambda args: EXIT_USAGE)


def target_of(args):
    return args.db or os.environ.get("TICKLAB_DB") or DEFAULT_FILE


def _open(args, create):
    db = engine.Database(target_of(args), create=create)
    try:
        schema.migrate(db)
    except db.errors as e:
        db.close()
        raise engine.DbError("%s: %s" % (db.shown, db.scrub(e))) from None
    except BaseException:
        db.close()
        raise
    return db


def _guarded(work, args, create=False):
    """Runs work(db) with the database open; a database failure is one line and exit 3."""
    try:
        db = _open(args, create)
    except engine.DbError as e:
        print("db: %s" % e, file=sys.stderr)
        return EXIT_USAGE
    try:
        return work(db)
    except engine.DbError as e:
        print("db: %s" % e, file=sys.stderr)
        return EXIT_USAGE
    except db.errors as e:
        print("db: %s: %s" % (db.shown, db.scrub(e)), file=sys.stderr)
        return EXIT_USAGE
    finally:
        db.close()


def run_add(args):
    logs = store.log_files(args.paths)
    missing = [p for p in logs if not os.path.isfile(p)]
    if missing or not logs:
        print("db add: %s" % ("no such file: %s" % ", ".join(missing) if missing else
                              "no *.log or *.log.gz in %s" % ", ".join(args.paths)), file=sys.stderr)
        return EXIT_USAGE

    def work(db):
        states = []
        for path in logs:
            try:
                states += store.add_log(db, path, args.machine_name, print)
            except (OSError, inputs.InputError) as e:
                print("db add: %s: %s" % (path, e), file=sys.stderr)
                return EXIT_USAGE
        stored = sum(s == "stored" for s, _ in states)
        already = sum(s == "already" for s, _ in states)
        empty = sum(s == "empty" for s, _ in states)
        print("db: %d run(s) stored, %d already there%s, in %s" % (
            stored, already, ", %d with nothing to store" % empty if empty else "", db.shown))
        return 1 if empty else 0
    return _guarded(work, args, create=True)


def _aligned(header, rows):
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [header] + rows]


def run_list(args):
    def work(db):
        found = query.machines(db)
        if not found:
            print("db: no runs in %s yet (`ticklab db add LOG`)" % db.shown)
            return 0
        for line in _aligned(query.MACHINE_HEADER, [query.machine_line(m) for m in found]):
            print(line)
        c = query.counts(db)
        print("db: %d machine(s), %d run(s) in %s" % (len(found), c["runs"], db.shown))
        return 0
    return _guarded(work, args)


def run_show(args):
    def work(db):
        found = query.machines(db)
        m, candidates = query.find(found, args.machine)
        if m is None:
            print("db show: %s" % ("%r names %d machines: %s" % (
                args.machine, len(candidates), ", ".join("%d %s" % (c.id, c.name)
                                                         for c in candidates))
                if candidates else "no machine %r in %s" % (args.machine, db.shown)),
                file=sys.stderr)
            return EXIT_USAGE
        print("machine %d: %s (key %s, hardware %s)" % (m.id, m.name, m.key, m.hardware_key))
        for part in ("system", "baseboard", "bios", "cpu"):
            values = m.identity.get(part) or {}
            print("  %-10s %s" % (part, ", ".join("%s %s" % (k, v) for k, v in values.items()
                                                  if v not in (None, "")) or "-"))
        print("  %-10s %s" % ("microcode", m.identity.get("microcode") or "-"))
        print("  %-10s %s" % ("label", m.identity.get("label") or "-"))
        print("  %-10s %s" % ("basis", m.identity.get("basis")))
        same = [o for o in found if o.hardware_key == m.hardware_key and o.id != m.id]
        if same:
            print("  same hardware, other firmware: %s" % ", ".join(
                "%d (%s)" % (o.id, query.identity.firmware(o.identity)) for o in same))
        for line in _aligned(query.RUN_HEADER, [query.run_line(r) for r in m.runs]):
            print("  " + line)
        return 0
    return _guarded(work, args)


def default_output(args):
    target = target_of(args)
    if engine.is_postgres(target):
        return "ticklab-db-report"
    base = target[:-7] if target.endswith(".sqlite") else target
    return base + "-report"


def run_report(args):
    from . import page
    out = args.output or default_output(args)

    def work(db):
        try:
            path = page.write(db, out, args.force)
        except page.OutdirError as e:
            print("db report: %s" % e, file=sys.stderr)
            return EXIT_USAGE
        print(path)
        return 0
    return _guarded(work, args)
