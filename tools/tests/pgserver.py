"""A PostgreSQL server of the tests' own: Debian's postgresql (initdb and pg_ctl from
/usr/lib/postgresql/N/bin) in a temporary folder, listening on a unix socket in that folder
only (no TCP port), password authentication (SCRAM) so that the tests' URIs really carry a
password, stopped and removed at the end of the session.

PostgreSQL refuses to run as root: as root the server runs as the `postgres` user Debian's
package creates (runuser), in folders given to it. If the server cannot start, the tests
that need it fail with the reason; they never skip.
"""
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import urllib.parse

import pytest

USER = "ticklab"
PASSWORD = "Tick-Secret-4711"
PORT = 5432           # names the socket file (.s.PGSQL.5432) in a folder of our own
SERVER_USER = "postgres"


def bin_dir():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    if not found:
        raise RuntimeError("no /usr/lib/postgresql/*/bin/initdb: Debian's postgresql package "
                           "is not installed (scripts/setup-deps.sh test installs it)")
    return os.path.dirname(found[-1])


class Server:
    def __init__(self):
        self.base = tempfile.mkdtemp(prefix="ticklab-pg-")
        self.data = os.path.join(self.base, "data")
        self.sock = os.path.join(self.base, "sock")
        self.log = os.path.join(self.base, "server.log")
        self.bin = bin_dir()
        self.databases = 0
        self.as_root = os.geteuid() == 0

    def _run(self, *cmd):
        argv = list(cmd)
        if self.as_root:
            argv = ["runuser", "-u", SERVER_USER, "--"] + argv
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            log = open(self.log).read()[-2000:] if os.path.exists(self.log) else ""
            raise RuntimeError("%s failed (exit %d): %s%s\n%s" % (
                " ".join(cmd[:2]), p.returncode, p.stdout[-1000:], p.stderr[-1000:], log))
        return p

    def _reachable(self):
        """As root: can the server's user reach the binaries at all? Not when a directory
        above them is closed to others, as the / of a root made by `mktemp -d` (0700)."""
        if not self.as_root:
            return
        initdb = os.path.join(self.bin, "initdb")
        p = subprocess.run(["runuser", "-u", SERVER_USER, "--", "test", "-x", initdb],
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            closed = [d for d in ("/", "/usr", "/usr/lib", "/usr/lib/postgresql")
                      if os.path.isdir(d) and not os.stat(d).st_mode & 0o001]
            raise RuntimeError("the %s user cannot run %s%s" % (
                SERVER_USER, initdb, ": not searchable by others: %s (an installed Debian "
                "has them 0755)" % ", ".join(closed) if closed else ""))

    def start(self):
        self._reachable()
        os.chmod(self.base, 0o755)
        os.makedirs(self.sock)
        pwfile = os.path.join(self.base, "pw")
        with open(pwfile, "w") as f:
            f.write(PASSWORD + "\n")
        if self.as_root:
            who = pwd.getpwnam(SERVER_USER)
            for path in (self.base, self.sock, pwfile):
                os.chown(path, who.pw_uid, who.pw_gid)
        self._run(os.path.join(self.bin, "initdb"), "-D", self.data, "-U", USER,
                  "--auth=scram-sha-256", "--pwfile=" + pwfile, "-E", "UTF8", "--no-sync")
        os.remove(pwfile)
        opts = "-c listen_addresses='' -c unix_socket_directories=%s -c fsync=off " \
               "-c synchronous_commit=off -c full_page_writes=off -p %d" % (self.sock, PORT)
        self._run(os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-l", self.log, "-o", opts,
                  "-w", "-t", "60", "start")

    def stop(self):
        try:
            if os.path.exists(os.path.join(self.data, "postmaster.pid")):
                self._run(os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", "fast",
                          "-w", "stop")
        finally:
            shutil.rmtree(self.base, ignore_errors=True)

    def uri(self, database, password=True):
        auth = "%s:%s" % (USER, urllib.parse.quote(PASSWORD)) if password else USER
        return "postgresql://%s@/%s?host=%s&port=%d" % (auth, database, self.sock, PORT)

    def new_database(self):
        """A fresh, empty database; its URI (with the password)."""
        import psycopg
        self.databases += 1
        name = "t%d" % self.databases
        with psycopg.connect(self.uri("postgres"), autocommit=True) as conn:
            conn.execute("CREATE DATABASE %s" % name)   # a name of ours, not a value
        return self.uri(name)


@pytest.fixture(scope="session")
def pg_server():
    server = Server()
    try:
        server.start()
    except (RuntimeError, OSError, KeyError, subprocess.TimeoutExpired) as e:
        server.stop()
        pytest.fail("the tests' PostgreSQL server did not start: %s" % e, pytrace=False)
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_target(request, tmp_path):
    """The same test on a SQLite file and on a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "runs.sqlite")
    return request.getfixturevalue("pg_server").new_database()
