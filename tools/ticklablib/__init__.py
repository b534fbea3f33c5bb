"""ticklab host tool library: reading and judging the kernel's serial record stream.

records  parse a raw capture into runs of verified records, with every defect reported
cli      the `ticklab` command: one subcommand per module listed in cli.COMMANDS
"""

# Exit code for usage errors and unreadable input, shared by every subcommand. argparse's
# default (2) would be indistinguishable from `check`'s "run failed" verdict.
EXIT_USAGE = 3
