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
    "inference": S.AnnealConfig,
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
    assert S.AnnealConfig().iterations is None  # the length decides
    assert S.AnnealConfig().for_length(20).iterations == 5000 and S.AnnealConfig().for_length(40).iterations == 20000
    assert S.AnnealConfig().for_length(30).iterations == 5000  # tie: the shorter length's
    assert S.AnnealConfig().for_length(31).iterations == 20000
    assert S.AnnealConfig(iterations=7).for_length(40).iterations == 7
    assert S.AnnealConfig().for_length(25, {20: 10, 30: 99}).iterations == 10


def options(verb):
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[verb]
    return {a.dest: a.default for a in sub._actions if a.option_strings}


@pytest.mark.parametrize(
    "verb,cls",
    [
        ("train-policy", S.TrainConfig),
        ("score", S.ScoreConfig),
        ("infer", S.AnnealConfig),
        ("infer-set", S.AnnealConfig),
        ("filter", S.FilterConfig),
    ],
)
def test_every_verb_takes_its_defaults_from_settings(verb, cls):
    given = options(verb)
    default = cls()
    shared = [f.name for f in fields(cls) if f.name in given]
    assert shared
    for name in shared:
        assert given[name] == getattr(default, name), f"{verb} --{name}: {given[name]!r} != {getattr(default, name)!r}"
    if verb == "infer-set":
        assert given["chunk"] == S.PolicyConfig().chunk and given["precision"] == S.PolicyConfig().precision


def test_batches_of_more_than_one_position_need_the_shared_cache():
    """One check, in ScoreConfig: `moveorder score`, `score_file` and the workflow's config all go through it."""
    with pytest.raises(ValueError, match="max_batch > 1 needs shared_cache"):
        S.from_mapping(S.ScoreConfig, {"max_batch": 4, "binary": None, "runtime_minutes": 5})
    assert S.from_mapping(S.ScoreConfig, {"max_batch": 4, "shared_cache": True}).max_batch == 4
