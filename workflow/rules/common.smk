# Helpers shared by every stage: config checks, path builders, wildcard constraints.
# Rules run `moveorder VERB`: from the activated venv (README) or a rule's conda env.
import os
import re
import shlex
import sys
from pathlib import Path
from urllib.parse import urlsplit

# The package's pure modules (standard library and PyYAML only) hold the domain logic the workflow
# shares with the command line: the defaults (moveorder.settings) and sweep files (moveorder.report.sweeps).
sys.path.insert(0, os.path.join(workflow.basedir, "src"))
from moveorder import settings as mo_settings  # noqa: E402
from moveorder.nets import shipped as mo_shipped  # noqa: E402
from moveorder.report import sweeps as mo_sweeps  # noqa: E402

for _name in config["sets"]:
    if _name not in config["datasets"]:
        raise ValueError(
            f"config: sets names {_name!r}, which is not a key of `datasets`"
        )
for _name in config["training"]["sets"]:
    if _name not in config["datasets"]:
        raise ValueError(
            f"config: training.sets names {_name!r}, which is not a key of `datasets`"
        )

for _n in config["training"].get("cross_lengths", []):
    if int(_n) not in [int(n) for n in config["selection"]["lengths"]]:
        raise ValueError(
            f"config: training.cross_lengths has {_n}, which is not one of selection.lengths"
        )

if config["training"]["even_only"] and not config["training"]["packed"]:
    raise ValueError(
        "config: training.even_only leaves the handicap games out of a packed pool; it needs "
        "training.packed: true (the JSONL pool trains on every game)"
    )

# `policy.network: own-level`: each set is inferred with the network trained on its own pool.
OWN_LEVEL = "own-level"
if config["policy"]["network"] == OWN_LEVEL:
    _untrained = [s for s in config["sets"] if s not in config["training"]["sets"]]
    if _untrained:
        raise ValueError(
            f"config: policy.network is {OWN_LEVEL!r}, but no network is trained for "
            f"{_untrained} (add them to training.sets)"
        )
try:  # the scoring settings, checked where `moveorder score` checks them
    mo_settings.from_mapping(mo_settings.ScoreConfig, config["katago"])
except ValueError as _err:
    raise ValueError(f"config: katago: {_err}") from None

DATASETS = list(config["datasets"])
# The paper's published numbers, shipped with the workflow (found from any working directory).
PAPER_RESULTS = os.path.join(workflow.basedir, "config", "paper_results.yaml")
LENGTHS = [int(n) for n in config["selection"]["lengths"]]
try:  # a per-length table (inference.beam_width, beam_passes, beam_widen, beam_widen_found) gives every length its value
    mo_settings.check_per_length(config["inference"], LENGTHS)
except ValueError as _err:
    raise ValueError(
        f"config: {_err} (selection.lengths: {', '.join(map(str, LENGTHS))})"
    ) from None

# selection.calibration: games more per set, each run of the ranked beam inferring them to fit its stated
# chances (calibrate_run). The chances are fitted on capture-free openings only.
CALIBRATION_GAMES = int(config["selection"]["calibration"])
if CALIBRATION_GAMES and config["selection"]["captures"] != "forbidden":
    raise ValueError(
        "config: selection.calibration asks for calibration games, and selection.captures is "
        f"{config['selection']['captures']!r}: no chance is stated for a position with captures (the "
        "calibrations are fitted on capture-free openings); set selection.calibration to 0"
    )

# The paper's Assumption 3 at every length: a capture-free clip needs games capture-free that far.
_reach = min(int(config["filter"]["capture_free"]), int(config["filter"]["min_moves"]))
if config["selection"]["captures"] == "forbidden" and max(LENGTHS) > _reach:
    raise ValueError(
        f"config: selection.lengths has {max(LENGTHS)}, beyond filter.capture_free ({config['filter']['capture_free']}) "
        f"or filter.min_moves ({config['filter']['min_moves']}): with selection.captures 'forbidden' a clip of "
        f"{max(LENGTHS)} moves must come from games with no capture or pass that far; raise both to at least "
        f"{max(LENGTHS)} (as config/long.yaml does) or allow captures"
    )


def url_filename(url):
    return Path(urlsplit(url).path).name


def dataset_files(dataset):
    """What the extract step reads for a dataset: its downloaded files, or its local path."""
    spec = config["datasets"][dataset]
    if "path" in spec:
        return [spec["path"]]
    return [f"data/raw/{dataset}/{url_filename(u['url'])}" for u in spec["urls"]]


def url_spec(dataset, filename):
    for u in config["datasets"][dataset].get("urls", []):
        if url_filename(u["url"]) == filename:
            return u
    raise ValueError(f"dataset {dataset!r} has no URL ending in {filename!r}")


# The offline mirror is read by jobs that run in the working directory (`--directory`), so a
# relative `mirror` is taken from there; a folder that is not there is refused before any job runs.
if config.get("mirror") and not os.path.isdir(config["mirror"]):
    raise ValueError(
        f"config: mirror {config['mirror']!r} is not a folder, seen from the working directory "
        f"{os.getcwd()!r} (a relative mirror is read from there: with --directory, give an absolute path)"
    )


def mirror_option():
    return f"--mirror {config['mirror']!r}" if config.get("mirror") else ""


def data_targets():
    out = []
    for s in config["sets"]:
        out += expand("data/arrangements/{dataset}/{n}m.jsonl", dataset=s, n=LENGTHS)
        out += [
            f"results/data/{s}/filter_report.csv",
            f"results/data/{s}/pool_report.csv",
            f"data/pool/{s}.jsonl",
        ]
    return out


def network_key(spec, dataset=None):
    """A policy as named in config -> the name its runs are filed under (no slashes).

    ``own-level`` names the network trained on ``dataset``'s own pool.
    """
    if spec == OWN_LEVEL:
        if dataset is None:
            raise ValueError(
                f"network {OWN_LEVEL!r} depends on the set it infers; no set given"
            )
        return f"trained-{dataset}"
    if (
        spec.startswith("trained-")
        or spec in config["networks"]
        or spec in mo_shipped.names()
    ):
        return spec
    return "file-" + "".join(
        c if c.isalnum() or c in "-_." else "_" for c in Path(spec).name
    )


def set_networks():
    """Each evaluated set -> the key of the network its main runs use."""
    return {s: network_key(config["policy"]["network"], s) for s in config["sets"]}


# The networks we train, one per set (`training.sets`), and the sets whose held-out games they are
# compared on (results/networks/cross_level.csv).
TRAINED_SETS = list(config["training"]["sets"])
CROSS_SETS = list(dict.fromkeys(TRAINED_SETS + list(config["sets"])))
CROSS_LENGTHS = [int(n) for n in config["training"].get("cross_lengths", [])]


def trained_network_targets():
    out = expand(
        "results/networks/trained-{dataset}/metrics.json", dataset=TRAINED_SETS
    )
    return out + (["results/networks/cross_level.csv"] if TRAINED_SETS else [])


def network_file(key):
    """The file behind a network key: trained-SET (ours), a key of `networks` (by URL), a shipped one, or a user's file."""
    if key.startswith("trained-"):
        return f"results/networks/{key}/model.pt"
    if key in config["networks"]:
        return f"data/networks/{key}/{url_filename(config['networks'][key]['url'])}"
    if key in mo_shipped.names():
        return str(mo_shipped.weights(key))
    for spec in [config["policy"]["network"], *config.get("extra_networks", [])]:
        if network_key(spec) == key:
            return spec
    raise ValueError(f"no network known as {key!r}")


# One inference run = a network and every setting that changes its orders (moveorder.settings.run_identity);
# its folder is results/inferred/NETWORK/LABEL, the label naming those settings and no others
# (moveorder.settings.run_label). RUNS maps each planned folder back to its settings.
RUN_NAME = "{network}/{label}"


def method_args(ident):
    """A run's identity -> infer-set's --method, --beam-width, --beam-future and --orientations."""
    if ident["method"] == "anneal":
        return "--method anneal"
    turns = (
        f" --orientations {ident['orientations']}" if "orientations" in ident else ""
    )
    return (
        f"--method {ident['method']} --beam-width {ident['beam_width']} "
        f"--beam-future {ident['beam_future']:g}{turns}"
    )


RUN_DIR = f"results/inferred/{RUN_NAME}"
RUNS = {}
# Each planned folder -> the (set, n) it infers: a calibrated run fits its chances on those sets'
# calibration games at those lengths.
RUN_ENTRIES = {}


def run_calibration(wildcards):
    """A run folder's calibration (made by calibrate_run), or none: runs of the ranked beam on capture-free
    positions when selection.calibration asks for games."""
    if "calibration" not in run_settings(wildcards):
        return []
    return [f"results/inferred/{wildcards.network}/{wildcards.label}/calibration.json"]


def calibration_results(wildcards):
    """The calibration games' answers a run folder's fit reads: each set and length it infers."""
    name = f"{wildcards.network}/{wildcards.label}"
    return [
        f"results/inferred/{name}/calibration/{s}/{n}m.jsonl"
        for s, n in sorted(RUN_ENTRIES.get(name, ()))
    ]


def iterations_for(n):
    """Iterations for a length from config's table (the paper's: 5,000 for 20 moves, 20,000 for 40)."""
    return mo_settings.iterations_for(n, config["inference"]["iterations"])


def main_run(dataset=None, **overrides):
    """The main experiment's run parameters for a set (the paper's, from config), with any overrides.

    ``dataset`` picks the network under ``policy.network: own-level``.
    """
    inf = config["inference"]
    network = config["policy"]["network"]
    run = {
        "network": (
            network_key(network, dataset) if "network" not in overrides else None
        ),
        "method": inf["method"],
        "beam_width": inf["beam_width"],
        "beam_future": inf["beam_future"],
        "orientations": inf["orientations"],
        "init": inf["init"],
        "neighbour": inf["neighbour"],
        "trials": inf["trials"],
        "t_start": inf["t_start"],
        "t_end": inf["t_end"],
        "iterations": None,
    }
    run.update(overrides)
    # Annealing from the beam's orders has one name: method beam+anneal, init beam (init: beam asks for it too).
    if run["method"] == "beam+anneal" or (
        run["method"] == "anneal" and run["init"] == "beam"
    ):
        run.update(method="beam+anneal", init="beam")
    return run


def run_identity(run, n, dataset):
    """The settings that change this run's orders of ``dataset`` at n moves."""
    inference = {
        **config["inference"],
        "seed": config["seed"],
        "calibration": CALIBRATION_GAMES,
    }
    captures = config["selection"]["captures"] != "forbidden"
    return mo_settings.run_identity(run, int(n), inference, config["policy"], captures)


def run_name(run, n, dataset=None):
    """A run's folder at n moves (NETWORK/LABEL), registered in RUNS for the rules that make it."""
    ident = run_identity(run, n, dataset)
    name = f"{run['network']}/{mo_settings.run_label(ident)}"
    if RUNS.get(name, ident) != ident:
        raise ValueError(
            f"run folder {name!r} names two different runs: {RUNS[name]} and {ident}"
        )
    RUNS[name] = ident
    if dataset is not None:
        RUN_ENTRIES.setdefault(name, set()).add((dataset, int(n)))
    return name


def run_settings(wildcards):
    """The identity of the run whose folder a job makes (every planned run is registered when the workflow is read)."""
    name = f"{wildcards.network}/{wildcards.label}"
    if name not in RUNS:
        raise ValueError(
            f"no planned inference run has the folder results/inferred/{name}"
        )
    return RUNS[name]


def run_args(wildcards):
    """infer-set's search options for a run's folder: the method's settings, and the defaults for the rest."""
    ident = run_settings(wildcards)
    inf = config["inference"]
    get = lambda key: ident.get(key, inf.get(key))
    iterations = ident.get("iterations") or mo_settings.iterations_for(
        int(wildcards.n), inf["iterations"]
    )
    init = ident.get("init") or (
        "beam" if ident["method"] == "beam+anneal" else inf["init"]
    )
    return " ".join(
        [
            method_args(ident),
            f"--iterations {iterations} --trials {get('trials')} --init {init}",
            f"--neighbour {get('neighbour')} --t-start {get('t_start')} --t-end {get('t_end')} --schedule {get('schedule')}",
            f"--patience {get('patience')} --beam-passes {ident.get('beam_passes', 1)} --beam-widen {ident.get('beam_widen', 1)} --beam-widen-found {ident.get('beam_widen_found', 1)} --capture-merge {ident.get('capture_merge', 'input')} --capture-proposer {ident.get('capture_proposer', 'none')}",
        ]
    )


def infer_options(wildcards):
    """infer-set's options every inference of a run folder shares: its search (run_args), the seed, chunk,
    cache, precision and the network's input."""
    cache = config["inference"]["cache_size"]
    policy = config["policy"]
    return " ".join(
        [
            run_args(wildcards),
            f"--seed {config['seed']} --chunk {config['inference']['chunk']}",
        ]
        + ([] if cache is None else [f"--cache-size {cache}"])
        + [f"--precision {policy['precision']}"]
        + (["--average-symmetries"] if policy["average_symmetries"] else [])
        + (["--legal-only"] if policy["legal_only"] else [])
    )


def run_path(run, dataset, n, suffix):
    return os.path.join(
        "results", "inferred", run_name(run, n, dataset), dataset, f"{n}m{suffix}"
    )


# `inference.also_methods`: the main experiment again with another search (the same networks and settings
# otherwise), each scored and reported on its own (results/methods/METHOD/).
ALSO_METHODS = list(config["inference"].get("also_methods", []))
if config["inference"]["method"] in ALSO_METHODS:
    raise ValueError(
        f"config: inference.also_methods repeats the main method {config['inference']['method']!r}"
    )
if config["selection"]["captures"] != "forbidden" and any(
    m != "beam" for m in ALSO_METHODS
):
    raise ValueError(
        "config: positions with captures are ordered by the beam alone; inference.also_methods "
        f"has {ALSO_METHODS}"
    )


def method_runs():
    """The main method and each of `inference.also_methods` -> its run overrides (none for the main one)."""
    return {
        config["inference"]["method"]: {},
        **{m: {"method": m} for m in ALSO_METHODS},
    }


def inference_targets():
    return [
        run_path(main_run(s, **o), s, n, ".csv")
        for o in method_runs().values()
        for s in config["sets"]
        for n in LENGTHS
    ]


def cross_level_runs():
    """(set, n, network key, run) of every set inferred with every trained network at `training.cross_lengths`."""
    return [
        (s, n, f"trained-{t}", main_run(s, network=f"trained-{t}"))
        for s in config["sets"]
        for n in CROSS_LENGTHS
        for t in TRAINED_SETS
    ]


# KataGo: where it is installed, the model scoring sequences, and the folder its results go to.
KATAGO_DIR = "tools/katago"
WHEEL_MODEL = f"{KATAGO_DIR}/models/{mo_settings.KATRAIN_MODEL}"  # the katrain wheel's model, installed


def katago_model_file():
    spec = config["katago"]["model"]
    models = config["katago"]["models"]
    if spec in models:
        m = models[spec]
        if m.get("from_wheel"):
            return WHEEL_MODEL
        return f"{KATAGO_DIR}/models/{url_filename(m['url'])}"
    return spec


def katago_model_spec(model_file):
    for m in config["katago"]["models"].values():
        if m.get("url") and url_filename(m["url"]) == model_file:
            return {"url": m["url"], "sha256": m.get("sha256") or ""}
    raise ValueError(f"no KataGo model in config downloads as {model_file!r}")


KATAGO_TAG = (
    f"{Path(katago_model_file()).name.split('.')[0]}-v{config['katago']['visits']}"
)
SCORE_DIR = f"results/scored/{RUN_NAME}/{KATAGO_TAG}"
ACTUAL_DIR = f"results/analyses/{KATAGO_TAG}/actual"


def score_path(run, dataset, n, suffix=".csv"):
    return os.path.join(
        "results",
        "scored",
        run_name(run, n, dataset),
        KATAGO_TAG,
        dataset,
        f"{n}m{suffix}",
    )


def scoring_targets():
    return [
        score_path(main_run(s, **o), s, n)
        for o in method_runs().values()
        for s in config["sets"]
        for n in LENGTHS
    ]


def method_report_targets():
    return [f"results/methods/{m}/paper_comparison.md" for m in ALSO_METHODS]


# Sweeps (moveorder.report.sweeps reads and checks the files): each combination is the main run with its
# settings changed, on `dataset` (default: the first set) at `n` moves (default: the first length).
def load_sweep(path):
    spec = mo_sweeps.load_sweep(
        path if os.path.isabs(path) else os.path.join(workflow.basedir, path)
    )
    runs = []
    for settings, label in mo_sweeps.combinations(spec):
        base = {"dataset": config["sets"][0], "n": LENGTHS[0], **settings}
        if int(base["n"]) not in LENGTHS:
            raise ValueError(
                f"config: sweep {spec['name']!r} ({path}) has a run at n={base['n']}, which is not one of "
                f"selection.lengths {LENGTHS}; add it there (config/long.yaml has 60, 80 and 100)"
            )
        run = main_run(
            base["dataset"],
            **{k: v for k, v in base.items() if k not in ("dataset", "n")},
        )
        run["network"] = network_key(run["network"], base["dataset"])
        run.update(dataset=base["dataset"], n=int(base["n"]), label=label)
        runs.append(run)
    return {
        "name": spec["name"],
        "runs": runs,
        "metric": spec.get("metric", mo_sweeps.DEFAULT_METRIC),
        "paper": spec.get("paper"),
        "figure": spec.get("figure", "bars"),
    }


SWEEPS = {s["name"]: s for s in (load_sweep(p) for p in config.get("sweeps", []))}
# Every sweep run's folder registered now, so that a job started alone (on a SLURM node) finds its run.
for _sweep in SWEEPS.values():
    for _run in _sweep["runs"]:
        run_name(_run, _run["n"], _run["dataset"])


def sweep_targets():
    return [f"results/sweeps/{name}/summary.csv" for name in SWEEPS]


def length_targets(n):
    """Every inference and scoring target at n moves, and the summaries of the sweeps run at n alone."""
    if n not in LENGTHS:
        raise ValueError(f"no length {n} in selection.lengths {LENGTHS}")
    runs = [
        (main_run(s, **o), s) for o in method_runs().values() for s in config["sets"]
    ]
    out = [p for r, s in runs for p in (run_path(r, s, n, ".csv"), score_path(r, s, n))]
    return out + [
        f"results/sweeps/{name}/summary.csv"
        for name, sweep in SWEEPS.items()
        if all(int(r["n"]) == n for r in sweep["runs"])
    ]


def training_pool(wildcards):
    """The pool train_policy reads: the data stage's JSONL, or (training.packed) the same packed for a
    GPU by pack_pool, whose batches are made on the device."""
    suffix = ".npz" if config["training"]["packed"] else ".jsonl"
    return f"data/pool/{wildcards.dataset}{suffix}"


def init_network_file():
    """The file of training.init (a shipped name: the package's file), so that the networks it starts
    are retrained when it changes."""
    init = config["training"]["init"]
    return [str(mo_shipped.resolve(init))] if init else []


def method_entries(method):
    """(set, n, inference table, scored table) of every set and length of an `also_methods` search."""
    return [
        (
            s,
            n,
            run_path(main_run(s, method=method), s, n, ".csv"),
            score_path(main_run(s, method=method), s, n),
        )
        for s in config["sets"]
        for n in LENGTHS
    ]
