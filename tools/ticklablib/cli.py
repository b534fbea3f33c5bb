"""The `ticklab` command line: a thin dispatcher over one module per subcommand.

A subcommand module provides NAME, HELP and register(subparsers), which builds its parser
and sets `func` (args -> exit code). Adding capture/report/compare later is one module and
one line in COMMANDS; nothing else here changes.
"""

import argparse
import os
import sys

from . import EXIT_USAGE, capture, check, compare, db, decode, export, report

COMMANDS = (capture, check, report, export, compare, decode, db)


class ArgumentParser(argparse.ArgumentParser):
    """argparse with usage errors on EXIT_USAGE instead of 2."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, "%s: error: %s\n" % (self.prog, message))


def build_parser():
    parser = ArgumentParser(
        prog="ticklab",
        description="Host tool for the ticklab kernel: reads the serial record stream.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    sub.required = True
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # `ticklab check big.log | head`: not worth a traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # quiet exit flush
        return 1
