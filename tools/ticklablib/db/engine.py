"""Where the runs are kept: a SQLite file (Python's own sqlite3, nothing to install), or a
PostgreSQL server when the target is a libpq URI (Debian's python3-psycopg, psycopg 3).

Every statement is written once, with `?` for each value; for PostgreSQL the placeholders
become psycopg's `%s`. Values always travel as bound parameters, never inside the SQL text.
A password in the URI goes to libpq and nowhere else: the tool names the database by
`shown` (the URI with the password replaced), and no table holds the target.
"""

import contextlib
import os
import sqlite3
import urllib.parse

SCHEMES = ("postgresql://", "postgres://")
SQLITE_WAIT_S = 60      # how long a writer waits for another `db add` to commit
HIDDEN = "***"


class DbError(Exception):
    """The database cannot be used as asked: a usage-class failure (exit 3)."""


def is_postgres(target):
    return target.startswith(SCHEMES)


def redact(target):
    """The target as it may be printed: a URI's password (in the user part or a
    `password=` parameter) replaced by ***."""
    if not is_postgres(target):
        return target
    parts = urllib.parse.urlsplit(target)
    netloc = parts.netloc
    if "@" in netloc:
        user, host = netloc.rsplit("@", 1)
        if ":" in user:
            user = user.split(":", 1)[0] + ":" + HIDDEN
        netloc = user + "@" + host
    query = "&".join(_hidden_param(kv) for kv in parts.query.split("&")) if parts.query else ""
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _hidden_param(kv):
    key = kv.split("=", 1)[0]
    return key + "=" + HIDDEN if key.lower() == "password" else kv


def password_of(target):
    """The password the URI carries, or None: scrubbed from any message printed."""
    if not is_postgres(target):
        return None
    parts = urllib.parse.urlsplit(target)
    if parts.password:
        return urllib.parse.unquote(parts.password)
    for key, value in urllib.parse.parse_qsl(parts.query):
        if key.lower() == "password":
            return value
    return None


def clean_text(value):
    """Text both engines store: no NUL (PostgreSQL refuses it), no lone surrogate (UTF-8
    cannot carry one; a record's JSON may hold \\ud800)."""
    if "\x00" in value:
        value = value.replace("\x00", "\ufffd")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = value.encode("utf-8", "replace").decode("utf-8")
    return value


def _param(value):
    return clean_text(value) if isinstance(value, str) else value


class Database:
    """One connection. kind: "sqlite" or "postgresql"; shown: the target as printed."""

    def __init__(self, target, create=True):
        self.target = target
        self.shown = redact(target)
        self._secret = password_of(target)
        if is_postgres(target):
            self.kind = "postgresql"
            self._connect_postgres()
        else:
            self.kind = "sqlite"
            self._connect_sqlite(create)

    def _connect_postgres(self):
        try:
            import psycopg
        except ImportError as e:
            raise DbError("a PostgreSQL target needs Debian's python3-psycopg (apt-get install "
                          "python3-psycopg): %s" % e) from e
        self._errors = (psycopg.Error,)
        try:
            self.conn = psycopg.connect(self.target, autocommit=True)
        except psycopg.Error as e:
            raise DbError("cannot connect to %s: %s" % (self.shown, self.scrub(e))) from None

    def _connect_sqlite(self, create):
        path = self.target
        if not create and not os.path.exists(path):
            raise DbError("no database at %s (`ticklab db add` creates it)" % path)
        self._errors = (sqlite3.Error,)
        try:
            self.conn = sqlite3.connect(path, timeout=SQLITE_WAIT_S, isolation_level=None)
            self.conn.execute("PRAGMA busy_timeout = %d" % (SQLITE_WAIT_S * 1000))
            # WAL: readers never wait for a writer, and writers queue on the lock
            self.conn.execute("PRAGMA journal_mode = WAL")
            # WAL's own advice: a commit is then durable at the next checkpoint, and the file
            # is never corrupt; a full sync per run would make `db add` wait on the disk
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self.conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error as e:
            raise DbError("cannot open the SQLite database %s: %s" % (path, e)) from None

    @property
    def errors(self):
        """The engine's exception classes (the caller turns them into DbError)."""
        return self._errors

    def scrub(self, error):
        """An engine's message without the password (as given, or as the URI spells it),
        should it quote the target."""
        text = str(error).strip()
        if self._secret:
            for spelling in (self._secret, urllib.parse.quote(self._secret, safe="")):
                text = text.replace(spelling, HIDDEN)
        return text

    def sql(self, text):
        return text.replace("?", "%s") if self.kind == "postgresql" else text

    def execute(self, text, params=()):
        return self.conn.execute(self.sql(text), tuple(_param(p) for p in params))

    def rows(self, text, params=()):
        return self.execute(text, params).fetchall()

    def one(self, text, params=()):
        found = self.execute(text, params).fetchall()   # fetched whole: SQLite keeps an
        return found[0][0] if found else None               # unread statement open

    def bulk(self, table, columns, rows):
        """Many rows into one table: executemany for SQLite, COPY for PostgreSQL (the values
        travel as data in both)."""
        rows = [tuple(_param(v) for v in row) for row in rows]
        if not rows:
            return
        if self.kind == "sqlite":
            self.conn.executemany("INSERT INTO %s (%s) VALUES (%s)" % (
                table, ", ".join(columns), ", ".join("?" * len(columns))), rows)
            return
        with self.conn.cursor() as cur:
            with cur.copy("COPY %s (%s) FROM STDIN" % (table, ", ".join(columns))) as copy:
                for row in rows:
                    copy.write_row(row)

    @contextlib.contextmanager
    def transaction(self):
        """One transaction; for SQLite the write lock is taken at its start (BEGIN
        IMMEDIATE), so two `db add` at once queue instead of failing half-way."""
        if self.kind == "postgresql":
            with self.conn.transaction():
                yield
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def has_table(self, name):
        if self.kind == "sqlite":
            return bool(self.one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                                 "name = ?", (name,)))
        return bool(self.one("SELECT 1 FROM information_schema.tables WHERE table_schema = "
                             "current_schema() AND table_name = ?", (name,)))

    def close(self):
        with contextlib.suppress(Exception):
            self.conn.close()
