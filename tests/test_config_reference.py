"""config/README.md, config/schema.yaml and config/config.yaml name the same keys and agree on them.

A key added to the workflow needs, in this order:
  1. config/config.yaml: the key with its default (config.yaml is the full default configuration);
  2. config/schema.yaml: the property, with its type and a one-line ``description``;
  3. config/README.md: a row in its section's table of "Key reference", columns
     | `section.key` | type | `default` (config.yaml's, as YAML) | rule file(s) reading it | shipped overrides | meaning |
     where "meaning" is the schema's description word for word, and "shipped overrides" lists every
     config/*.yaml that sets it (``file.yaml: `value```) and every sweep file whose runs give it values;
  4. if settings.py has a dataclass field of the same name in the section's dataclass (or one listed in
     CROSS_SECTION), the same default, or an entry in DELIBERATE below saying why not.
Each test's failure message names the keys and what is missing.
"""

import re
from dataclasses import fields

import pytest
import yaml

from helpers import REPO
from moveorder import settings as S

CONFIG = REPO / "config"
#: Maps of named entries: their fields are keys NAME.field (``datasets.NAME.urls``), documented once.
MAPS = ("datasets", "networks", "katago.models")
#: The shipped configurations merged over config.yaml (config/*.yaml less config, schema, paper_results).
OVERLAYS = sorted(
    p.name for p in CONFIG.glob("*.yaml") if p.name not in ("config.yaml", "schema.yaml", "paper_results.yaml")
)
#: What a sweep's run may set -> the configuration key it stands for (``dataset`` and ``n`` pick a set and
#: a length of ``sets`` and ``selection.lengths``, not a value of them).
SWEEP_SETTINGS = {
    "method": "inference.method",
    "beam_width": "inference.beam_width",
    "beam_future": "inference.beam_future",
    "orientations": "inference.orientations",
    "init": "inference.init",
    "neighbour": "inference.neighbour",
    "iterations": "inference.iterations",
    "trials": "inference.trials",
    "t_start": "inference.t_start",
    "t_end": "inference.t_end",
    "network": "policy.network",
}


def load(path):
    return yaml.safe_load(path.read_text())


# --- the keys, walked mechanically -------------------------------------------------------------------


def schema_properties(props=None, prefix=""):
    """Every property of the schema, dotted (``inference.beam_width``, ``datasets.NAME.urls[].url``) -> its schema;
    sections (``inference``) included."""
    if props is None:
        props = load(CONFIG / "schema.yaml")["properties"]
    out = {}
    for name, spec in props.items():
        key = prefix + name
        out[key] = spec
        if "properties" in spec:
            out.update(schema_properties(spec["properties"], key + "."))
        entry = spec.get("additionalProperties")
        if isinstance(entry, dict) and "properties" in entry:  # a map of named entries
            out.update(schema_properties(entry["properties"], key + ".NAME."))
        items = spec.get("items")
        if isinstance(items, dict) and "properties" in items:  # a list of records (datasets.NAME.urls)
            out.update(schema_properties(items["properties"], key + "[]."))
    return out


def schema_sections():
    return {k for k, v in schema_properties().items() if "properties" in v}


def schema_keys():
    """The documented keys: every property but the sections themselves."""
    return set(schema_properties()) - schema_sections()


def config_keys(data=None):
    """config.yaml's keys -> values: top-level mappings are sections, walked one level; a map of named entries
    gives its own key (value: the entry names) and NAME.field for the fields its entries use."""
    data = load(CONFIG / "config.yaml") if data is None else data
    out = {}

    def entries(key, value):
        out[key] = sorted(value)
        for entry in value.values():
            for field, v in entry.items():
                out[f"{key}.NAME.{field}"] = None
                if isinstance(v, list):
                    for item in v:
                        if isinstance(item, dict):
                            out.update({f"{key}.NAME.{field}[].{f}": None for f in item})

    for top, value in data.items():
        if top in MAPS:
            entries(top, value)
        elif isinstance(value, dict):
            for name, v in value.items():
                key = f"{top}.{name}"
                if key in MAPS:
                    entries(key, v)
                else:
                    out[key] = v
        else:
            out[top] = value
    return out


def entry_field(key):
    return ".NAME." in key


# --- the README's tables -----------------------------------------------------------------------------

ROW = re.compile(r"^\| `([^`]+)` \|(.*)\|\s*$")


def readme_rows():
    """Key -> {type, default, read_by, overrides, meaning} from the tables under "## Key reference"."""
    text = (CONFIG / "README.md").read_text()
    start = text.index("\n## Key reference")
    end = text.find("\n## ", start + 1)
    rows = {}
    for line in text[start : end if end > 0 else None].splitlines():
        m = ROW.match(line)
        if not m:
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", m.group(2))]
        assert len(cells) == 5, f"config/README.md: row of {m.group(1)!r} has {len(cells) + 1} cells, not 6"
        assert m.group(1) not in rows, f"config/README.md: two rows for {m.group(1)!r}"
        rows[m.group(1)] = dict(zip(("type", "default", "read_by", "overrides", "meaning"), cells))
    return rows


def cell_value(cell):
    """A `backticked` YAML value of a cell -> the value."""
    m = re.fullmatch(r"`([^`]*)`", cell)
    assert m, f"expected one `value` in backticks, got {cell!r}"
    return yaml.safe_load(m.group(1)) if m.group(1) else ""


# --- config.yaml, the schema and the README name the same keys ---------------------------------------


def test_the_walks_find_the_keys():
    """The walks themselves, on a small configuration: sections walked one level, maps of named entries once."""
    data = {
        "seed": 1,
        "datasets": {"a": {"urls": [{"url": "u", "sha256": None}], "komi": 6.5}, "b": {"path": "p"}},
        "inference": {"iterations": {20: 5}, "beam_width": {20: 8}},
        "katago": {"models": {"m": {"from_wheel": True}}, "visits": 3},
    }
    assert config_keys(data) == {
        "seed": 1,
        "datasets": ["a", "b"],
        "datasets.NAME.urls": None,
        "datasets.NAME.urls[].url": None,
        "datasets.NAME.urls[].sha256": None,
        "datasets.NAME.komi": None,
        "datasets.NAME.path": None,
        "inference.iterations": {20: 5},
        "inference.beam_width": {20: 8},
        "katago.models": ["m"],
        "katago.models.NAME.from_wheel": None,
        "katago.visits": 3,
    }
    keys = schema_keys()
    assert {"seed", "inference.beam_width", "datasets.NAME.urls[].sha256", "katago.models.NAME.url"} <= keys
    assert {"inference", "katago", "threads"} <= schema_sections() and not keys & schema_sections()


def test_config_and_schema_name_the_same_keys():
    config, schema = set(config_keys()), schema_keys()
    lacking = sorted(config - schema)
    assert not lacking, (
        f"config.yaml has keys config/schema.yaml does not: {lacking}; add each property with its type and a "
        "description (and a row in config/README.md)"
    )
    # Entry fields are optional (a dataset gives urls or a path); every other key is stated in config.yaml.
    missing = sorted(k for k in schema - config if not entry_field(k))
    assert not missing, (
        f"config/schema.yaml has keys config.yaml does not state: {missing}; config.yaml is the full default "
        "configuration: add each with its default"
    )


def test_every_schema_property_has_a_description():
    props = schema_properties()
    bare = sorted(k for k, v in props.items() if not str(v.get("description", "")).strip())
    assert not bare, f"config/schema.yaml: properties without a description: {bare}"
    assert len(props) >= 87  # every key, section, entry field and URL field: a walk that lost some fails here


def test_readme_documents_every_key_and_no_other():
    rows, keys = set(readme_rows()), schema_keys()
    missing, stale = sorted(keys - rows), sorted(rows - keys)
    assert not missing, (
        f"config/README.md has no row for {missing}; add to its section's table under 'Key reference': "
        "| `KEY` | type | `default` | rule file | shipped overrides | the schema's description |"
    )
    assert not stale, f"config/README.md documents keys the schema does not have: {stale}"


def test_readme_meanings_are_the_schema_descriptions():
    props = schema_properties()
    for key, row in readme_rows().items():
        assert row["meaning"].replace("\\|", "|") == props[key]["description"], (
            f"config/README.md's meaning of {key} differs from config/schema.yaml's description"
        )


def test_readme_defaults_are_config_yaml_values():
    config, props, rows = config_keys(), schema_properties(), readme_rows()
    for key, row in rows.items():
        cell = row["default"]
        if key in MAPS:  # "entries `a`, `b`": the entries config.yaml defines
            assert sorted(re.findall(r"`([^`]+)`", cell)) == config[key], f"README default of {key}: {cell!r}"
        elif entry_field(key):  # the schema's default where it has one, else —
            expected = props[key].get("default")
            if "default" in props[key]:
                assert cell_value(cell) == expected, f"README default of {key}: {cell!r}, schema {expected!r}"
            else:
                assert cell == "—", f"README default of {key}: {cell!r}; the schema gives none: —"
        else:
            assert cell_value(cell) == config[key], f"README default of {key}: {cell!r}, config.yaml {config[key]!r}"
    # a cross-check that the parsing reads values, not text
    assert cell_value(rows["inference.iterations"]["default"]) == {20: 5000, 40: 20000}
    assert cell_value(rows["training.init"]["default"]) == ""


def shipped_overrides(key):
    """What the README's column should say of ``key``: {overlay: value} and {sweep file: values}."""
    overlays = {}
    for name in OVERLAYS:
        data = load(CONFIG / name)
        for part in key.split("."):
            if not isinstance(data, dict) or part not in data:
                break
            data = data[part]
        else:
            overlays[name] = data
    sweeps = {}
    for path in sorted((CONFIG / "sweeps").glob("*.yaml")):
        spec = load(path)
        settings = [spec.get("base", {}), spec.get("axes", {}), *spec.get("runs", [])]
        values = [v for s in settings for k, v in s.items() if SWEEP_SETTINGS.get(k) == key]
        if values:
            sweeps["sweeps/" + path.name] = values
    return overlays, sweeps


@pytest.mark.parametrize("key", sorted(k for k in config_keys() if not entry_field(k) and k not in MAPS))
def test_readme_overrides_are_the_shipped_files(key):
    row = readme_rows().get(key)
    if row is None:
        pytest.fail(f"config/README.md has no row for {key} (see test_readme_documents_every_key_and_no_other)")
    cell = row["overrides"]
    overlays, sweeps = shipped_overrides(key)
    if not overlays and not sweeps:
        assert cell == "—", f"config/README.md: no shipped file sets {key}, yet its column says {cell!r}"
        return
    said = dict(part.split(": ", 1) for part in cell.split("; "))
    for name, value in overlays.items():
        assert name in said, f"config/README.md: {name} sets {key} to {value!r}; its column omits it"
        assert cell_value(said.pop(name)) == value, f"config/README.md: {key} in {name} is {value!r}"
    for name in sweeps:
        assert name in said, f"config/README.md: {name} gives {key} values; its column omits it"
        said.pop(name)
    assert not said, f"config/README.md: {key}'s column names files that do not set it: {sorted(said)}"


def test_readme_read_by_names_rule_files_that_read_the_key():
    rules = {p.name: p.read_text() for p in (REPO / "workflow" / "rules").glob("*.smk")}
    for key, row in readme_rows().items():
        named = re.findall(r"[\w-]+\.smk", row["read_by"])
        assert named, f"config/README.md: {key} names no rule file"
        assert set(named) <= set(rules), f"config/README.md: {key} names {set(named) - set(rules)}"
        leaf = re.sub(r"\[\]$", "", key.rsplit(".", 1)[-1].replace("[]", ""))
        assert any(re.search(rf"\b{re.escape(leaf)}\b", rules[n]) for n in named), (
            f"config/README.md: none of {named} mentions {leaf!r} ({key})"
        )


def test_readme_lists_every_shipped_configuration():
    text = (CONFIG / "README.md").read_text()
    table = text[text.index("## Shipped configuration files") : text.index("## Reading the tables")]
    files = [p.name for p in CONFIG.glob("*.yaml")]
    files += ["sweeps/" + p.name for p in (CONFIG / "sweeps").glob("*.yaml")]
    files += ["profiles/" + p.name + "/" for p in (CONFIG / "profiles").iterdir() if p.is_dir()]
    missing = sorted(f for f in files if f"| `{f}` |" not in table)
    assert not missing, f"config/README.md's table of shipped configuration files lacks {missing}"


# --- config.yaml's defaults against the package's (settings.py) --------------------------------------

#: A config section -> the dataclasses whose same-named fields are its package defaults.
SECTION_CLASSES = {
    "inference": (S.SearchConfig, S.PolicyConfig),  # PolicyConfig: chunk and cache_size
    "training": (S.TrainConfig,),
    "katago": (S.ScoreConfig,),
    "policy": (S.PolicyConfig,),
    "filter": (S.FilterConfig,),
    "selection": (S.SelectConfig,),
}
#: Keys whose package default lives under another name.
CROSS_SECTION = {
    "seed": ["SearchConfig.seed", "TrainConfig.seed"],
    "threads.train": ["TrainConfig.threads"],
    "policy.network": ["SHIPPED_NETWORK"],
}

#: (config key, package default) -> (the package's value, why config.yaml, the paper's experiment, differs).
#: An entry whose two sides come to agree, or whose package value changes, fails the test: keep it current.
DELIBERATE = {
    ("seed", "SearchConfig.seed"): (
        0,
        "the workflow's one seed for the whole experiment (selection, split, training, annealing); a "
        "command-line search without --seed uses 0",
    ),
    ("seed", "TrainConfig.seed"): (0, "as SearchConfig.seed: `moveorder train` alone seeds with 0"),
    ("threads.train", "TrainConfig.threads"): (
        0,
        "0 = torch's own thread count for `moveorder train` alone; a workflow job states its cores, which "
        "the scheduler reserves for it",
    ),
    ("policy.network", "SHIPPED_NETWORK"): (
        "tygem-6x128",
        "the paper's likelihood is Leela Zero's best_v1 (downloaded); the package's player defaults to the "
        "network it ships, which needs no download",
    ),
    ("inference.iterations", "SearchConfig.iterations"): (
        None,
        "None = the paper's table for the length (settings.PAPER_ITERATIONS); config.yaml states that table",
    ),
}

#: Dataclass fields with no configuration key: set on the command line, or fixed for the workflow.
PACKAGE_ONLY = {
    "SearchConfig.incremental": "the naive re-evaluation, a reference for tests; never a run's choice",
    "TrainConfig.weight_decay": "AdamW's weight decay: the package's, for every network",
    "TrainConfig.value_weight": "the value loss's weight: the package's, for every network",
    "TrainConfig.checkpoint_every": "steps between checkpoints: the package's (a killed job resumes)",
    "ScoreConfig.timeout": "seconds without a reply from KataGo before giving up: the package's",
}


def package_default(name):
    if "." not in name:
        return getattr(S, name)
    cls, field = name.split(".")
    value = getattr(getattr(S, cls)(), field)
    return list(value) if isinstance(value, tuple) else value


def package_pairs():
    """(config key, package default name) for every key with a package default."""
    config = config_keys()
    pairs = []
    for section, classes in SECTION_CLASSES.items():
        for cls in classes:
            for f in fields(cls):
                if f"{section}.{f.name}" in config:
                    pairs.append((f"{section}.{f.name}", f"{cls.__name__}.{f.name}"))
    pairs += [(key, name) for key, names in CROSS_SECTION.items() for name in names]
    return pairs


def test_config_defaults_are_the_package_defaults_or_listed_differences():
    config = config_keys()
    for key, name in package_pairs():
        ours, theirs = config[key], package_default(name)
        if (key, name) in DELIBERATE:
            listed, why = DELIBERATE[(key, name)]
            assert why and theirs == listed, f"DELIBERATE[{key}, {name}]: the package's value is now {theirs!r}"
            assert ours != theirs, f"config.yaml's {key} now equals {name} ({ours!r}): remove it from DELIBERATE"
        else:
            assert ours == theirs, (
                f"config.yaml {key} = {ours!r}, the package's {name} = {theirs!r}: make them agree, or list "
                "the difference and its reason in DELIBERATE"
            )
    assert set(DELIBERATE) <= set(package_pairs()), "DELIBERATE names pairs that are not compared"


def test_every_package_default_has_a_key_or_is_listed():
    mapped = {name for _, name in package_pairs()}
    classes = {cls for classes in SECTION_CLASSES.values() for cls in classes}
    unmapped = {f"{c.__name__}.{f.name}" for c in classes for f in fields(c)} - mapped
    assert unmapped == set(PACKAGE_ONLY), (
        f"settings.py fields without a config key, not in PACKAGE_ONLY: {sorted(unmapped - set(PACKAGE_ONLY))}; "
        f"in PACKAGE_ONLY but mapped or gone: {sorted(set(PACKAGE_ONLY) - unmapped)}"
    )


def test_the_paper_settings_stand_in_config_yaml():
    """Values from the paper itself (Sections 4, 5.1, 5.2), not from the code: config.yaml states them."""
    config = config_keys()
    assert config["inference.iterations"] == {20: 5000, 40: 20000}
    assert config["inference.trials"] == 5
    assert (config["inference.t_start"], config["inference.t_end"]) == (1.0, 0.1)
    assert config["inference.neighbour"] == "mix" and config["inference.init"] == "greedy"
    assert config["selection.lengths"] == [20, 40] and config["selection.games"] == 100
    assert config["filter.capture_free"] == 50
    assert config["policy.network"] == "best_v1" and config["policy.legal_only"] is False
    assert config["katago.delta_max"] == "best_move"
