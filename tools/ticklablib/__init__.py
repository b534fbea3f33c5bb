"""ticklab host tool library: reading and judging the kernel's serial record stream.

records  parse a raw capture into runs of verified records, with every defect reported
cli      the `ticklab` command: one subcommand per module listed in cli.COMMANDS
"""

import os
import subprocess

# Exit code for usage errors and unreadable input, shared by every subcommand. argparse's
# default (2) would be indistinguishable from `check`'s "run failed" verdict.
EXIT_USAGE = 3

# The host tool's own version (the capture record and the summary JSON carry it).
TOOL_VERSION = "0.2.0"

_TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tool_git():
    """`git describe --always --dirty` of the tree the tool runs from, or None."""
    try:
        p = subprocess.run(["git", "-C", _TOOLS, "describe", "--always", "--dirty"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout.decode("utf-8", "replace").strip() or None
