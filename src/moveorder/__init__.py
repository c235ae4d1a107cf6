"""moveorder: infer the order in which the stones of a Go position were played.

Reproduces Hsueh & Ikeda, "Can We Infer Move Sequences in Go from Stone
Arrangements?" (ACG 2023): a human-move policy network gives the likelihood of
a sequence, and simulated annealing searches the orders of the given stones.

The stages, in the order data flows through them (module; Snakemake rule file; ``moveorder`` verb):

==============================  =======================================  ======================  ======================
stage                           modules                                  rule file               verb
==============================  =======================================  ======================  ======================
records: download, unpack,      download, archives, records, board       workflow/rules/data.smk download, extract,
qualify                         tygem                                                            filter
arrangements: evaluation games  arrangements                             workflow/rules/data.smk select
clipped to n moves; the pool
likelihood: our networks and    networks, features, train, packed,       networks.smk            train-policy,
P(move | position)              likelihood, cross_level, shipped                                 pack-pool, cross-level,
                                                                                                 policy
search: the order of play       annealing, beam, inference               inference.smk           infer-set, infer
KataGo scoring                  katago_install, katago, loss, scoring    scoring.smk             install-katago, score
figures and tables              metrics, plots, report, sweeps           figures.smk, sweeps.smk report, sweep-summary
==============================  =======================================  ======================  ======================

Shared by every stage: :mod:`moveorder.coords` (every coordinate conversion),
:mod:`moveorder.settings` (every default) and :mod:`moveorder.cli` (parses and
dispatches, nothing else).
"""

__version__ = "0.1.0"
