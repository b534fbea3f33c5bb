"""What only PostgreSQL has: a password. The tests' server asks for one (SCRAM), so a URI
that carries it, or a PGPASSFILE that holds it, is what lets the tool in; it must never be
printed, written into the page, or stored in a table."""
import os

import dblogs
import pgserver
from tooling import run_tool
from ticklablib.db import engine

TABLES = ("meta", "machines", "logs", "runs", "records", "problems", "verdicts", "latency",
          "intervals")


def everything_stored(target):
    """Every value of every table, as text (the logs' compressed bytes left out: they are
    the capture file's)."""
    db = engine.Database(target)
    try:
        out = []
        for table in TABLES:
            for row in db.rows("SELECT * FROM %s" % table):
                out += [str(v) for v in row if not isinstance(v, (bytes, memoryview))]
        return "\n".join(out)
    finally:
        db.close()


def test_the_password_is_never_printed_or_stored(pg_server, tmp_path):
    target = pg_server.new_database()
    assert pgserver.PASSWORD in target
    said = []
    for args in (("add", dblogs.copy_fixture(tmp_path, dblogs.SMBIOS)), ("list",),
                 ("show", "1"), ("report", "-o", tmp_path / "page")):
        code, out, err = run_tool("db", args[0], "--db", target, *args[1:])
        assert code == 0, out + err
        said.append(out + err)
    assert "***" in said[0]                       # the database is named, hidden
    text = "\n".join(said) + (tmp_path / "page" / "db-report.html").read_text()
    assert pgserver.PASSWORD not in text
    assert pgserver.PASSWORD not in everything_stored(target)


def test_a_wrong_password_is_refused_without_echo(pg_server):
    target = pg_server.new_database().replace(pgserver.PASSWORD, "Wrong-Guess-99")
    code, out, err = run_tool("db", "list", "--db", target)
    assert code == 3 and "password authentication failed" in err, err
    assert "Wrong-Guess-99" not in out + err


def test_pgpassfile_gives_the_password(pg_server, tmp_path, monkeypatch):
    target = pg_server.new_database()
    bare = target.replace(":" + pgserver.PASSWORD, "")
    assert pgserver.PASSWORD not in bare
    passfile = tmp_path / "pgpass"
    passfile.write_text("*:*:*:%s:%s\n" % (pgserver.USER, pgserver.PASSWORD))
    os.chmod(passfile, 0o600)
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    code, out, err = run_tool("db", "add", "--db", bare, dblogs.copy_fixture(tmp_path,
                                                                            dblogs.EXACT))
    assert code == 0, out + err
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "none"))
    code, out, err = run_tool("db", "list", "--db", bare)
    assert code == 3 and "password" in err, err
