# Inference stage: simulated annealing over every arrangement of a set and length.
# Runs are named by their parameters, so a sweep and the main experiment share identical runs.


rule infer:
    input:
        arrangements="data/arrangements/{dataset}/{n}m.jsonl",
        network=lambda w: network_file(w.network),
    output:
        results=f"{RUN_DIR}/{{dataset}}/{{n}}m.jsonl",
        table=f"{RUN_DIR}/{{dataset}}/{{n}}m.csv",
        sgf=directory(f"{RUN_DIR}/{{dataset}}/{{n}}m-sgf"),
        stats=f"{RUN_DIR}/{{dataset}}/{{n}}m-stats.json",
    params:
        seed=config["seed"],
        chunk=config["inference"]["chunk"],
        cache=(
            ""
            if config["inference"]["cache_size"] is None
            else f"--cache-size {config['inference']['cache_size']}"
        ),
        schedule=config["inference"]["schedule"],
        method=lambda w: method_args(w.method),
        patience=config["inference"]["patience"],
        passes=lambda w: mo_settings.for_length(int(w.n), config["inference"]["beam_passes"], "inference.beam_passes"),
        widen=lambda w: mo_settings.for_length(int(w.n), config["inference"]["beam_widen"], "inference.beam_widen"),
        precision=config["policy"]["precision"],
        flags=lambda w: " ".join(
            f
            for f, on in (
                ("--average-symmetries", config["policy"]["average_symmetries"]),
                ("--legal-only", config["policy"]["legal_only"]),
            )
            if on
        ),
    threads: config["threads"]["infer"]
    resources:
        runtime=config["inference"]["runtime_minutes"],
        mem_mb=8000,
    conda:
        "../../envs/moveorder.yaml"
    log:
        f"logs/inference/{RUN_NAME}/{{dataset}}-{{n}}m.log",
    shell:
        "OMP_NUM_THREADS={threads} moveorder infer-set --arrangements {input.arrangements:q} "
        "--network {input.network:q} --out {output.results:q} --table {output.table:q} "
        "--sgf-dir {output.sgf:q} --stats {output.stats:q} --iterations {wildcards.iterations} "
        "--trials {wildcards.trials} --init {wildcards.init} --neighbour {wildcards.neighbour} "
        "--t-start {wildcards.t_start} --t-end {wildcards.t_end} --schedule {params.schedule} "
        "--seed {params.seed} --chunk {params.chunk} {params.cache} --precision {params.precision} "
        "{params.method} --patience {params.patience} --beam-passes {params.passes} "
        "--beam-widen {params.widen} "
        "{params.flags} "
        "> {log:q} 2>&1"
