# Sweeps: ablations from config files (config/sweeps/*.yaml). Each run is an ordinary inference
# run, filed under a folder named by its parameters, so runs shared with the main experiment or
# another sweep are computed once.


rule sweep_summary:
    input:
        lambda w: [
            run_path(r, r["dataset"], r["n"], ".csv") for r in SWEEPS[w.sweep]["runs"]
        ],
        paper=PAPER_RESULTS,
    output:
        table="results/sweeps/{sweep}/summary.csv",
        figure=report(
            "results/sweeps/{sweep}/ablation.png",
            caption="../report/ablation.rst",
            category="Ablations",
        ),
    log:
        "logs/sweeps/{sweep}.log",
    conda:
        "../../envs/moveorder.yaml"
    params:
        runs=lambda w, input: " ".join(
            f"--run {r['label']!r} {path}"
            for r, path in zip(
                SWEEPS[w.sweep]["runs"], input[: len(SWEEPS[w.sweep]["runs"])]
            )
        ),
        metric=lambda w: SWEEPS[w.sweep]["metric"],
        paper_key=lambda w: SWEEPS[w.sweep].get("paper") or "",
        kind=lambda w: SWEEPS[w.sweep]["figure"],
    shell:
        "moveorder sweep-summary --name {wildcards.sweep} {params.runs} --metric {params.metric} "
        "--paper {input.paper:q} --paper-key '{params.paper_key}' --table {output.table:q} "
        "--figure {output.figure:q} --figure-kind {params.kind} > {log:q} 2>&1"
