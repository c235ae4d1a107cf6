"""The ``moveorder`` command line: one verb per pipeline stage.

Every Snakemake rule calls one of these, so each stage also runs (and is
tested) without Snakemake.  The command line only parses and dispatches:
each verb is a function ``cmd_VERB`` with its options beside it
(``_VERB_options``), registered with :func:`moveorder.cli.common.verb`, in
the module of its stage (data, nets, search, katago, report; what they
share: common); the work itself happens in the stages' modules, and every
default comes from :mod:`moveorder.settings`.  Run ``moveorder VERB --help`` for a verb's options.
"""

from __future__ import annotations

import argparse
import logging
import sys

from moveorder.cli import data, katago, nets, report, search, serve
from moveorder.cli.common import HelpFormatter, registered

log = logging.getLogger("moveorder")

#: Every verb (its modules register them on import): name -> (help, options, command), in the order of
#: ``moveorder --help``: the stages' order, then each module's.
VERBS = registered([data, nets, search, katago, report, serve])


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="moveorder", description=__doc__.splitlines()[0], formatter_class=HelpFormatter)
    p.add_argument("-v", "--verbose", action="store_true", help="log debugging messages too")
    sub = p.add_subparsers(dest="verb", required=True)
    for name, (help, options, command) in VERBS.items():
        s = sub.add_parser(name, help=help, description=help, formatter_class=HelpFormatter)
        options(s)
        s.set_defaults(func=command)
    return p


def _refuse_empty_values(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """argparse drops a value of ``--`` (``--schedule=--``) and leaves the option an empty list, unchecked:
    refuse it as argparse refuses a missing value."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    verb = next(p for p in sub.choices.values() if p.get_default("func") is args.func)
    for action in verb._actions:
        single = isinstance(action, argparse._StoreAction) and action.nargs is None and action.default != []
        if action.option_strings and single and getattr(args, action.dest, None) == []:
            verb.error(f"argument {'/'.join(action.option_strings)}: expected one argument")


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _refuse_empty_values(parser, args)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    try:
        return args.func(args)
    except ModuleNotFoundError as err:  # a verb of the research pipeline, installed without its packages
        log.error(
            "moveorder %s needs %s, one of the research pipeline's packages: pip install 'moveorder[pipeline]'",
            args.verb,
            err.name,
        )
        return 2
    except (ValueError, OSError, RuntimeError) as err:  # OSError: FileNotFoundError and any other I/O error
        log.error("%s", err)
        return 2


if __name__ == "__main__":
    sys.exit(main())
