# Networks stage: the paper's Leela Zero network by URL, and our own human policy trained on a pool.


rule download_network:
    output:
        "data/networks/{network}/{filename}",
    params:
        url=lambda w: config["networks"][w.network]["url"],
        sha256=lambda w: config["networks"][w.network].get("sha256") or "",
        mirror=mirror_option(),
    conda:
        "../../envs/moveorder.yaml"
    log:
        "logs/networks/download-{network}-{filename}.log",
    shell:
        "moveorder download --url {params.url:q} --dest {output:q} --sha256 '{params.sha256}' "
        "{params.mirror} --quiet > {log:q} 2>&1"


rule train_policy:
    input:
        "data/pool/{dataset}.jsonl",
    output:
        model="results/networks/trained-{dataset}/model.pt",
        weights="results/networks/trained-{dataset}/policy.txt.gz",
        metrics="results/networks/trained-{dataset}/metrics.json",
    params:
        out_dir=lambda w: f"results/networks/trained-{w.dataset}",
        t=config["training"],
        seed=config["seed"],
    threads: config["threads"]["train"]
    resources:
        runtime=config["training"]["runtime_minutes"],
        mem_mb=8000,
    conda:
        "../../envs/moveorder.yaml"
    log:
        "logs/networks/train-{dataset}.log",
    shell:
        "moveorder train-policy --pool {input:q} --out-dir {params.out_dir:q} "
        "--blocks {params.t[blocks]} --filters {params.t[filters]} --steps {params.t[steps]} "
        "--batch-size {params.t[batch_size]} --lr {params.t[lr]} "
        "--heldout-fraction {params.t[heldout_fraction]} --seed {params.seed} "
        "--threads {threads} --quiet > {log:q} 2>&1"
