"""Every stage's settings, with their defaults: one home for each default.

One dataclass a stage: :class:`FilterConfig` (records), :class:`SelectConfig`
(arrangements), :class:`TrainConfig` (our networks), :class:`PolicyConfig`
and :class:`SearchConfig` (likelihood and search), :class:`ScoreConfig`
(KataGo).  The package's functions and each verb of the command line take
their defaults from here; the workflow's defaults (``config/schema.yaml``) and
``config/config.yaml`` state the same values, the paper's where it gives one,
and ``tests/test_settings.py`` checks that the three agree.  The workflow
reads :func:`iterations_for` and :func:`for_length` from here too.  Nothing here imports torch or
anything outside the standard library, so the command line starts fast and
the Snakefile can import it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Dict, Mapping, Optional, Tuple

NEIGHBOURS = ("swp2", "mov2", "rot3", "mix")
INITS = ("greedy", "random", "beam")
METHODS = ("anneal", "beam", "beam+anneal")
#: selection.captures: which games a set's evaluation games may be (moveorder.data.arrangements.eligible).
CAPTURES = ("forbidden", "allowed", "required")
SCHEDULES = ("geometric", "linear")
#: SearchConfig.capture_merge: which prefixes of the capture search count as one (search/layer.py).
CAPTURE_MERGES = ("input", "board")
MIX_ORDER = ("swp2", "mov2", "rot3")
#: The paper's iterations per sequence length; other lengths take the nearest length's.
PAPER_ITERATIONS = {20: 5000, 40: 20000}


def iterations_for(n: int, table: Optional[Dict[int, int]] = None) -> int:
    """Iterations for ``n`` moves: ``table[n]``, else the nearest length's (ties: the shorter)."""
    return _per_length(n, table or PAPER_ITERATIONS)


#: The workflow's settings that may be one value or a table of sequence length -> value
#: (config/captures.yaml: wider where it is cheap).
PER_LENGTH = ("beam_width", "beam_passes", "beam_widen", "beam_widen_found")


def for_length(n: int, value, key: str = "value") -> int:
    """A per-length setting (``inference.beam_width``, ``beam_passes``, ``beam_widen``, ``beam_widen_found``) for ``n`` moves:
    one value for every length, or a table of length -> value that must give ``n`` its own entry.

    Unlike the paper's iterations (:func:`iterations_for`, which extends its two lengths to any other),
    a table here is the user's choice per length: a length it leaves out is an error (ValueError naming
    ``key`` and the length), never the nearest length's value taken in silence.
    """
    if isinstance(value, Mapping):
        table = {int(k): int(v) for k, v in value.items()}
        if n not in table:
            raise ValueError(
                f"{key} gives no value for {n} moves (it gives {', '.join(str(k) for k in sorted(table))}): "
                f"add {n} to the table, or give one value for every length"
            )
        return table[n]
    return int(value)


def check_per_length(section: Mapping, lengths, where: str = "inference") -> None:
    """Raise ValueError unless every table of :data:`PER_LENGTH` in ``section`` has an entry for every length."""
    for key in PER_LENGTH:
        value = section.get(key)
        if isinstance(value, Mapping):
            for n in lengths:
                for_length(int(n), value, f"{where}.{key}")


def _per_length(n: int, table: Mapping) -> int:
    """``table[n]``, else the nearest length's (ties: the shorter): the paper's iterations."""
    table = {int(k): int(v) for k, v in table.items()}
    if n in table:
        return table[n]
    return table[min(table, key=lambda k: (abs(k - n), k))]


def run_identity(run: Mapping, n: int, inference: Mapping, policy: Mapping, captures: bool) -> Dict[str, object]:
    """The settings that change an inference run's result at ``n`` moves, and only those.

    ``run``: the run's method and search settings (``method``, ``beam_width``, ``beam_future``,
    ``orientations`` (the beam's; absent: ``given``), ``init``,
    ``neighbour``, ``iterations`` (None: ``inference.iterations``' for ``n``), ``trials``, ``t_start``,
    ``t_end``); ``inference`` and ``policy``: the config sections every run shares; ``captures``: whether the
    set may hold positions with captures (``selection.captures`` other than ``forbidden``), which the
    capture search orders with ``patience``, ``beam_passes``, ``beam_widen`` and ``capture_merge``. The beam reads no
    annealing setting and no seed; the annealing reads no beam setting but the beam's under
    ``beam+anneal``. ``inference["calibration"]`` (``selection.calibration``): the games a run of the
    ranked beam on capture-free positions infers to fit its stated chances, which change the answers'
    chances (never their orders). Chunk and cache sizes change speed only, never a result.
    """
    method = run["method"]
    ident: Dict[str, object] = {"method": method}
    if method in ("beam", "beam+anneal"):
        ident.update(
            beam_width=for_length(n, run["beam_width"], "inference.beam_width"),
            beam_future=float(run["beam_future"]),
        )
    if method == "beam" and run.get("orientations", "given") != "given":
        ident["orientations"] = run["orientations"]
    if method == "beam" and captures:
        passes = for_length(n, inference["beam_passes"], "inference.beam_passes")
        ident.update(patience=int(inference["patience"]), beam_passes=passes)
        if passes > 1:  # the widening applies to the passes after the first
            ident["beam_widen"] = for_length(n, inference["beam_widen"], "inference.beam_widen")
            found = for_length(n, inference.get("beam_widen_found", 1), "inference.beam_widen_found")
            if found != 1:  # named only where it is set, so the folders of runs before it keep their names
                ident["beam_widen_found"] = found
        merge = inference.get("capture_merge", "input")
        if merge != "input":  # named only where it is set, as beam_widen_found
            ident["capture_merge"] = merge
        proposer = inference.get("capture_proposer", "none")
        if proposer != "none" and passes > 1:  # named only where it is set and acts (after the first pass)
            ident["capture_proposer"] = proposer
    if method == "beam" and not captures and int(inference.get("calibration") or 0) > 0:
        ident["calibration"] = int(inference["calibration"])
    if method in ("anneal", "beam+anneal"):
        if method == "anneal":
            ident["init"] = run["init"]
        iterations = run.get("iterations") or iterations_for(n, inference.get("iterations"))
        ident.update(
            neighbour=run["neighbour"],
            iterations=int(iterations),
            trials=int(run["trials"]),
            t_start=float(run["t_start"]),
            t_end=float(run["t_end"]),
            schedule=inference["schedule"],
            seed=int(inference["seed"]),
        )
    ident.update(
        precision=policy["precision"],
        average_symmetries=bool(policy["average_symmetries"]),
        legal_only=bool(policy["legal_only"]),
    )
    return ident


def run_label(ident: Mapping) -> str:
    """A run's folder name, read off its :func:`run_identity`: every setting in it, in a fixed order.

    ``beam128f1`` (the ranked beam, width 128, future weight 1), ``beam32f1-turnseats`` (the same over the board
    as given and half a turn; ``turnall``: its 8 orientations), ``beam32f1-pat0-pass2-widen4`` (the capture
    search's settings; the widening only with more than one pass; ``-found2`` a later pass twice as wide
    within the plan of the order found; ``-mergeboard`` prefixes with the same board merged; ``-proptygem``
    the shipped ``tygem`` proposing capture plans),
    ``beam32f1-turnseats-cal100`` (its
    chances fitted on 100 calibration games a set), ``anneal-greedy-mix-it5000-tr5-T1-0.1-geometric-seed0`` (the paper's annealing), ``beam128f1+anneal-mix-...``
    (annealing from the beam's orders); then ``-bfloat16``, ``-sym`` and
    ``-legal`` where the network's precision or input differ from the defaults.
    """
    method = ident["method"]
    parts = []
    if method in ("beam", "beam+anneal"):
        parts.append(f"beam{ident['beam_width']}f{ident['beam_future']:g}" + ("+anneal" if method != "beam" else ""))
    if "orientations" in ident:
        parts.append(f"turn{ident['orientations']}")
    if "patience" in ident:
        parts.append(f"pat{ident['patience']}-pass{ident['beam_passes']}")
    if "beam_widen" in ident:
        parts.append(f"widen{ident['beam_widen']}")
    if "beam_widen_found" in ident:
        parts.append(f"found{ident['beam_widen_found']}")
    if "capture_merge" in ident:
        parts.append(f"merge{ident['capture_merge']}")
    if "capture_proposer" in ident:
        parts.append(f"prop{ident['capture_proposer']}")
    if "calibration" in ident:
        parts.append(f"cal{ident['calibration']}")
    if method in ("anneal", "beam+anneal"):
        if method == "anneal":
            parts.append(f"anneal-{ident['init']}")
        parts.append(
            f"{ident['neighbour']}-it{ident['iterations']}-tr{ident['trials']}"
            f"-T{ident['t_start']:g}-{ident['t_end']:g}-{ident['schedule']}-seed{ident['seed']}"
        )
    if ident["precision"] != "float32":
        parts.append(str(ident["precision"]))
    if ident["average_symmetries"]:
        parts.append("sym")
    if ident["legal_only"]:
        parts.append("legal")
    return "-".join(parts)


@dataclass
class SearchConfig:
    """Every choice of the search; the paper's values are the defaults.

    ``iterations`` None: the paper's for the sequence length (:func:`iterations_for`), fixed by
    :meth:`for_length` once the length is known.
    """

    iterations: Optional[int] = None
    trials: int = 5
    init: str = "greedy"
    neighbour: str = "mix"
    t_start: float = 1.0
    t_end: float = 0.1
    schedule: str = "geometric"
    seed: int = 0
    incremental: bool = True  # False: re-evaluate every position every iteration (the naive reference)
    method: str = "anneal"  # anneal (the paper's) | beam | beam+anneal (annealing from the beam's orders)
    beam_width: int = 32  # prefixes kept per arrangement and move number (beam, init beam)
    #: Weight of the estimate of the stones still to play when the beam ranks prefixes (beam.py);
    #: 0: by log-likelihood alone (the plain beam).
    beam_future: float = 1.0
    #: Positions with captures (moveorder.search.captures.search): where the beam finds no sequence, backtracking
    #: may evaluate this many times as many beams as one pass; 0: none.
    patience: int = 2
    #: Positions with captures (moveorder.search.captures.search): the beam is run this many times; a pass after
    #: the first starts from the earlier passes' stone estimates and keeps each doomed stone to the capture
    #: plan of the best order found so far (captures.py, "Passes").  Each pass costs one beam's evaluations.
    beam_passes: int = 1
    #: Positions with captures: a pass after the first searches a problem no earlier pass found an order
    #: for with this many times ``beam_width`` (1: the same width); evaluations go only to those problems.
    beam_widen: int = 1
    #: Positions with captures: a pass after the first searches a problem within the capture plan of the
    #: order found so far with this many times ``beam_width`` (1: the same width).
    beam_widen_found: int = 1
    #: Positions with captures: prefixes merged, the likeliest kept: ``input``, those whose network input
    #: is the same (the last 8 boards: nothing lost); ``board``, those with the same board whatever came
    #: before (the width goes to other boards; a continuation's probabilities may differ a little).
    capture_merge: str = "input"
    #: Positions with captures: a shipped network (``tygem``: a 4x32 about 24 times cheaper a position) that
    #: proposes where the captures go where the first pass found no order (captures.py, "The proposer");
    #: ``none``: no proposer.  Used only with two passes or more; the name is checked where the network is
    #: loaded (moveorder.search.dispatch.proposer_of), and by the command line's and the schema's choices.
    capture_proposer: str = "none"
    #: The ranked beam: ``given`` searches the board as it is; ``seats`` as it is and turned half a
    #: turn (the board seen from either player's seat), ``all`` in each of its 8 orientations, in one
    #: beam of ``beam_width``, and turns the likeliest order back (beam.py, "The board's orientation").
    orientations: str = "given"

    def __post_init__(self):
        if self.neighbour not in NEIGHBOURS:
            raise ValueError(f"neighbour {self.neighbour!r}: expected one of {NEIGHBOURS}")
        if self.init not in INITS:
            raise ValueError(f"init {self.init!r}: expected one of {INITS}")
        if self.method not in METHODS:
            raise ValueError(f"method {self.method!r}: expected one of {METHODS}")
        if self.method == "beam+anneal":
            self.init = "beam"
        if self.beam_width < 1:
            raise ValueError(f"beam_width {self.beam_width}: expected at least 1")
        if not self.beam_future >= 0:
            raise ValueError(f"beam_future {self.beam_future}: expected 0 or more")
        if self.beam_passes < 1:
            raise ValueError(f"beam_passes {self.beam_passes}: expected at least 1")
        if self.beam_widen < 1:
            raise ValueError(f"beam_widen {self.beam_widen}: expected at least 1")
        if self.beam_widen_found < 1:
            raise ValueError(f"beam_widen_found {self.beam_widen_found}: expected at least 1")
        if self.capture_merge not in CAPTURE_MERGES:
            raise ValueError(f"capture_merge {self.capture_merge!r}: expected one of {CAPTURE_MERGES}")
        if self.orientations not in ORIENTATIONS:
            raise ValueError(f"orientations {self.orientations!r}: expected one of {tuple(ORIENTATIONS)}")
        if self.orientations != "given" and self.method != "beam":
            raise ValueError(
                f"orientations {self.orientations!r} with method {self.method!r}: only the ranked beam "
                "(method beam) searches other orientations of the board"
            )
        if self.patience < 0:
            raise ValueError(f"patience {self.patience}: expected 0 or more")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule {self.schedule!r}: expected one of {SCHEDULES}")
        if (
            (self.iterations is not None and self.iterations < 1)
            or self.trials < 1
            or not self.t_start >= self.t_end > 0
        ):
            raise ValueError(
                f"need iterations >= 1 (got {self.iterations}), trials >= 1 (got {self.trials}) "
                f"and t_start >= t_end > 0 (got {self.t_start}, {self.t_end})"
            )

    def for_length(self, n: int, table: Optional[Dict[int, int]] = None) -> "SearchConfig":
        """This configuration for ``n``-move sequences: ``iterations`` from ``table`` (the paper's) if unset."""
        return self if self.iterations is not None else replace(self, iterations=iterations_for(n, table))


def temperature(cfg: SearchConfig, iteration: int) -> float:
    """Temperature at ``iteration`` (0-based): ``t_start`` at the first, ``t_end`` at the last."""
    frac = iteration / max(1, cfg.iterations - 1)
    if cfg.schedule == "geometric":
        return cfg.t_start * (cfg.t_end / cfg.t_start) ** frac
    return cfg.t_start + (cfg.t_end - cfg.t_start) * frac


# --- what the one-position tool (moveorder infer) accepts, checked before any work starts ------------

#: The longest sequence it orders: the stones plus the prisoners (every captured stone was once a move).
#: Longer than 98.9% of the 9,669 records of the Fox pro archive (Pro.7z of the mirror: median 199 moves,
#: 5.5% past 300), and within what one search can do: the capture search costs about beam width x moves
#: network evaluations a pass (docs/benchmarks.md measures it up to 100 moves).
MAX_MOVES = 400
#: The widest beam (also beam width x beam widen): every kept prefix holds its last 8 boards and is
#: evaluated each move; 8 times the widest measured (512, config/cpu.yaml).
MAX_BEAM_WIDTH = 4096
#: Runs of the capture beam; each costs one beam's evaluations.
MAX_BEAM_PASSES = 16
#: Backtracking budget, in passes' beams.
MAX_PATIENCE = 100
#: Annealing iterations a trial: 500 times the paper's 20,000 for 40 moves.
MAX_ITERATIONS = 10_000_000
#: Chains a position: 20 times the paper's 5; every chain's sequence is evaluated each iteration.
MAX_TRIALS = 100
#: Positions per network call (padded to it): 16 times a GPU's default of 256.
MAX_BATCH = 4096
#: Slots of the position cache (1.4 kB each, allocated at once): 32 times the default, about 5.9 GB.
MAX_CACHE_SLOTS = 1 << 22
#: The future weight of the beam's ranking; log-probabilities are of order 1 to 10.
MAX_BEAM_FUTURE = 100.0
#: ``SearchConfig.orientations`` -> the board's symmetries it searches (``moveorder.nets.networks.
#: SYMMETRY_MAPS``: 0 the board as given, 3 half a turn, both axes mirrored).
ORIENTATIONS: Dict[str, Tuple[int, ...]] = {"given": (0,), "seats": (0, 3), "all": tuple(range(8))}
#: Temperatures of the annealing; they divide differences of costs of order 0.01 to 100.
TEMPERATURES = (1e-6, 1e6)
#: The largest SGF file it reads, in bytes (and the page's largest SGF): one game record, comments and
#: variations included, takes kilobytes; a file past this is no one position.
MAX_SGF_BYTES = 1_000_000
#: The most orders ``--alternatives`` lists: each is an SGF variation of the answer, and the beam keeps
#: at most its width of complete orders.
MAX_ALTERNATIVES = 100


#: How sure an answer is (moveorder.search.confidence): the search keeps this many of its likeliest
#: distinct orders as evidence (the beam's width at the player's default; the answer's order is the
#: same whatever it keeps); with fewer than MIN_ORDERS (and fewer than the position has) no chance is
#: stated; a move whose chance of standing at its number is below DOUBT is in doubt: more likely
#: played at another number than at its own (15% of the moves of 20-move answers, half at 40).
CONFIDENCE_ORDERS = 32
MIN_ORDERS = 8
DOUBT = 0.5
#: An alternative order at least this likely beside the best is "nearly as likely": where it reorders
#: moves in doubt, the answer names that stretch as uncertain ("moves 8-13 uncertain").
NEARLY = 0.1


#: ``moveorder infer --quality``: the one-position tool's speed/quality presets, each a description
#: (its help) and the search settings it sets (SearchConfig fields); a setting given as an option
#: overrides its preset's.  Their cost and exact orders with each shipped network: docs/results.md,
#: "The one-position tool".
QUALITIES: Dict[str, Tuple[str, Dict[str, object]]] = {
    "fast": (
        "ranked beam, width 32, both seats, two passes where stones were taken (seconds)",
        {
            "method": "beam",
            "beam_width": 32,
            "beam_future": 1.0,
            "orientations": "seats",
            "beam_passes": 2,
            "beam_widen": 2,
            "beam_widen_found": 2,
            "capture_merge": "board",
            "capture_proposer": "tygem",
        },
    ),
    "good": (
        "ranked beam, width 128, both seats (4x the work of fast)",
        {"method": "beam", "beam_width": 128, "beam_future": 1.0, "orientations": "seats"},
    ),
    "paper": (
        "the paper's annealing, 5 trials of 5,000-20,000 iterations (hours on a CPU)",
        {"method": "anneal", "orientations": "given"},
    ),
}
#: The settings some preset sets: ``moveorder infer`` leaves their options at None unless given.
QUALITY_SETTINGS = tuple(dict.fromkeys(k for _, preset in QUALITIES.values() for k in preset))
#: The preset ``moveorder infer`` uses when none is named: the one place its default search is chosen.
DEFAULT_QUALITY = "fast"


def quality_values(quality: str, values: Mapping[str, object]) -> Dict[str, object]:
    """The one-position tool's search settings, unchecked: preset ``quality``'s, then the options in
    ``values`` (parsed options; a preset setting left at None was not given and keeps the preset's)."""
    if quality not in QUALITIES:
        raise ValueError(f"--quality {quality!r}: expected one of {', '.join(QUALITIES)}")
    given = {k: v for k, v in values.items() if not (k in QUALITY_SETTINGS and v is None)}
    defaults = {f.name: f.default for f in fields(SearchConfig) if f.name in QUALITY_SETTINGS}
    out = {**defaults, **QUALITIES[quality][1], **given}
    if out.get("method") != "beam":  # a preset's turns and passes are the beam's: SearchConfig's otherwise
        for key in (
            "orientations",
            "beam_passes",
            "beam_widen",
            "beam_widen_found",
            "capture_merge",
            "capture_proposer",
        ):
            if key not in given:
                out[key] = defaults[key]
    else:  # a preset's widening within the widest beam
        for key in ("beam_widen", "beam_widen_found"):
            if key not in given:
                out[key] = min(out[key], max_beam_widen(out["beam_width"]))
    return out


def max_beam_widen(beam_width: int) -> int:
    """The most times a later pass may widen a beam of ``beam_width`` within MAX_BEAM_WIDTH (at least 1)."""
    return max(1, MAX_BEAM_WIDTH // max(1, beam_width))


def quality_config(quality: str, values: Mapping[str, object]) -> "SearchConfig":
    """:func:`quality_values` as an :class:`SearchConfig`."""
    return from_mapping(SearchConfig, quality_values(quality, values))


PRECISIONS = ("float32", "bfloat16", "tf32")
#: ``moveorder infer``'s network arithmetic when --precision is not given: ``auto``, bfloat16 where
#: the device computes it natively (:func:`moveorder.nets.devices.native_bfloat16`), else float32.
#: Every other verb, and every workflow run, computes in float32 unless told otherwise.
PLAYER_PRECISION = "auto"
#: ``moveorder infer``'s positions per network call on a CPU when --max-batch is not given.  Calls are
#: padded to it; a beam of width 32 asks for about 30 positions a move, which the CPU default
#: (likelihood.CPU_BATCH) would pad to twice the work.
PLAYER_CPU_BATCH = 16
#: Slots of the evaluator's position cache (each holds one distribution, 1.4 kB): 185 MB.
CACHE_SLOTS = 1 << 17


# --- the page (moveorder serve) ------------------------------------------------------------------------

#: Where it listens: this machine only, unless told otherwise (--host).
SERVE_HOST = "127.0.0.1"
SERVE_PORT = 8321
#: The largest request it reads, in bytes: an SGF of the largest size the command line reads, and its options.
SERVE_MAX_REQUEST = MAX_SGF_BYTES + 64_000
#: Searches that may wait behind the one running; one more is refused until one finishes.
SERVE_QUEUE = 8
#: Finished searches whose answers (and files) are kept; older ones are forgotten.
SERVE_KEEP = 32
#: Seconds without the page asking about a search before it is stopped (the page asks twice a second).
SERVE_ABANDONED = 30.0


#: The network every verb uses when none is named: shipped with the package (moveorder.nets.shipped).
SHIPPED_NETWORK = "tygem-6x128"
#: The shipped network the workflow's cross-level table measures beside the networks it trains: the
#: small one the CPU configurations fine-tune from (``training.init: tygem``), cheap on a CPU.
REFERENCE_NETWORK = "tygem"


@dataclass
class PolicyConfig:
    """How the policy network gives the likelihood (``policy`` in config); a run's ``--network`` names it."""

    average_symmetries: bool = False  # mean of the 8 symmetries' softmax
    legal_only: bool = False  # renormalise over the empty points and pass (the paper: no)
    precision: str = "float32"  # of the network's arithmetic (PRECISIONS)
    chunk: int = 20  # arrangements a batch of infer-set (and a resume unit)
    cache_size: Optional[int] = None  # position cache slots; None: CACHE_SLOTS on a CPU, 0 on a GPU


# --- the data stage --------------------------------------------------------------------------------


#: How a dataset's records are stored (``datasets.NAME.record_format``): SGF files, or the Tygem
#: dataset's one game a line (moveorder.data.tygem).
RECORD_FORMATS = ("sgf", "tygem")


@dataclass
class FilterConfig:
    """Which records qualify (``filter`` in config): the paper's 50 capture- and pass-free moves."""

    capture_free: int = 50  # no capture and no pass in this many first moves
    min_moves: int = 50  # fewer moves: too_short


@dataclass
class SelectConfig:
    """The evaluation games of a set (``selection`` in config)."""

    games: int = 100
    lengths: Tuple[int, ...] = (20, 40)
    #: forbidden: the paper's qualified games only; allowed: captures before the length too;
    #: required: a capture before the shortest length (moveorder.data.arrangements.eligible).
    captures: str = "forbidden"


# --- our networks ----------------------------------------------------------------------------------

LR_SCHEDULES = ("cosine", "constant")
TRAIN_PRECISIONS = ("auto", "float32", "bfloat16")


@dataclass
class TrainConfig:
    """Training a policy network (``training`` in config); the defaults are the full-size run (6x128, a GPU's)."""

    blocks: int = 6
    filters: int = 128
    steps: int = 100000
    batch_size: int = 256
    lr: float = 2e-3  # peak learning rate (AdamW)
    warmup_steps: int = 100  # linear warm-up of the learning rate over these first steps
    lr_schedule: str = "cosine"  # cosine: decays to 0 at `steps`; constant
    weight_decay: float = 1e-4
    value_head: bool = True  # False: policy loss only (the likelihood needs only the policy)
    value_weight: float = 0.25
    symmetries: bool = True  # one of the 8 symmetries of the board drawn per sample
    precision: str = "auto"  # of forward/backward: float32, bfloat16 (autocast), auto (train.autocast_dtype)
    heldout_fraction: float = 0.05
    heldout_positions: int = 20000
    checkpoint_every: int = 500
    seed: int = 0
    threads: int = 0  # 0: torch's default
    # Pre-training: the network whose weights training starts from (a shipped name such as tygem, Leela
    # Zero weights or a model.pt; same blocks and filters), then fine-tuned on the pool; "": random weights.
    init: str = ""
    # Only the positions before this move of each game, in training and in the held-out figures (the
    # opening, where the inference's orders are decided); 0: every position.
    max_move: int = 0


# --- KataGo ----------------------------------------------------------------------------------------

#: The strong network the katrain wheel ships (moveorder.katago.install installs it).
KATRAIN_MODEL = "b10c384h6nbttflrs.bin.gz"
DELTA_MAX = ("best_move", "root")
#: ``katago.tuning``: the OpenCL tuning KataGo is given (moveorder.katago.engine.opencl_tuning); any other value is
#: the path of a tuning file of yours.
TUNINGS = ("auto", "cpu", "katago")


@dataclass
class ScoreConfig:
    """Scoring sequences with KataGo (``katago`` in config)."""

    visits: int = 100  # the paper does not state its visits
    rules: str = "chinese"
    komi: float = 7.5  # when a record gives none
    delta_max: str = "best_move"  # the best lead at a position: its best move's (the paper) or the root's
    clamp: bool = False  # clamp each move's loss at zero
    threads: int = 2  # KataGo processes (shared_cache: analysis threads of one process)
    shared_cache: bool = False
    max_batch: int = 1  # KataGo's nnMaxBatchSize; more than 1 needs shared_cache
    timeout: float = 600  # seconds without a reply from KataGo before giving up
    tuning: str = "auto"  # auto: the CPU's OpenCL tuning without a GPU, KataGo's own on one; cpu; katago; a file

    def __post_init__(self):
        if self.max_batch > 1 and not self.shared_cache:
            raise ValueError(
                "max_batch > 1 needs shared_cache (batches are shared between the analysis threads of one process)"
            )
        if not self.tuning:
            raise ValueError(f"tuning: expected one of {TUNINGS} or the path of an OpenCL tuning file")


def from_mapping(cls, values: Mapping[str, object]):
    """A settings dataclass from the entries of the same names (a config section, parsed options); others default."""
    return cls(**{f.name: values[f.name] for f in fields(cls) if f.name in values})
