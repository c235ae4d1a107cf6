"""moveorder.settings, the one home of every default: the schema, config.yaml and the command line agree."""

import argparse
from dataclasses import fields

import pytest
import yaml

from helpers import REPO
from moveorder import cli
from moveorder import settings as S

# config section -> the dataclass holding its defaults
SECTIONS = {
    "filter": S.FilterConfig,
    "selection": S.SelectConfig,
    "training": S.TrainConfig,
    "policy": S.PolicyConfig,
    "inference": S.SearchConfig,
    "katago": S.ScoreConfig,
}


def schema_defaults():
    schema = yaml.safe_load((REPO / "config/schema.yaml").read_text())["properties"]
    return {
        section: {k: v["default"] for k, v in schema[section]["properties"].items() if "default" in v}
        for section in SECTIONS
    }


def comparable(cls, section_values):
    """The keys a config section shares with a dataclass (the iterations table is compared on its own)."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in section_values.items() if k in names and k != "iterations"}


@pytest.mark.parametrize("section", SECTIONS)
def test_schema_and_config_state_the_dataclass_defaults(section):
    cls = SECTIONS[section]
    default = cls()
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())[section]
    shared = comparable(cls, schema_defaults()[section])
    assert shared, f"{section}: no setting shared with {cls.__name__}"
    for key, value in shared.items():
        ours = getattr(default, key)
        ours = list(ours) if isinstance(ours, tuple) else ours
        assert value == ours, f"schema {section}.{key} = {value!r}, {cls.__name__}.{key} = {ours!r}"
        if key in config:
            assert config[key] == ours, f"config.yaml {section}.{key} = {config[key]!r}, {cls.__name__} {ours!r}"


def test_iterations_one_table():
    schema = schema_defaults()["inference"]["iterations"]
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())["inference"]["iterations"]
    assert {int(k): v for k, v in schema.items()} == {int(k): v for k, v in config.items()} == S.PAPER_ITERATIONS
    assert S.SearchConfig().iterations is None  # the length decides
    assert S.SearchConfig().for_length(20).iterations == 5000 and S.SearchConfig().for_length(40).iterations == 20000
    assert S.SearchConfig().for_length(30).iterations == 5000  # tie: the shorter length's
    assert S.SearchConfig().for_length(31).iterations == 20000
    assert S.SearchConfig(iterations=7).for_length(40).iterations == 7
    assert S.SearchConfig().for_length(25, {20: 10, 30: 99}).iterations == 10


def options(verb):
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[verb]
    return {a.dest: a.default for a in sub._actions if a.option_strings}


@pytest.mark.parametrize(
    "verb,cls",
    [
        ("train-policy", S.TrainConfig),
        ("score", S.ScoreConfig),
        ("analyse-actual", S.ScoreConfig),
        ("infer", S.SearchConfig),
        ("infer-set", S.SearchConfig),
        ("filter", S.FilterConfig),
    ],
)
def test_every_verb_takes_its_defaults_from_settings(verb, cls):
    given = options(verb)
    default = cls()
    shared = [f.name for f in fields(cls) if f.name in given]
    assert shared
    for name in shared:
        if verb == "infer" and name in S.QUALITY_SETTINGS:  # the --quality preset's (tests/test_infer_help.py)
            assert given[name] is None, name
            continue
        assert given[name] == getattr(default, name), f"{verb} --{name}: {given[name]!r} != {getattr(default, name)!r}"
    if verb == "infer-set":
        assert given["chunk"] == S.PolicyConfig().chunk and given["precision"] == S.PolicyConfig().precision


def test_batches_of_more_than_one_position_need_the_shared_cache():
    """One check, in ScoreConfig: `moveorder score`, `score_file` and the workflow's config all go through it."""
    with pytest.raises(ValueError, match="max_batch > 1 needs shared_cache"):
        S.from_mapping(S.ScoreConfig, {"max_batch": 4, "binary": None, "runtime_minutes": 5})
    assert S.from_mapping(S.ScoreConfig, {"max_batch": 4, "shared_cache": True}).max_batch == 4


def test_anneal_config_refuses_each_bad_value_with_its_message():
    S.SearchConfig(iterations=1, trials=1, t_start=0.5, t_end=0.5, beam_width=1, beam_future=0.0)  # every edge allowed
    refused = {
        "neighbour": ({"neighbour": "swp3"}, "^neighbour 'swp3': expected one of \\('swp2', 'mov2', 'rot3', 'mix'\\)$"),
        "init": ({"init": "best"}, "^init 'best': expected one of "),
        "method": ({"method": "greedy"}, "^method 'greedy': expected one of "),
        "beam_width": ({"beam_width": 0}, "^beam_width 0: expected at least 1$"),
        "beam_future": ({"beam_future": -0.5}, "^beam_future -0.5: expected 0 or more$"),
        "beam_passes": ({"beam_passes": 0}, "^beam_passes 0: expected at least 1$"),
        "beam_widen": ({"beam_widen": 0}, "^beam_widen 0: expected at least 1$"),
        "schedule": ({"schedule": "cubic"}, "^schedule 'cubic': expected one of "),
    }
    for kw, message in refused.values():
        with pytest.raises(ValueError, match=message):
            S.SearchConfig(**kw)
    numbers = r"^need iterations >= 1 \(got {}\), trials >= 1 \(got {}\) and t_start >= t_end > 0 \(got {}, {}\)$"
    for kw, got in (
        ({"iterations": 0}, (0, 5, 1.0, 0.1)),
        ({"trials": 0}, (None, 0, 1.0, 0.1)),
        ({"t_start": 0.1, "t_end": 0.2}, (None, 5, 0.1, 0.2)),
        ({"t_end": 0.0}, (None, 5, 1.0, 0.0)),
    ):
        with pytest.raises(ValueError, match=numbers.format(*got)):
            S.SearchConfig(**kw)
    assert S.SearchConfig(method="beam+anneal").init == "beam" and S.SearchConfig(method="beam").init == "greedy"


def test_temperature_by_hand():
    geo = S.SearchConfig(iterations=3, t_start=0.8, t_end=0.2)
    assert [S.temperature(geo, t) for t in range(3)] == pytest.approx([0.8, 0.4, 0.2], rel=1e-12)
    lin = S.SearchConfig(iterations=5, t_start=0.8, t_end=0.2, schedule="linear")
    assert [S.temperature(lin, t) for t in range(5)] == pytest.approx([0.8, 0.65, 0.5, 0.35, 0.2], rel=1e-12)
    two = S.SearchConfig(iterations=2, t_start=0.8, t_end=0.2)
    assert [S.temperature(two, t) for t in range(2)] == pytest.approx([0.8, 0.2], rel=1e-12)
    one = S.SearchConfig(iterations=1, t_start=0.8, t_end=0.2)
    assert S.temperature(one, 0) == 0.8  # a single iteration stays at the start


def test_score_config_refuses_batches_without_a_shared_cache():
    assert S.ScoreConfig(max_batch=1).max_batch == 1 and S.ScoreConfig(max_batch=2, shared_cache=True).max_batch == 2
    with pytest.raises(
        ValueError, match=r"^max_batch > 1 needs shared_cache \(batches are shared between the analysis"
    ):
        S.ScoreConfig(max_batch=2)
    with pytest.raises(ValueError, match=r"^tuning: expected one of \(.*\) or the path of an OpenCL tuning file$"):
        S.ScoreConfig(tuning="")


@pytest.mark.parametrize("key", ["beam_width", "beam_passes", "beam_widen", "beam_widen_found"])
def test_beam_width_and_passes_one_or_per_length(key):
    import jsonschema

    schema = yaml.safe_load((REPO / "config/schema.yaml").read_text())["properties"]["inference"]
    for good in (32, {40: 128, 60: 32}):
        jsonschema.validate({key: good}, schema)
    for bad in (0, {40: 0}, {}, {40: "wide"}, 12.5):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({key: bad}, schema)
    assert S.for_length(40, 32) == 32 and S.for_length(100, "64") == 64
    table = {40: 256, "60": 128, 100: 32}
    assert [S.for_length(n, table) for n in (40, 60, 100)] == [256, 128, 32]
    # A length the table leaves out is refused, naming the key and the length, never the nearest's value.
    for n in (20, 50, 80, 120):
        with pytest.raises(
            ValueError,
            match=rf"^inference.{key} gives no value for {n} moves \(it gives 40, 60, "
            rf"100\): add {n} to the table, or give one value for every length$",
        ):
            S.for_length(n, table, f"inference.{key}")
    S.check_per_length({key: table, "iterations": {20: 1}}, [40, 60, 100])  # iterations: the nearest rule
    S.check_per_length({key: 7}, [20, 33])
    with pytest.raises(ValueError, match=rf"^inference.{key} gives no value for 80 moves"):
        S.check_per_length({key: table}, [40, 80, 100])


# A run's identity: the settings that change its orders, and no others.
RUN = {
    "method": "beam",
    "beam_width": {40: 128, 80: 32},
    "beam_future": 1.0,
    "init": "greedy",
    "neighbour": "mix",
    "iterations": None,
    "trials": 5,
    "t_start": 1.0,
    "t_end": 0.1,
}
INFERENCE = {"patience": 2, "beam_passes": {40: 1, 80: 2}, "beam_widen": 4, "schedule": "geometric", "seed": 7}
POLICY = {"precision": "float32", "average_symmetries": False, "legal_only": False}


def label(run=RUN, n=80, inference=INFERENCE, policy=POLICY, captures=True):
    return S.run_label(S.run_identity(run, n, inference, policy, captures))


def test_a_beam_runs_folder_names_the_capture_search_and_no_annealing_setting():
    assert label() == "beam32f1-pat2-pass2-widen4"
    assert label(n=40) == "beam128f1-pat2-pass1"  # one pass: the widening is never used
    assert label(captures=False) == "beam32f1"  # no position with captures: patience and passes unused
    # settings the beam never reads leave its folder alone
    for key, value in (("iterations", 99), ("trials", 1), ("neighbour", "swp2"), ("t_start", 3.0), ("init", "random")):
        assert label(run={**RUN, key: value}) == label()
    assert label(inference={**INFERENCE, "seed": 8, "schedule": "linear"}) == label()
    # settings it reads change it
    for key, value in (("patience", 0), ("beam_widen", 2), ("beam_passes", 3)):
        assert label(inference={**INFERENCE, key: value}) != label()
    assert label(run={**RUN, "beam_future": 0.5}) == "beam32f0.5-pat2-pass2-widen4"
    # the widening within a plan: named where it is set (older folders keep their names), with passes only
    assert label(inference={**INFERENCE, "beam_widen_found": 2}) == "beam32f1-pat2-pass2-widen4-found2"
    assert label(inference={**INFERENCE, "beam_widen_found": 1}) == label()
    assert label(n=40, inference={**INFERENCE, "beam_widen_found": {40: 2, 80: 2}}) == "beam128f1-pat2-pass1"
    # the merge of the capture search's prefixes: named where other than input (older folders keep their names)
    assert label(inference={**INFERENCE, "capture_merge": "board"}) == "beam32f1-pat2-pass2-widen4-mergeboard"
    assert label(inference={**INFERENCE, "capture_merge": "input"}) == label()
    assert label(captures=False, inference={**INFERENCE, "capture_merge": "board"}) == "beam32f1"  # never read there
    # the proposer: named where set and read (two passes or more: it proposes for the pass after the first)
    assert label(inference={**INFERENCE, "capture_proposer": "tygem"}) == "beam32f1-pat2-pass2-widen4-proptygem"
    assert label(inference={**INFERENCE, "capture_proposer": "none"}) == label()
    assert label(n=40, inference={**INFERENCE, "capture_proposer": "tygem"}) == "beam128f1-pat2-pass1"
    # the orientations searched: named where other than the board as given (older folders keep their names)
    assert label(run={**RUN, "orientations": "given"}) == label()
    assert label(run={**RUN, "orientations": "seats"}) == "beam32f1-turnseats-pat2-pass2-widen4"
    assert label(run={**RUN, "orientations": "all"}, captures=False) == "beam32f1-turnall"
    # calibration games change the answers' chances: named on capture-free runs, which state chances
    cal = {**INFERENCE, "calibration": 100}
    assert label(run={**RUN, "orientations": "seats"}, inference=cal, captures=False) == "beam32f1-turnseats-cal100"
    assert label(inference={**INFERENCE, "calibration": 0}, captures=False) == "beam32f1"
    assert label(inference=cal) == label()  # positions with captures state no chance


def test_an_annealing_runs_folder_names_every_annealing_setting_and_no_beam_setting():
    run = {**RUN, "method": "anneal"}
    run20 = {**run, "beam_width": 128}
    assert label(run20, n=20) == "anneal-greedy-mix-it5000-tr5-T1-0.1-geometric-seed7"  # the paper's 5,000 at 20
    assert label(run, n=40) == "anneal-greedy-mix-it20000-tr5-T1-0.1-geometric-seed7"
    assert label({**run, "iterations": 300}, n=40) == "anneal-greedy-mix-it300-tr5-T1-0.1-geometric-seed7"
    assert label({**run, "beam_width": 7, "beam_future": 0.0, "orientations": "seats"}) == label(run)
    assert label(run, inference={**INFERENCE, "patience": 0, "beam_widen": 1}) == label(run)
    assert label(run, inference={**INFERENCE, "seed": 8}) != label(run)
    assert label(run, inference={**INFERENCE, "calibration": 100}) == label(run)  # the annealing states no chance
    assert label({**run, "method": "beam+anneal", "init": "beam"}, n=40) == (
        "beam128f1+anneal-mix-it20000-tr5-T1-0.1-geometric-seed7"
    )
    assert label(run, policy={**POLICY, "precision": "bfloat16", "legal_only": True}).endswith("-bfloat16-legal")
