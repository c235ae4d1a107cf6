#!/usr/bin/env bash
# config/gpu.yaml on a bare GPU machine, in stages, everything it makes packed into one folder ($OUT).
#
#   bash scripts/gpu_run.sh [--cpu-stands-in] STAGE...
#
# Run from the repository root. Stages, in the order given:
#   pack     (on the machine that prepares the run, with a network) what the GPU machine lacks, under ignored
#            paths: .whl/ (the wheels of the workflow's dependencies for Python 3.12, torch and its CUDA
#            libraries excepted, and numpy, pandas and matplotlib with theirs, which most torch images have),
#            gpu/wheels-plot/ (those three and theirs, to carry where the machine lacks them), gpu/bundle/katago/
#            (the katrain wheel's KataGo, stripped and xz'd, its libraries and an OpenCL ICD loader),
#            gpu/bundle/models/ (the wheel's b10c384 model), gpu/bundle/mirror/ (the archives of the sets and
#            KataGo's small test network); prints each path's size: what travels is at most 64 MiB a call
#   setup    bench/gpu_check.py --prepare-only (the missing wheels installed from .whl/ and gpu/wheels-plot/,
#            a moveorder command, NVIDIA's OpenCL for KataGo; the GPU and torch reported, and a torch that
#            sees no CUDA device refused), then KataGo unpacked into the run's tools/katago with
#            `moveorder install-katago --binary`, with the models carried
#   check    bench/gpu_check.py (CHECK_SKIP: steps to skip, default "tests position", for time; CHECK_SKIP=position
#            runs the `gpu` tests too, with the pytest carried in .whl/)
#   s20, s40 the workflow's `results/lengths/Nm.done`: every set's inference at N moves by both searches
#            (the sweeps at N too), and their KataGo scoring where the model is there (else inference alone)
#   all      the whole configuration: what is left, the figures, the paper comparisons, the sweeps' tables
#   ship     what comes back, five files in $OUT: results.tar.gz (the run's results, logs, arrangements, the
#            check's report and Snakemake's logs; not the networks' checkpoints), trained-pro.pt and
#            trained-kgs.pt (the fine-tuned networks, 8.3 MB each), summary.md (stage times, the machine, the
#            check, the paper comparisons) and log.txt (this script's output)
# A stage that fails stops the script (ship still runs when asked for). The workflow resumes where a
# killed call stopped (a killed inference job from its last finished chunk), so a stage can be called again.
#
# Environment: OUT (default gpu/out), WORK (the workflow's folder, default gpu/work), CORES (default: all),
# PYTHON (default python3), STAGE_SECONDS (default 560: each workflow stage is cut there, so that
# ship still runs inside a 10-minute call). --cpu-stands-in: the same on a CPU at a tiny size
# (config/gpu-rehearsal.yaml over config/gpu.yaml, gpu_check.py --cpu-stands-in), to rehearse the script.
#
# Planned GPU calls (one H200, 16 cores; 15 minutes of device time in all, start-up included). What
# travels each call: the working tree, plus the carried paths below (ignored by git; made by `pack`:
# .whl 19 MiB, gpu/bundle/katago 2.7, gpu/bundle/mirror 13, gpu/bundle/models 37, gpu/wheels-plot 52).
# The rehearsal on a 2-core CPU (`--cpu-stands-in setup check s20 s40 all ship`, at the lowest priority
# beside other work): setup 4 s, check 53 s, s20 447 s, s40 229 s, all 30 s, ship 1 s (docs/benchmarks.md).
#   1. carry .whl gpu/bundle/katago gpu/bundle/mirror (~35 MiB), timeout 520 s:
#      `STAGE_SECONDS=330 bash scripts/gpu_run.sh setup check s20 ship`. Estimated: setup 0.5 min; check
#      1.5-2 min; then s20 (cut at 5.5 min): data 1.5 min, pack-pool + the two fine-tunings about 1 min (18 s a
#      network measured), the beam's 20-move sets about 1 min (72 s for 200 arrangements measured), and the
#      annealing's first minutes (no KataGo model yet: inference alone). Brings back the check, the
#      networks and what finished.
#   2. carry gpu/bundle/models (what call 1 left stays while the machine is warm), timeout 220 s
#      (start-up and call 1 leave about 4 minutes):
#      `STAGE_SECONDS=180 bash scripts/gpu_run.sh s20 ship`: more of the annealing, and KataGo (b10c384, 100
#      visits, 16 threads sharing its batches; OpenCL tuning on first use, 1-2 min) on what is inferred.
#   Not in 15 minutes: the annealing at the paper's budget. It asks about 16 positions a chain-iteration at
#   20 moves and 27 at 40 (bench/anneal.py's bookkeeping, in the check), so 500 chains x 5,000 iterations
#   are 40 million positions of the 6 x 128 (about 1.3 GFLOP each) a 20-move set and 500 x 20,000 are 270
#   million a 40-move set: at an estimated 100,000 positions a second in TF32, about 7 min a 20-move run
#   (2 of them, and 4 more for the sweeps) and 45 min a 40-move run (2), over 2 hours of one GPU in all,
#   unmeasured. So the whole configuration is a job for a longer allocation: `STAGE_SECONDS=36000 bash
#   scripts/gpu_run.sh setup check s20 s40 all ship` (or snakemake itself, as in config/gpu.yaml).
#   Where the machine lacks numpy, pandas or matplotlib (setup names what it installed, and refuses
#   where an import fails), carry gpu/wheels-plot as well (52 MiB: in a call of its own).
set -euo pipefail
REPO=$(pwd)
CPU=0
STAGES=()
for arg in "$@"; do
    case "$arg" in
        --cpu-stands-in) CPU=1 ;;
        pack | setup | check | s20 | s40 | all | ship) STAGES+=("$arg") ;;
        *) echo "gpu_run.sh: unknown stage $arg (pack setup check s20 s40 all ship; --cpu-stands-in)" >&2; exit 2 ;;
    esac
done
[ ${#STAGES[@]} -gt 0 ] || { sed -n '2,30p' "$0"; exit 2; }
OUT=${OUT:-$REPO/gpu/out}
WORK=${WORK:-$REPO/gpu/work}
PYTHON=${PYTHON:-python3}
CORES=${CORES:-$(nproc)}
STAGE_SECONDS=${STAGE_SECONDS:-560}
BUNDLE=$REPO/gpu/bundle
PREP=$WORK/.prepared               # the environment that setup made (sourced by the later stages and calls)
MODEL=b10c384h6nbttflrs.bin.gz
CONFIGS=("$REPO/config/gpu.yaml")
CHECK_ARGS=()
if [ "$CPU" = 1 ]; then
    CONFIGS+=("$REPO/config/gpu-rehearsal.yaml")
    CHECK_ARGS+=(--cpu-stands-in)
fi
mkdir -p "$OUT" "$WORK"
exec > >(tee -a "$OUT/log.txt") 2>&1
export PYTHONUNBUFFERED=1
T0=$(date +%s)
LOGS=$WORK/run-logs              # the check and Snakemake logs (shipped in the archive)
mkdir -p "$LOGS"
TIMES=$LOGS/stage-times.txt
stamp() { echo "[$(($(date +%s) - T0)) s] $*"; }
[ -f "$PREP/env.sh" ] && . "$PREP/env.sh"

stage_pack() {
    local py=${PACK_PYTHON:-$REPO/.venv/bin/python} req
    mkdir -p .whl gpu/wheels-plot "$BUNDLE"/katago "$BUNDLE"/models "$BUNDLE"/mirror
    # the workflow's dependencies as installed here, for Python 3.12; the plotting stack apart
    "$py" - > gpu/requirements.txt <<'EOF'
import importlib.metadata as md, re
from packaging.requirements import Requirement
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
env = {"python_version": "3.12", "python_full_version": "3.12.0", "sys_platform": "linux", "platform_system": "Linux",
       "platform_machine": "x86_64", "os_name": "posix", "implementation_name": "cpython",
       "platform_python_implementation": "CPython", "extra": ""}
skip = {"torch", "triton", "pulp", "setuptools", "pip", "wheel"}  # pulp: snakemake's ILP scheduler (greedy here)
seen, todo = {}, ["snakemake", "sgfmill", "requests", "py7zr", "tqdm", "jsonschema", "pyyaml", "tabulate",
                  "pandas", "matplotlib", "numpy", "pytest"]
while todo:
    n = norm(todo.pop())
    if n in seen or n in skip or n.startswith("nvidia-"):
        continue
    d = md.distribution(n)
    seen[n] = d.version
    todo += [Requirement(r).name for r in d.requires or [] if Requirement(r).marker is None or Requirement(r).marker.evaluate(env)]
for n, v in sorted(seen.items()):
    print(f"{n}=={v}")
EOF
    local plot="numpy|pandas|matplotlib|contourpy|cycler|fonttools|kiwisolver|pillow|pyparsing|python-dateutil|six|tzdata"
    while read -r req; do
        local dest=.whl
        [[ "${req%%==*}" =~ ^($plot)$ ]] && dest=gpu/wheels-plot
        ls "$dest"/*.whl 2>/dev/null | grep -qi "/$(echo "${req%%==*}" | tr - _)-${req##*==}-" && continue
        "$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
            --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
            --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$dest" "$req" > /dev/null 2>&1 ||
            "$py" -m pip wheel -q --no-deps -w "$dest" "$req" > /dev/null  # a source-only package: built here
    done < gpu/requirements.txt
    # KataGo from the katrain wheel (tools/katago, scripts/setup.sh), its libraries, an OpenCL ICD loader
    local root=tools/katago/squashfs-root
    if [ ! -f "$BUNDLE/katago/katago.xz" ]; then
        strip -o "$BUNDLE/katago/katago.bin" "$root/usr/bin/katago"
        xz -T0 -6 -f "$BUNDLE/katago/katago.bin"
        mv "$BUNDLE/katago/katago.bin.xz" "$BUNDLE/katago/katago.xz"
    fi
    cp -L "$root"/usr/lib/*.so* "$BUNDLE/katago/"
    cp -L "$(ldconfig -p | awk '/libOpenCL.so.1 .*x86-64/ {print $NF; exit}')" "$BUNDLE/katago/libOpenCL.so.1"
    cp -L "tools/katago/models/$MODEL" "$BUNDLE/models/"
    # the archives of gpu.yaml's sets and KataGo's small network, from the URL mirror
    local mirror=${MIRROR:-$REPO/../shared/data/mirror}
    "$py" - "$mirror" "$BUNDLE/mirror" <<'EOF'
import shutil, sys, yaml
from pathlib import Path
from urllib.parse import urlsplit
src, dest = Path(sys.argv[1]), Path(sys.argv[2])
cfg = yaml.safe_load(open("config/config.yaml"))
gpu = yaml.safe_load(open("config/gpu.yaml"))
urls = [u["url"] for s in gpu["sets"] for u in cfg["datasets"][s]["urls"]]
urls += [m["url"] for m in cfg["katago"]["models"].values() if "url" in m]
for url in urls:
    p = urlsplit(url)
    rel = Path(p.netloc) / p.path.lstrip("/")
    (dest / rel).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src / rel, dest / rel)
EOF
    du -sh --apparent-size .whl gpu/wheels-plot "$BUNDLE"/katago "$BUNDLE"/models "$BUNDLE"/mirror
}

stage_setup() {
    mkdir -p "$PREP"
    local wheels="$PREP/wheels"
    rm -rf "$wheels" && mkdir -p "$wheels"
    cp .whl/*.whl "$wheels/" 2>/dev/null || true
    cp gpu/wheels-plot/*.whl "$wheels/" 2>/dev/null || true
    "$PYTHON" bench/gpu_check.py --prepare-only --wheels "$wheels" --site "$PREP/site" \
        --opencl-vendors "$PREP/opencl" --env-file "$PREP/env.sh"
    . "$PREP/env.sh"
    if [ "$CPU" = 0 ] && ! "$PYTHON" -c "import torch, sys; sys.exit(not torch.cuda.is_available())"; then
        echo "setup: torch sees no CUDA device; carry a CUDA build of torch (or run with --cpu-stands-in)" >&2
        return 1
    fi
    "$PYTHON" -c "import snakemake, sgfmill, py7zr, pandas, matplotlib, yaml" || {
        echo "setup: a dependency is missing after the wheels (carry gpu/wheels-plot where numpy, pandas or matplotlib are)" >&2
        return 1
    }
    # KataGo: the katrain wheel's binary with its libraries, behind the workflow's own wrapper
    local k=$PREP/katago
    mkdir -p "$k"
    xz -dc "$BUNDLE/katago/katago.xz" > "$k/katago.bin" && chmod +x "$k/katago.bin"
    cp "$BUNDLE"/katago/*.so* "$k/"
    printf '#!/bin/sh\nexport LD_LIBRARY_PATH="%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"\nexec "%s/katago.bin" "$@"\n' "$k" "$k" > "$k/katago"
    chmod +x "$k/katago"
    # once: a new wrapper or tuning file would make the workflow score everything again
    [ -x "$WORK/tools/katago/bin/katago" ] || moveorder install-katago --dest "$WORK/tools/katago" --binary "$k/katago"
    link_models
    "$WORK/tools/katago/bin/katago" version | head -n 1
}

link_models() {  # the carried models into the run's tools/katago/models (they come in a later call too)
    mkdir -p "$WORK/tools/katago/models"
    for m in "$BUNDLE"/models/*.bin.gz "$BUNDLE"/mirror/github.com/lightvector/KataGo/raw/master/cpp/tests/models/*.bin.gz; do
        # a link made again would be newer than the scores made with it
        [ -f "$m" ] && [ ! -e "$WORK/tools/katago/models/$(basename "$m")" ] && ln -s "$m" "$WORK/tools/katago/models/"
    done
    return 0
}

stage_check() {
    local model=$WORK/tools/katago/models/$MODEL skip
    read -r -a skip <<< "${CHECK_SKIP-tests position}"
    [ "$CPU" = 1 ] && model=$WORK/tools/katago/models/g170-b6c96-s175395328-d26788732.bin.gz
    [ -e "$model" ] || skip+=(katago)
    local args=(--out "$LOGS/gpu-check.md" --mirror "$BUNDLE/mirror" --katago "$WORK/tools/katago/bin/katago"
        --katago-model "$model" --wheels "$PREP/wheels" --site "$PREP/site" --opencl-vendors "$PREP/opencl")
    [ ${#skip[@]} -gt 0 ] && args+=(--skip "${skip[@]}")
    "$PYTHON" bench/gpu_check.py "${args[@]}" "${CHECK_ARGS[@]}"
}

workflow() {  # workflow TARGET...: snakemake on config/gpu.yaml in $WORK, cut at STAGE_SECONDS
    link_models
    local omit=()
    # no KataGo model carried yet: inference alone (the scoring in a later call)
    [ "$CPU" = 0 ] && [ ! -e "$WORK/tools/katago/models/$MODEL" ] && omit=(--omit-from install_katago) &&
        echo "no KataGo model yet ($MODEL): inference alone"
    timeout --signal=INT --kill-after=20 "$STAGE_SECONDS" "$PYTHON" -m snakemake --snakefile "$REPO/Snakefile" \
        --directory "$WORK" --cores "$CORES" --configfile "${CONFIGS[@]}" --config mirror="$BUNDLE/mirror" \
        --scheduler greedy --rerun-incomplete --keep-going --printshellcmds "${omit[@]}" -- "$@" \
        > "$LOGS/snakemake-$STAGE.log" 2>&1
}

stage_s20() { workflow results/lengths/20m.done; }
stage_s40() { workflow results/lengths/40m.done; }
stage_all() { workflow all; }

stage_ship() {
    local summary=$OUT/summary.md
    {
        echo "# config/gpu.yaml$([ "$CPU" = 1 ] && echo ' (CPU standing in, config/gpu-rehearsal.yaml over it: no GPU figures)')"
        echo
        echo "$(date -u '+%Y-%m-%d %H:%M UTC'); git $(git rev-parse --short HEAD 2>/dev/null || echo '?'); stages: ${STAGES[*]}"
        echo
        echo '## Stage times'
        echo
        echo '```'
        cat "$TIMES" 2>/dev/null
        echo '```'
        [ -f "$LOGS/gpu-check.md" ] && { echo; sed 's/^## /### /' "$LOGS/gpu-check.md"; }
        for f in "$WORK"/results/paper_comparison.md "$WORK"/results/methods/*/paper_comparison.md \
            "$WORK"/results/networks/cross_level.md; do
            [ -f "$f" ] && { echo; echo "## ${f#"$WORK"/}"; echo; cat "$f"; }
        done
        echo
        echo '## The tables made'
        echo
        echo '```'
        (cd "$WORK" && ls results/inferred/*/*/*/*m.csv results/scored/*/*/*/*/*m.csv 2>/dev/null)
        echo '```'
    } > "$summary"
    local keep=()
    for p in results logs data/arrangements run-logs; do [ -e "$WORK/$p" ] && keep+=("$p"); done
    (cd "$WORK" && tar czf "$OUT/results.tar.gz" --exclude='*/katago-*' --exclude='*.npz' --exclude='*.pt' \
        --exclude='policy.txt.gz' "${keep[@]}")
    for net in "$WORK"/results/networks/trained-*/model.pt; do
        [ -f "$net" ] && cp "$net" "$OUT/$(basename "$(dirname "$net")").pt"
    done
    ls -la "$OUT"
}

for STAGE in "${STAGES[@]}"; do
    t=$(date +%s)
    stamp "stage $STAGE"
    rc=0
    "stage_$STAGE" || rc=$?
    echo "$STAGE: exit $rc, $(($(date +%s) - t)) s" | tee -a "$TIMES"
    if [ "$rc" != 0 ] && [ "$STAGE" != ship ]; then
        if [[ " ${STAGES[*]} " == *" ship "* ]]; then
            stamp "stage ship (after $STAGE failed)"
            stage_ship || true
        fi
        exit "$rc"
    fi
done
