"""Run the `ticklab` command in this process (no interpreter or matplotlib start-up per
call), with its output captured, exactly as the executable would run it."""
import contextlib
import io
import os

from ticklablib import cli

TICKLAB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ticklab")


def run_tool(*args):
    """(exit code, stdout, stderr) of `ticklab ARGS`."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main([str(a) for a in args])
        except SystemExit as e:  # argparse's usage errors and --help
            code = e.code
    return code, out.getvalue(), err.getvalue()


def figure(key):
    """The draw function of the report's figure `key`, as figures.render finds it."""
    from ticklablib import figures
    return next(draw for k, _, draw, _ in figures.figures() if k == key)
