# moveorder: infer the order of play from a Go position (Hsueh & Ikeda, ACG 2023).
# Stages: data -> (networks) -> inference -> scoring -> figures. Each rule calls `moveorder VERB`.
import os

from snakemake.utils import min_version, validate

min_version("9.0")


configfile: os.path.join(workflow.basedir, "config/config.yaml")


validate(config, "config/schema.yaml")


include: "workflow/rules/common.smk"


wildcard_constraints:
    dataset="|".join(DATASETS),
    n=r"\d+",


include: "workflow/rules/data.smk"
include: "workflow/rules/networks.smk"


rule all:
    input:
        data_targets(),
        expand("results/networks/trained-{dataset}/metrics.json", dataset=config["training"]["sets"]),
    default_target: True
