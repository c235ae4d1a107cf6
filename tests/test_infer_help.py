"""moveorder infer's help for players (short), --help-all for every option, and the --quality presets."""

import argparse

import pytest

from helpers import native_bfloat16_cpu
from moveorder import cli
from moveorder import settings as S

PLAYER = ["--moves", "--prisoners", "--output", "--diagram", "--alternatives", "--network", "--quality", "--help-all"]
RESEARCH = ["--iterations", "--trials", "--t-start", "--t-end", "--schedule", "--neighbour", "--init", "--seed"]
RESEARCH += ["--beam-width", "--beam-future", "--beam-passes", "--method", "--precision", "--cache-size"]


def help_text(capsys, monkeypatch, flag):
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as done:
        cli.main(["infer", flag])
    assert done.value.code == 0
    return capsys.readouterr().out


def infer_parser():
    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["infer"]


def test_short_help_is_for_players(capsys, monkeypatch):
    text = help_text(capsys, monkeypatch, "--help")
    assert len(text.splitlines()) < 40
    assert "position" in text
    for option in PLAYER:
        assert option in text, option
    for option in RESEARCH:
        assert option not in text, option
    for name in S.QUALITIES:
        assert f"{name}:" in text  # each preset said in words


def test_help_all_names_every_option(capsys, monkeypatch):
    text = help_text(capsys, monkeypatch, "--help-all")
    options = [o for a in infer_parser()._actions for o in a.option_strings if o.startswith("--")]
    assert len(options) > 25
    for option in options:
        assert option in text, option
    assert "research options" in text
    research = text[text.index("research options (") :]
    for option in RESEARCH:
        assert option in research, option
    listed = [line.split()[0] for line in research.split("\n\n")[0].splitlines()[1:] if line.startswith("  -")]
    assert set(RESEARCH) <= set(listed) and not set(PLAYER) & set(listed)


def parsed(*args):
    a = cli.build_parser().parse_args(["infer", "pos.sgf", *args])
    return S.quality_config(a.quality, vars(a))


def test_quality_presets_and_options_that_override_them():
    # The default preset is the fast ranked beam; the paper's annealing is one option away.
    assert S.DEFAULT_QUALITY == "fast"
    default = parsed()
    assert (default.method, default.beam_width, default.beam_future, default.orientations) == ("beam", 32, 1.0, "seats")
    # With captures, two passes, the second 2 x 32 = 64 wide where the first found nothing and 2 x 32 = 64
    # within the capture plan of the order it found.
    assert (default.beam_passes, default.beam_widen, default.beam_widen_found, default.patience) == (2, 2, 2, 2)
    # Where the first pass found no order, the 4x32 proposes where the captures go.
    assert default.capture_proposer == "tygem" and parsed("--capture-proposer", "none").capture_proposer == "none"
    assert parsed("--quality", "fast") == default
    paper = parsed("--quality", "paper")
    assert paper == S.SearchConfig()
    assert (paper.method, paper.trials, paper.iterations) == ("anneal", 5, None)
    good = parsed("--quality", "good")
    assert (good.method, good.beam_width) == ("beam", 128)
    # A setting given explicitly wins over the preset's; --method anneal is the paper's annealing.
    assert parsed("--quality", "good", "--beam-width", "64").beam_width == 64
    assert parsed("--method", "anneal") == S.SearchConfig()
    assert parsed("--quality", "paper", "--method", "beam") == S.SearchConfig(method="beam")
    assert parsed("--beam-future", "0").beam_future == 0.0
    assert parsed("--orientations", "all").orientations == "all"
    assert parsed("--quality", "good").orientations == "seats"
    assert (good.beam_passes, good.beam_widen, good.beam_widen_found) == (1, 1, 1)
    assert (parsed("--beam-passes", "3").beam_passes, parsed("--beam-widen", "3").beam_widen) == (3, 3)
    # The preset's widening stays within the widest beam (4,096) a wider --beam-width leaves room for:
    # 2 x 2,048 = 4,096, but 4,096 // 3,000 = 1 and 4,096 // 4,096 = 1; a --beam-widen given is kept (and checked).
    assert [parsed("--beam-width", w).beam_widen for w in ("2048", "3000", "4096")] == [2, 1, 1]
    assert parsed("--beam-width", "4096", "--beam-widen", "3").beam_widen == 3
    # The same for the widening within a plan: 2 x 2,000 = 4,000, but 4,096 // 4,096 = 1.
    assert [parsed("--beam-width", w).beam_widen_found for w in ("2000", "4096")] == [2, 1]
    assert parsed("--beam-width", "4096", "--beam-widen-found", "3").beam_widen_found == 3
    # The annealing has no passes: --method anneal leaves the preset's at one, as it leaves its turns.
    anneal = parsed("--method", "anneal")
    assert (anneal.beam_passes, anneal.beam_widen, anneal.beam_widen_found) == (1, 1, 1)
    assert (anneal.capture_proposer, good.capture_proposer) == ("none", "none")
    # Only the beam turns the board: the paper's annealing searches it as given, and says so if asked.
    with pytest.raises(ValueError, match="only the ranked beam"):
        parsed("--method", "anneal", "--orientations", "seats")
    # Research options keep their meaning under every preset.
    assert parsed("--quality", "fast", "--trials", "3", "--seed", "7").trials == 3


@pytest.mark.parametrize("given, expected", [([], None), (["--precision", "float32"], "float32")])
def test_the_players_arithmetic_is_bfloat16_where_the_cpu_has_it(given, expected):
    """infer alone: --precision auto by default, bfloat16 on a CPU with AVX512-BF16 or AMX, else float32;
    16 positions a call on a CPU; what is given is kept."""
    from moveorder.cli.search import _player_likelihood

    args = cli.build_parser().parse_args(["infer", "pos.sgf", "--device", "cpu", *given])
    assert (args.precision, args.max_batch) == ("auto" if not given else "float32", None)
    _player_likelihood(args)
    native = native_bfloat16_cpu()
    assert args.precision == (expected or ("bfloat16" if native else "float32"))
    assert args.max_batch == 16
    batch = cli.build_parser().parse_args(["infer", "pos.sgf", "--device", "cpu", "--max-batch", "64"])
    _player_likelihood(batch)
    assert batch.max_batch == 64
    # infer-set, the pipeline's verb, keeps float32 and the CPU's default batch.
    pipeline = cli.build_parser().parse_args(["infer-set", "--arrangements", "a", "--out", "o", "--table", "t"])
    assert (pipeline.precision, pipeline.max_batch) == ("float32", None)


def test_a_bad_quality_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit):
        cli.main(["infer", "pos.sgf", "--quality", "best"])
    assert "--quality: invalid choice: 'best'" in capsys.readouterr().err
