# Figures stage: the paper's tables and figures for the main run (and for each of inference.also_methods),
# and the HTML report.


rule figures:
    input:
        inferred=[
            run_path(main_run(s), s, n, ".csv")
            for s in config["sets"]
            for n in LENGTHS
        ],
        scored=[score_path(main_run(s), s, n) for s in config["sets"] for n in LENGTHS],
        paper=PAPER_RESULTS,
        cross_level=["results/networks/cross_level.md"] if TRAINED_SETS else [],
    output:
        summary=report(
            "results/summary.csv", caption="../report/tables.rst", category="Tables"
        ),
        summary_md="results/summary.md",
        comparison=report(
            "results/paper_comparison.csv",
            caption="../report/tables.rst",
            category="Tables",
        ),
        comparison_md="results/paper_comparison.md",
        likelihood=report(
            "results/figures/likelihood_all.png",
            caption="../report/likelihood.rst",
            category="Likelihood",
        ),
        loss=report(
            "results/figures/loss_all.png",
            caption="../report/loss.rst",
            category="Loss",
        ),
        per_set=[
            report(
                f"results/figures/{kind}_{s}_{n}m.png",
                caption=f"../report/{kind}.rst",
                category=kind.capitalize(),
                subcategory=f"{s}{n}m",
            )
            for kind in ("likelihood", "loss")
            for s in config["sets"]
            for n in LENGTHS
        ],
        reliability=report(
            "results/figures/reliability.png",
            caption="../report/reliability.rst",
            category="How sure",
        ),
        reliability_moves=report(
            "results/figures/reliability_moves.png",
            caption="../report/reliability.rst",
            category="How sure",
        ),
        examples=report(
            directory("results/figures/examples"),
            patterns=["{name}.png"],
            caption="../report/examples.rst",
            category="Examples",
        ),
    log:
        "logs/figures/figures.log",
    conda:
        "../../envs/moveorder.yaml"
    params:
        entries=lambda w, input: " ".join(
            f"--entry {s} {n} {i} {c}"
            for (s, n), i, c in zip(
                [(s, n) for s in config["sets"] for n in LENGTHS],
                input.inferred,
                input.scored,
            )
        ),
        networks=" ".join(f"{s}={net}" for s, net in set_networks().items()),
        cross_level=lambda w, input: (
            f"--cross-level {input.cross_level[0]}" if input.cross_level else ""
        ),
        datasets=" ".join(
            repr(f"{s}={config['datasets'][s].get('description', s)}")
            for s in config["sets"]
        ),
        note=f"KataGo {KATAGO_TAG}; seed {config['seed']}",
        out_dir=lambda w, output: os.path.dirname(output.summary),
        figures=lambda w, output: os.path.dirname(output.likelihood),
    shell:
        "moveorder report {params.entries} --paper {input.paper:q} --out-dir {params.out_dir:q} "
        "--figures {params.figures:q} --set-network {params.networks} {params.cross_level} "
        "--dataset {params.datasets} --note {params.note:q} > {log:q} 2>&1"


# Each of `inference.also_methods`: the same tables and figures for its runs, in results/methods/METHOD/.
rule method_figures:
    input:
        inferred=lambda w: [e[2] for e in method_entries(w.method)],
        scored=lambda w: [e[3] for e in method_entries(w.method)],
        paper=PAPER_RESULTS,
        cross_level=["results/networks/cross_level.md"] if TRAINED_SETS else [],
    output:
        summary="results/methods/{method}/summary.csv",
        summary_md="results/methods/{method}/summary.md",
        comparison="results/methods/{method}/paper_comparison.csv",
        comparison_md=report(
            "results/methods/{method}/paper_comparison.md",
            caption="../report/tables.rst",
            category="Tables",
            subcategory="{method}",
        ),
        figures=directory("results/methods/{method}/figures"),
    log:
        "logs/figures/method-{method}.log",
    wildcard_constraints:
        method="|".join(re.escape(m) for m in ALSO_METHODS) or "(?!)",
    conda:
        "../../envs/moveorder.yaml"
    params:
        entries=lambda w: " ".join(
            f"--entry {s} {n} {i} {c}" for s, n, i, c in method_entries(w.method)
        ),
        networks=" ".join(f"{s}={net}" for s, net in set_networks().items()),
        cross_level=lambda w, input: (
            f"--cross-level {input.cross_level[0]}" if input.cross_level else ""
        ),
        datasets=" ".join(
            repr(f"{s}={config['datasets'][s].get('description', s)}")
            for s in config["sets"]
        ),
        note=lambda w: f"inference.method {w.method}; KataGo {KATAGO_TAG}; seed {config['seed']}",
        out_dir=lambda w, output: os.path.dirname(output.summary),
    shell:
        "moveorder report {params.entries} --paper {input.paper:q} --out-dir {params.out_dir:q} "
        "--figures {output.figures:q} --set-network {params.networks} {params.cross_level} "
        "--dataset {params.datasets} --note {params.note:q} > {log:q} 2>&1"
