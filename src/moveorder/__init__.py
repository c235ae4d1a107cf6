"""moveorder: infer the order in which the stones of a Go position were played.

Reproduces Hsueh & Ikeda, "Can We Infer Move Sequences in Go from Stone
Arrangements?" (ACG 2023): a human-move policy network gives the likelihood of
a sequence, and simulated annealing searches the orders of the given stones.

The stages, in the order data flows through them; each subpackage imports only those above it in
this table (``tests/test_layout.py`` checks it):

========  ===============================================  =======================  ======================
package   modules                                          rule file                verbs
========  ===============================================  =======================  ======================
go/       coords, board: the game itself (no torch)        (every stage)            -
data/     download, archives, records, tygem, qualify,     workflow/rules/data.smk  download, extract,
          arrangements: records in, evaluation sets out;                            filter, select, infer
          position: the one-position tool's input
nets/     features, networks, likelihood, devices,         networks.smk             train-policy,
          sampling, packed, train, shipped:                                         pack-pool, policy
          P(move | position)
search/   problem, boards, plans, anneal, beam, exact,     inference.smk            infer-set, infer
          prunes, layer, captures (the capture search),
          dispatch (the one entry point), results,
          confidence (how sure an answer is),
          inference: the order of play
katago/   install, engine, loss, scoring: the judge        scoring.smk              install-katago, score,
                                                                                    analyse-actual
report/   metrics, plots, summary, sweeps, cross_level,   figures.smk, sweeps.smk, report, sweep-summary,
          diagram, answer, calibration (fitting and        networks.smk             cross-level, infer,
          checking the chances): figures, tables, the                               calibrate
          board of an order and the player's answer
serve/    jobs, runs, app (and static/, the page's         -                        serve
          files): the page over the one-position tool
          and a results folder
========  ===============================================  =======================  ======================

Beside them: :mod:`moveorder.settings` (every default; imported by every stage, imports none) and
``cli/`` (parses and dispatches, nothing else; imports every stage): one module per stage (data, nets,
search, katago, report, serve), common (the registry of verbs, the option helpers, the help formatter), and
__main__ (``python -m moveorder.cli``).
"""

__version__ = "0.3.0"
