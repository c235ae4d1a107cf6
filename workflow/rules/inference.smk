# Inference stage: every arrangement of a set and length ordered by a run's search (annealing, the
# ranked beam, both, or the capture search). A run's folder names every setting that changes its orders
# (common.smk, RUN_NAME), so a sweep and the main experiment share identical runs.


rule infer:
    input:
        arrangements="data/arrangements/{dataset}/{n}m.jsonl",
        network=lambda w: network_file(w.network),
        calibration=run_calibration,
    output:
        results=f"{RUN_DIR}/{{dataset}}/{{n}}m.jsonl",
        table=f"{RUN_DIR}/{{dataset}}/{{n}}m.csv",
        sgf=directory(f"{RUN_DIR}/{{dataset}}/{{n}}m-sgf"),
        stats=f"{RUN_DIR}/{{dataset}}/{{n}}m-stats.json",
    log:
        f"logs/inference/{RUN_NAME}/{{dataset}}-{{n}}m.log",
    conda:
        "../../envs/moveorder.yaml"
    threads: config["threads"]["infer"]
    resources:
        runtime=config["inference"]["runtime_minutes"],
        mem_mb=8000,
    params:
        options=infer_options,
        calibration=lambda w, input: (
            f"--calibration {shlex.quote(input.calibration[0])}"
            if input.calibration
            else ""
        ),
    shell:
        "OMP_NUM_THREADS={threads} moveorder infer-set --arrangements {input.arrangements:q} "
        "--network {input.network:q} --out {output.results:q} --table {output.table:q} "
        "--sgf-dir {output.sgf:q} --stats {output.stats:q} {params.options} {params.calibration} "
        "> {log:q} 2>&1"


# selection.calibration: each run of the ranked beam infers every set's calibration games at its lengths with
# its own search (no chance stated: the fit is what they are for), then fits its chances on them.
rule infer_calibration:
    input:
        arrangements="data/arrangements/{dataset}/calibration/{n}m.jsonl",
        network=lambda w: network_file(w.network),
    output:
        results=f"{RUN_DIR}/calibration/{{dataset}}/{{n}}m.jsonl",
        table=f"{RUN_DIR}/calibration/{{dataset}}/{{n}}m.csv",
    log:
        f"logs/inference/{RUN_NAME}/calibration-{{dataset}}-{{n}}m.log",
    conda:
        "../../envs/moveorder.yaml"
    threads: config["threads"]["infer"]
    resources:
        runtime=config["inference"]["runtime_minutes"],
        mem_mb=8000,
    params:
        options=infer_options,
    shell:
        "OMP_NUM_THREADS={threads} moveorder infer-set --arrangements {input.arrangements:q} "
        "--network {input.network:q} --out {output.results:q} --table {output.table:q} {params.options} "
        "--calibration none "
        "> {log:q} 2>&1"


rule calibrate_run:
    input:
        calibration_results,
    output:
        f"{RUN_DIR}/calibration.json",
    log:
        f"logs/inference/{RUN_NAME}/calibrate.log",
    conda:
        "../../envs/moveorder.yaml"
    shell:
        "moveorder calibrate --results {input:q} --network {wildcards.network:q} --out {output:q} "
        "> {log:q} 2>&1"
