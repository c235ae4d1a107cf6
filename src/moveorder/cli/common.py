"""What every verb's module shares: the registry of verbs, the option helpers, and the help formatter
that states each option's default."""

from __future__ import annotations

import argparse
import sys
from typing import Callable, Dict, Tuple

from moveorder import settings as S

#: name -> (help, options, command), as registered by :func:`verb`.
VERBS: Dict[str, Tuple[str, Callable, Callable]] = {}


def verb(name: str, help: str, options: Callable[[argparse.ArgumentParser], None]):
    """Register ``cmd_VERB`` as the verb ``name``, with the function adding its options."""

    def register(command: Callable[[argparse.Namespace], int]):
        VERBS[name] = (help, options, command)
        return command

    return register


def int_at_least(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, not {value}")
        return value

    parse.__name__ = f"whole number >= {low}"
    return parse


def show_progress(args: argparse.Namespace) -> bool:
    """Progress bars on stderr: on at a terminal, off under --quiet and when stderr goes to a log file."""
    return not getattr(args, "quiet", False) and sys.stderr.isatty()


def quiet_option(parser: argparse.ArgumentParser) -> None:
    """``--quiet``, the one declaration of every verb that shows progress."""
    parser.add_argument("--quiet", action="store_true", help="no progress bar on stderr")


def config_from(cls, args: argparse.Namespace):
    """A settings dataclass from the options of the same names (the others keep their defaults)."""
    return S.from_mapping(cls, vars(args))


def registered(modules) -> Dict[str, Tuple[str, Callable, Callable]]:
    """The verbs of ``modules``, module by module in the order given, each module's in its order."""
    names = [m.__name__ for m in modules]
    ranked = sorted(VERBS.items(), key=lambda item: names.index(item[1][2].__module__))  # stable
    return dict(ranked)


def whole(parser: argparse.ArgumentParser, flag: str, low: int, default, help: str, **kw) -> None:
    """An option taking a whole number of at least ``low`` (argparse's other keywords as given)."""
    parser.add_argument(flag, type=int_at_least(low), default=default, help=help, **kw)


class HelpFormatter(argparse.HelpFormatter):
    """States each option's default in --help, unless its help text already says it or it has none."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            "default" in text
            or action.required
            or not action.option_strings
            or default is None
            or default is False
            or default is argparse.SUPPRESS
            or (isinstance(default, (str, list, tuple)) and not default)
        ):
            return text
        shown = " ".join(map(str, default)) if isinstance(default, (list, tuple)) else str(default)
        return f"{text} (default: {shown.replace('%', '%%')})".strip()

    #: Whether the help shows options marked ``research`` (moveorder infer's search settings).
    show_research = False

    def add_usage(self, usage, actions, groups, prefix=None):
        shown = [a for a in actions if self.show_research or not getattr(a, "research", False)]
        super().add_usage(usage, shown, groups, prefix)

    def add_argument(self, action: argparse.Action) -> None:
        if self.show_research or not getattr(action, "research", False):
            super().add_argument(action)


class HelpAllFormatter(HelpFormatter):
    show_research = True


class HelpAll(argparse.Action):
    """``--help-all``: the help with the research options too."""

    def __init__(self, option_strings, dest, help=None):
        super().__init__(option_strings, dest, nargs=0, default=None, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        parser.formatter_class = HelpAllFormatter
        parser.print_help()
        parser.exit()
