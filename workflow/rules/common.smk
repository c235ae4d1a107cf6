# Helpers shared by every stage: config checks, path builders, wildcard constraints.
# Rules run `moveorder VERB`: from the activated venv (README) or a rule's conda env.
from pathlib import Path
from urllib.parse import urlsplit

for _name in config["sets"]:
    if _name not in config["datasets"]:
        raise ValueError(f"config: sets names {_name!r}, which is not a key of `datasets`")

DATASETS = list(config["datasets"])
LENGTHS = [int(n) for n in config["selection"]["lengths"]]


def url_filename(url):
    return Path(urlsplit(url).path).name


def dataset_files(dataset):
    """What the extract step reads for a dataset: its downloaded files, or its local path."""
    spec = config["datasets"][dataset]
    if "path" in spec:
        return [spec["path"]]
    return [f"data/raw/{dataset}/{url_filename(u['url'])}" for u in spec["urls"]]


def url_spec(dataset, filename):
    for u in config["datasets"][dataset].get("urls", []):
        if url_filename(u["url"]) == filename:
            return u
    raise ValueError(f"dataset {dataset!r} has no URL ending in {filename!r}")


def mirror_option():
    return f"--mirror {config['mirror']!r}" if config.get("mirror") else ""


def data_targets():
    out = []
    for s in config["sets"]:
        out += expand("data/arrangements/{dataset}/{n}m.jsonl", dataset=s, n=LENGTHS)
        out += [f"results/data/{s}/filter_report.csv", f"data/pool/{s}.jsonl"]
    return out


def network_file(name=None):
    """The file behind a policy name: trained-SET (ours), a key of `networks` (by URL), or a path."""
    name = name or config["policy"]["network"]
    if name.startswith("trained-"):
        return f"results/networks/{name}/model.pt"
    if name in config["networks"]:
        return f"data/networks/{name}/{url_filename(config['networks'][name]['url'])}"
    return name
