# Inference stage: every arrangement of a set and length ordered by a run's search (annealing, the
# ranked beam, both, or the capture search). A run's folder names every setting that changes its orders
# (common.smk, RUN_NAME), so a sweep and the main experiment share identical runs.


rule infer:
    input:
        arrangements="data/arrangements/{dataset}/{n}m.jsonl",
        network=lambda w: network_file(w.network),
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
        seed=config["seed"],
        chunk=config["inference"]["chunk"],
        cache=(
            ""
            if config["inference"]["cache_size"] is None
            else f"--cache-size {config['inference']['cache_size']}"
        ),
        search=run_args,
        precision=config["policy"]["precision"],
        flags=lambda w: " ".join(
            f
            for f, on in (
                ("--average-symmetries", config["policy"]["average_symmetries"]),
                ("--legal-only", config["policy"]["legal_only"]),
            )
            if on
        ),
    shell:
        "OMP_NUM_THREADS={threads} moveorder infer-set --arrangements {input.arrangements:q} "
        "--network {input.network:q} --out {output.results:q} --table {output.table:q} "
        "--sgf-dir {output.sgf:q} --stats {output.stats:q} {params.search} "
        "--seed {params.seed} --chunk {params.chunk} {params.cache} --precision {params.precision} "
        "{params.flags} "
        "> {log:q} 2>&1"
