# Scoring stage: install the real KataGo, then the paper's territory loss of every actual and
# inferred sequence.


rule install_katago:
    input:
        # The katrain wheel KataGo comes from, where one is given (nodes without internet); else pip's.
        wheel=(
            []
            if config["katago"].get("binary") or not config["katago"].get("wheel")
            else [config["katago"]["wheel"]]
        ),
    output:
        binary=f"{KATAGO_DIR}/bin/katago",
        tuner=f"{KATAGO_DIR}/opencl-tune.txt",
        # The katrain wheel also brings the strong model; a user's own binary brings none.
        models=[] if config["katago"].get("binary") else [WHEEL_MODEL],
    log:
        "logs/katago/install.log",
    conda:
        "../../envs/moveorder.yaml"
    params:
        binary=config["katago"].get("binary") or "",
        dest=lambda w, output: os.path.dirname(os.path.dirname(output.binary)),
    shell:
        "moveorder install-katago --dest {params.dest:q} "
        "$([ -n '{params.binary}' ] && echo --binary '{params.binary}') "
        "$([ -n '{input.wheel}' ] && echo --wheel '{input.wheel}') > {log:q} 2>&1"


rule katago_model:
    output:
        f"{KATAGO_DIR}/models/{{model_file}}",
    log:
        "logs/katago/model-{model_file}.log",
    conda:
        "../../envs/moveorder.yaml"
    params:
        spec=lambda w: katago_model_spec(w.model_file),
        mirror=mirror_option(),
    shell:
        "moveorder download --url {params.spec[url]:q} --dest {output:q} "
        "--sha256 '{params.spec[sha256]}' {params.mirror} --quiet > {log:q} 2>&1"


ruleorder: install_katago > katago_model


# The actual sequences of a set, analysed once for all its lengths (each length's are clips of the same
# games) and every run scored in this folder; each score job then analyses only what is new.
rule analyse_actual:
    input:
        arrangements=expand("data/arrangements/{{dataset}}/{n}m.jsonl", n=LENGTHS),
        katago=rules.install_katago.output.binary,
        tuner=rules.install_katago.output.tuner,
        model=katago_model_file(),
    output:
        analyses=f"{ACTUAL_DIR}/{{dataset}}.jsonl",
        stats=f"{ACTUAL_DIR}/{{dataset}}-stats.json",
    log:
        f"logs/scoring/actual/{KATAGO_TAG}/{{dataset}}.log",
    conda:
        "../../envs/moveorder.yaml"
    threads: config["katago"]["threads"]
    resources:
        runtime=config["katago"]["runtime_minutes"],
        mem_mb=8000,
    params:
        k=config["katago"],
        komi=lambda w: config["datasets"][w.dataset].get(
            "komi", config["katago"]["komi"]
        ),
        rules=lambda w: config["datasets"][w.dataset].get(
            "rules", config["katago"]["rules"]
        ),
        arrangements=lambda w, input: " ".join(
            f"--arrangements {shlex.quote(p)}" for p in input.arrangements
        ),
        work=lambda w, output: os.path.join(
            os.path.dirname(output.analyses), f"katago-{w.dataset}"
        ),
        shared="--shared-cache" if config["katago"]["shared_cache"] else "",
    shell:
        "moveorder analyse-actual {params.arrangements} --katago {input.katago:q} --model {input.model:q} "
        "--tuner {input.tuner:q} --tuning {params.k[tuning]:q} --visits {params.k[visits]} --rules {params.rules} --komi {params.komi} "
        "{params.shared} --threads {threads} --max-batch {params.k[max_batch]} "
        "--cache {params.work:q}/analyses.jsonl --work-dir {params.work:q} "
        "--out {output.analyses:q} --stats {output.stats:q} > {log:q} 2>&1"


rule score:
    input:
        results=f"{RUN_DIR}/{{dataset}}/{{n}}m.jsonl",
        actual=rules.analyse_actual.output.analyses,
        katago=rules.install_katago.output.binary,
        tuner=rules.install_katago.output.tuner,
        model=katago_model_file(),
    output:
        table=f"{SCORE_DIR}/{{dataset}}/{{n}}m.csv",
        moves=f"{SCORE_DIR}/{{dataset}}/{{n}}m-moves.csv",
        stats=f"{SCORE_DIR}/{{dataset}}/{{n}}m-stats.json",
    log:
        f"logs/scoring/{RUN_NAME}/{KATAGO_TAG}/{{dataset}}-{{n}}m.log",
    conda:
        "../../envs/moveorder.yaml"
    threads: config["katago"]["threads"]
    resources:
        runtime=config["katago"]["runtime_minutes"],
        mem_mb=8000,
    params:
        k=config["katago"],
        komi=lambda w: config["datasets"][w.dataset].get(
            "komi", config["katago"]["komi"]
        ),
        rules=lambda w: config["datasets"][w.dataset].get(
            "rules", config["katago"]["rules"]
        ),
        work=lambda w, output: os.path.join(
            os.path.dirname(output.table), f"katago-{w.n}m"
        ),
        clamp="--clamp" if config["katago"]["clamp"] else "",
        shared="--shared-cache" if config["katago"]["shared_cache"] else "",
    # One analysis cache a job, in its work folder (a rerun after a crash resumes from it), over the
    # set's actual analyses. Each position is analysed from an empty network cache (unless
    # katago.shared_cache), so its leads depend on the position alone, whichever job analysed it.
    shell:
        "moveorder score --results {input.results:q} --katago {input.katago:q} --model {input.model:q} "
        "--tuner {input.tuner:q} --tuning {params.k[tuning]:q} --visits {params.k[visits]} --rules {params.rules} --komi {params.komi} "
        "--delta-max {params.k[delta_max]} {params.clamp} {params.shared} --threads {threads} --max-batch {params.k[max_batch]} "
        "--cache {params.work:q}/analyses.jsonl --seed-cache {input.actual:q} --work-dir {params.work:q} "
        "--table {output.table:q} --moves-table {output.moves:q} --stats {output.stats:q} > {log:q} 2>&1"
