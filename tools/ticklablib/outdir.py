"""Output folders that never mix two reports.

A report (or compare) folder is built whole in a fresh sibling folder and moved into place
only when it is complete, so a reader never sees last run's figures beside this run's, and
a report that fails half-way leaves the previous one as it was. An existing folder is
replaced only with --force, and only when it is one of ours (it holds MARKER) or empty:
`--force` must never delete a folder the tool did not write. A report stopped half-way
(Ctrl-C, `kill`, a closed terminal) removes what it had built: nothing is left behind.
"""

import contextlib
import os
import shutil
import signal
import tempfile

MARKER = ".ticklab-report"


class OutdirError(Exception):
    """The folder cannot be (re)written: a usage-class failure (exit 3)."""


def check(path, force):
    """Refuse early (before any work) when `path` may not be written."""
    if not os.path.lexists(path):
        return
    if not os.path.isdir(path) or os.path.islink(path):
        raise OutdirError("%s exists and is not a folder" % path)
    entries = os.listdir(path)
    if not entries:
        return
    if not force:
        raise OutdirError("%s exists (an earlier report?): --force replaces it" % path)
    if MARKER not in entries:
        raise OutdirError("%s is not a ticklab report folder (no %s in it): not replaced, "
                          "even with --force" % (path, MARKER))


class Fresh:
    """with Fresh(path, force) as tmp: write into tmp; on success tmp becomes path."""

    def __init__(self, path, force):
        self.path = os.path.abspath(path)
        self.force = force
        self.tmp = None

    def __enter__(self):
        check(self.path, self.force)
        parent = os.path.dirname(self.path)
        try:
            os.makedirs(parent, exist_ok=True)
            self.tmp = tempfile.mkdtemp(prefix=".%s.new-" % os.path.basename(self.path),
                                        dir=parent)
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(self.tmp, 0o777 & ~mask)  # mkdtemp makes it private; a report is not
        except OSError as e:
            raise OutdirError("cannot create a folder beside %s: %s" % (self.path, e)) from e
        with open(os.path.join(self.tmp, MARKER), "w", encoding="utf-8") as f:
            f.write("written by ticklab report/compare; --force may replace this folder\n")
        return self.tmp

    def __exit__(self, kind, value, tb):
        if kind is not None or _STOPS:
            shutil.rmtree(self.tmp, ignore_errors=True)
            if kind is None:   # stopped, and the Stopped raised was swallowed on its way
                raise_if_stopped()
            return False
        old = None
        if os.path.lexists(self.path):
            check(self.path, self.force)  # still ours: nothing changed it meanwhile
            old = self.tmp + ".old"
            os.rename(self.path, old)
        os.rename(self.tmp, self.path)
        if old:
            shutil.rmtree(old, ignore_errors=True)
        return False


class Stopped(BaseException):
    """The command was stopped by a signal (a BaseException, as KeyboardInterrupt: no
    `except Exception` on the way may swallow it). `code`: the exit status a shell gives a
    process that signal ends."""

    def __init__(self, name, code):
        super().__init__(name)
        self.code = code


STOP_SIGNALS = ("SIGTERM", "SIGHUP", "SIGINT")

# The stop signals that arrived, as (name, exit status), whatever became of the Stopped each
# raised: a library may catch even a BaseException and raise something else in its place
# (matplotlib's rc validation, during its import, does), or swallow it.
_STOPS = []


def raise_if_stopped():
    """Stopped, if a stop signal arrived while inside removed_when_stopped() (for code
    that catches broad exceptions and would otherwise go on)."""
    if _STOPS:
        raise Stopped(*_STOPS[0])


@contextlib.contextmanager
def removed_when_stopped():
    """While inside: SIGTERM, SIGHUP and SIGINT raise Stopped, so the `with Fresh` blocks
    inside remove their unfinished folders on the way out (Python's default SIGTERM and
    SIGHUP end the process at once, leaving them behind). Whatever exception leaves the
    block after a stop signal arrived leaves it as Stopped, and a Fresh folder is never put
    in place after one."""
    def stop(signum, _frame):
        _STOPS.append((signal.Signals(signum).name, 128 + signum))
        raise Stopped(*_STOPS[-1])
    _STOPS.clear()
    old = {}
    for name in STOP_SIGNALS:
        sig = getattr(signal, name, None)
        if sig is None:
            continue
        try:
            old[sig] = signal.signal(sig, stop)
        except ValueError:  # not the main thread: nothing to install
            pass
    try:
        yield
    except Stopped:
        raise
    except BaseException as e:
        if _STOPS:
            raise Stopped(*_STOPS[0]) from e
        raise
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        _STOPS.clear()


def child_signals():
    """In a worker process forked inside removed_when_stopped(): the signals' defaults back
    (SIGINT ignored: the parent hears it and stops its workers)."""
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
