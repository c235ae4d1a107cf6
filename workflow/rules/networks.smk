# Networks stage: the paper's Leela Zero network by URL, and our own human policy trained on a pool.


rule download_network:
    output:
        "data/networks/{network}/{filename}",
    log:
        "logs/networks/download-{network}-{filename}.log",
    conda:
        "../../envs/moveorder.yaml"
    params:
        url=lambda w: config["networks"][w.network]["url"],
        sha256=lambda w: config["networks"][w.network].get("sha256") or "",
        mirror=mirror_option(),
    shell:
        "moveorder download --url {params.url:q} --dest {output:q} --sha256 '{params.sha256}' "
        "{params.mirror} --quiet > {log:q} 2>&1"


# A pool packed for a GPU (training.packed): each game's moves and when each stone was captured.
rule pack_pool:
    input:
        "data/pool/{dataset}.jsonl",
    output:
        "data/pool/{dataset}.npz",
    log:
        "logs/networks/pack-{dataset}.log",
    conda:
        "../../envs/moveorder.yaml"
    threads: config["threads"]["train"]
    params:
        even="--even-only" if config["training"]["even_only"] else "",
    shell:
        "moveorder pack-pool --pool {input:q} --out {output:q} --processes {threads} {params.even} --quiet "
        "> {log:q} 2>&1"


rule train_policy:
    input:
        pool=training_pool,
        init=init_network_file(),
    output:
        model="results/networks/trained-{dataset}/model.pt",
        weights="results/networks/trained-{dataset}/policy.txt.gz",
        metrics="results/networks/trained-{dataset}/metrics.json",
    log:
        "logs/networks/train-{dataset}.log",
    conda:
        "../../envs/moveorder.yaml"
    threads: config["threads"]["train"]
    resources:
        runtime=config["training"]["runtime_minutes"],
        mem_mb=8000,
    params:
        out_dir=lambda w, output: os.path.dirname(output.model),
        t=config["training"],
        flags=" ".join(
            ("--" if config["training"][k] else "--no-") + k.replace("_", "-")
            for k in ("value_head", "symmetries")
        ),
        seed=config["seed"],
        init=(
            f"--init {shlex.quote(config['training']['init'])}"
            if config["training"]["init"]
            else ""
        ),
    shell:
        "moveorder train-policy --pool {input.pool:q} --out-dir {params.out_dir:q} "
        "--blocks {params.t[blocks]} --filters {params.t[filters]} --steps {params.t[steps]} "
        "--batch-size {params.t[batch_size]} --lr {params.t[lr]} --warmup-steps {params.t[warmup_steps]} "
        "--lr-schedule {params.t[lr_schedule]} --precision {params.t[precision]} {params.flags} "
        "--heldout-fraction {params.t[heldout_fraction]} --heldout-positions {params.t[heldout_positions]} --seed {params.seed} {params.init} "
        "--max-move {params.t[max_move]} --threads {threads} --quiet > {log:q} 2>&1"


# Each trained network (and the shipped one) on each set's held-out games (the same split as
# training's), and, at training.cross_lengths, each set inferred with each trained network: its own
# level's and the others'.
rule cross_level:
    input:
        models=expand(
            "results/networks/trained-{dataset}/model.pt", dataset=TRAINED_SETS
        ),
        pools=expand("data/pool/{dataset}.jsonl", dataset=CROSS_SETS),
        inferred=[run_path(run, s, n, ".csv") for s, n, _, run in cross_level_runs()],
    output:
        heldout=report(
            "results/networks/cross_level.csv",
            caption="../report/cross_level.rst",
            category="Networks",
        ),
        inference="results/networks/cross_level_inference.csv",
        markdown="results/networks/cross_level.md",
    log:
        "logs/networks/cross_level.log",
    conda:
        "../../envs/moveorder.yaml"
    threads: config["threads"]["train"]
    resources:
        mem_mb=8000,
    params:
        # ... and the network shipped with the package, beside them.
        networks=" ".join(
            [
                f"--network trained-{t} results/networks/trained-{t}/model.pt"
                for t in TRAINED_SETS
            ]
            + [
                f"--network {mo_settings.REFERENCE_NETWORK} {mo_settings.REFERENCE_NETWORK}"
            ]
        ),
        heldout=" ".join(f"--heldout {s} data/pool/{s}.jsonl" for s in CROSS_SETS),
        inferred=" ".join(
            f"--inferred {s} {n} {net} {run_path(run, s, n, '.csv')}"
            for s, n, net, run in cross_level_runs()
        ),
        fraction=config["training"]["heldout_fraction"],
        positions=config["training"]["heldout_positions"],
        seed=config["seed"],
    shell:
        "moveorder cross-level {params.networks} {params.heldout} {params.inferred} "
        "--heldout-fraction {params.fraction} --positions {params.positions} --seed {params.seed} --threads {threads} "
        "--table {output.heldout:q} --inference-table {output.inference:q} --markdown {output.markdown:q} "
        "> {log:q} 2>&1"
