# moveorder: infer the order of play from a Go position (Hsueh & Ikeda, ACG 2023).
# Stages: data -> (networks) -> inference -> scoring -> figures. Each rule calls `moveorder VERB`.
import os

from snakemake.utils import min_version, validate

min_version("9.0")


report: "workflow/report/workflow.rst"


configfile: os.path.join(workflow.basedir, "config/config.yaml")


validate(config, "config/schema.yaml")


include: "workflow/rules/common.smk"


wildcard_constraints:
    dataset="|".join(DATASETS),
    n=r"\d+",
    network=r"[^/]+",
    label=r"[^/]+",
    sweep=r"[^/]+",


include: "workflow/rules/data.smk"
include: "workflow/rules/networks.smk"
include: "workflow/rules/inference.smk"
include: "workflow/rules/scoring.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/sweeps.smk"


rule all:
    default_target: True
    input:
        data_targets(),
        trained_network_targets(),
        inference_targets(),
        scoring_targets(),
        "results/summary.md",
        "results/paper_comparison.md",
        method_report_targets(),
        sweep_targets(),


rule data:
    """The data stage alone: downloads, filter reports, arrangements and training pools."""
    input:
        data_targets(),


rule length:
    """Everything of one length (`snakemake results/lengths/20m.done`): each method's inference and scoring of
    every set at n moves, and the sweeps whose runs are all at n: a run in stages (scripts/gpu_run.sh).
    """
    input:
        lambda w: length_targets(int(w.n)),
    output:
        touch("results/lengths/{n}m.done"),
