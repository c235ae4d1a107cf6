# Figures stage: the paper's tables and figures for the main run, and the HTML report.


rule figures:
    input:
        inferred=[run_path(main_run(s), s, n, ".csv") for s in config["sets"] for n in LENGTHS],
        scored=[score_path(main_run(s), s, n) for s in config["sets"] for n in LENGTHS],
        paper=PAPER_RESULTS,
        cross_level=["results/networks/cross_level.md"] if TRAINED_SETS else [],
    output:
        summary=report("results/summary.csv", caption="../report/tables.rst", category="Tables"),
        summary_md="results/summary.md",
        comparison=report(
            "results/paper_comparison.csv", caption="../report/tables.rst", category="Tables"
        ),
        comparison_md="results/paper_comparison.md",
        likelihood=report(
            "results/figures/likelihood_all.png",
            caption="../report/likelihood.rst",
            category="Likelihood",
        ),
        loss=report(
            "results/figures/loss_all.png", caption="../report/loss.rst", category="Loss"
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
        examples=report(
            directory("results/figures/examples"),
            patterns=["{name}.png"],
            caption="../report/examples.rst",
            category="Examples",
        ),
    params:
        entries=lambda w, input: " ".join(
            f"--entry {s} {n} {i} {c}"
            for (s, n), i, c in zip(
                [(s, n) for s in config["sets"] for n in LENGTHS], input.inferred, input.scored
            )
        ),
        networks=" ".join(f"{s}={net}" for s, net in set_networks().items()),
        cross_level=lambda w, input: f"--cross-level {input.cross_level[0]}" if input.cross_level else "",
        datasets=" ".join(
            repr(f"{s}={config['datasets'][s].get('description', s)}") for s in config["sets"]
        ),
        note=f"KataGo {KATAGO_TAG}; seed {config['seed']}",
        out_dir=lambda w, output: os.path.dirname(output.summary),
        figures=lambda w, output: os.path.dirname(output.likelihood),
    conda:
        "../../envs/moveorder.yaml"
    log:
        "logs/figures/figures.log",
    shell:
        "moveorder report {params.entries} --paper {input.paper:q} --out-dir {params.out_dir:q} "
        "--figures {params.figures:q} --set-network {params.networks} {params.cross_level} "
        "--dataset {params.datasets} --note {params.note:q} > {log:q} 2>&1"
