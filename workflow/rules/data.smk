# Data stage: download -> extract -> filter -> select and clip.


rule download:
    output:
        "data/raw/{dataset}/{filename}",
    log:
        "logs/download/{dataset}/{filename}.log",
    retries: 1
    conda:
        "../../envs/moveorder.yaml"
    params:
        url=lambda w: url_spec(w.dataset, w.filename)["url"],
        sha256=lambda w: url_spec(w.dataset, w.filename).get("sha256") or "",
        mirror=mirror_option(),
    shell:
        "moveorder download --url {params.url:q} --dest {output:q} --sha256 '{params.sha256}' "
        "{params.mirror} --quiet > {log:q} 2>&1"


rule extract:
    input:
        lambda w: dataset_files(w.dataset),
    output:
        temp(directory("data/extracted/{dataset}")),
    log:
        "logs/extract/{dataset}.log",
    conda:
        "../../envs/moveorder.yaml"
    params:
        fmt=lambda w: (
            f"--format {config['datasets'][w.dataset]['format']}"
            if config["datasets"][w.dataset].get("format")
            else ""
        ),
    shell:
        "moveorder extract {input:q} --dest {output:q} {params.fmt} > {log:q} 2>&1"


rule filter_records:
    input:
        "data/extracted/{dataset}",
    output:
        qualified="data/records/{dataset}/qualified.jsonl",
        usable="data/records/{dataset}/usable.jsonl",
        report="results/data/{dataset}/filter_report.csv",
        rejected="results/data/{dataset}/rejected.csv",
    log:
        "logs/filter/{dataset}.log",
    conda:
        "../../envs/moveorder.yaml"
    threads: config["threads"]["filter"]
    params:
        capture_free=config["filter"]["capture_free"],
        min_moves=config["filter"]["min_moves"],
        include=lambda w: " ".join(
            repr(g) for g in config["datasets"][w.dataset].get("include", [])
        ),
        record_format=lambda w: config["datasets"][w.dataset].get(
            "record_format", "sgf"
        ),
    shell:
        "moveorder filter --input {input:q} --qualified {output.qualified:q} --usable {output.usable:q} "
        "--report {output.report:q} --rejected {output.rejected:q} "
        "--capture-free {params.capture_free} --min-moves {params.min_moves} "
        "--record-format {params.record_format} --workers {threads} --include {params.include} > {log:q} 2>&1"


# Evaluation games (and selection.calibration games more) from the qualified records; the training pool
# from every usable record.
rule select_games:
    input:
        qualified="data/records/{dataset}/qualified.jsonl",
        usable="data/records/{dataset}/usable.jsonl",
    output:
        arrangements=expand("data/arrangements/{{dataset}}/{n}m.jsonl", n=LENGTHS),
        pool="data/pool/{dataset}.jsonl",
        pool_report="results/data/{dataset}/pool_report.csv",
        selection="results/data/{dataset}/selection.csv",
        calibration=expand(
            "data/arrangements/{{dataset}}/calibration/{n}m.jsonl",
            n=LENGTHS if CALIBRATION_GAMES else [],
        ),
    log:
        "logs/select/{dataset}.log",
    conda:
        "../../envs/moveorder.yaml"
    params:
        games=config["selection"]["games"],
        captures=config["selection"]["captures"],
        # With captures allowed the games are drawn from the usable records (qualified but for captures).
        records=lambda w, input: (
            input.qualified
            if config["selection"]["captures"] == "forbidden"
            else input.usable
        ),
        seed=config["seed"],
        lengths=" ".join(str(n) for n in LENGTHS),
        out_dir=lambda w, output: os.path.dirname(output.arrangements[0]),
        calibration=lambda w, output: (
            f"--calibration-count {CALIBRATION_GAMES} --calibration-dir "
            + shlex.quote(os.path.dirname(output.calibration[0]))
            if CALIBRATION_GAMES
            else ""
        ),
    shell:
        "moveorder select --records {params.records:q} --usable {input.usable:q} --set {wildcards.dataset} "
        "--count {params.games} --seed {params.seed} --lengths {params.lengths} --out-dir {params.out_dir:q} "
        "--captures {params.captures} {params.calibration} "
        "--pool {output.pool:q} --pool-report {output.pool_report:q} --selection {output.selection:q} "
        "> {log:q} 2>&1"
