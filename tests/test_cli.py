"""moveorder.cli: every verb registered with its options and command, every option documented with its default."""

import argparse
import ast
import inspect
import textwrap

import pytest

from moveorder import cli

VERBS = [
    "download",
    "extract",
    "filter",
    "select",
    "train-policy",
    "pack-pool",
    "cross-level",
    "policy",
    "infer-set",
    "infer",
    "calibrate",
    "install-katago",
    "score",
    "analyse-actual",
    "report",
    "sweep-summary",
    "serve",
]


def test_every_verb_dispatches_to_its_command():
    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == VERBS == list(cli.VERBS)
    for name, parser in sub.choices.items():
        command = parser.get_default("func")
        assert command.__name__ == "cmd_" + name.replace("-", "_"), name
        assert command.__module__.rpartition(".")[0] == "moveorder.cli", name  # a stage's module of the package
        tree = ast.parse(textwrap.dedent(inspect.getsource(command)))
        work = [
            x for x in ast.walk(tree) if isinstance(x, ast.stmt) and not isinstance(x, (ast.Import, ast.ImportFrom))
        ]
        assert len(work) <= 6, f"{name}: {len(work)} statements; the command line only parses and dispatches"


def test_a_bad_value_is_an_argparse_error_naming_the_option(capsys):
    with pytest.raises(SystemExit):
        cli.main(["infer-set", "--arrangements", "a", "--out", "o", "--table", "t", "--network", "n", "--trials", "0"])
    assert "--trials: must be at least 1, not 0" in capsys.readouterr().err


def test_every_option_has_help_and_states_its_default():
    import argparse

    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    checked = 0
    for name, parser in sub.choices.items():
        formatter = parser._get_formatter()
        for action in parser._actions:
            if action.dest == "help":
                continue
            assert action.help, f"{name} {action.option_strings or action.dest}: no help text"
            text = formatter._get_help_string(action) if hasattr(formatter, "_get_help_string") else action.help
            states = action.required or not action.option_strings or action.default is None or action.default is False
            assert states or "default" in text, f"{name} {action.option_strings}: default not stated: {text!r}"
            checked += 1
    assert checked > 110  # every option of every verb, the annealing ones included


def test_help_shows_defaults(capsys):
    with pytest.raises(SystemExit):
        cli.main(["filter", "--help"])
    out = capsys.readouterr().out
    assert "processes parsing files (default: 1)" in out and "(default: 50)" in out
