"""The `ticklab` command line: a thin dispatcher over one module per subcommand.

A subcommand module provides NAME, HELP and register(subparsers), which builds its parser
and sets `func` (args -> exit code). Adding capture/report/compare later is one module and
one line in COMMANDS; nothing else here changes.
"""

import argparse
import importlib
import os
import sys

from . import EXIT_USAGE

# the subcommands' modules, in the order `--help` lists them; each module's NAME is its own
COMMANDS = ("capture", "check", "report", "export", "compare", "decode", "db")


class ArgumentParser(argparse.ArgumentParser):
    """argparse with usage errors on EXIT_USAGE instead of 2."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, "%s: error: %s\n" % (self.prog, message))


def build_parser(only=None):
    """The parser of every subcommand, or of `only` alone (a name in COMMANDS): a command
    imports what it needs and not every other's modules (a tenth of a second)."""
    parser = ArgumentParser(
        prog="ticklab",
        description="Host tool for the ticklab kernel: reads the serial record stream.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    sub.required = True
    for name in COMMANDS:
        if only is None or name == only:
            importlib.import_module("." + name, __package__).register(sub)
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    first = argv[0] if argv else None
    args = build_parser(first if first in COMMANDS else None).parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # `ticklab check big.log | head`: not worth a traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # quiet exit flush
        return 1
