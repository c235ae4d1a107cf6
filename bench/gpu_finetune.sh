#!/usr/bin/env bash
# Issue 24 on a lent GPU, the second lease: the shipped `tygem-6x128` trained further on the Tygem
# pool, then fine-tuned on each level's own games, then config/cpu.yaml's Pro20 and KGS20
# arrangements inferred with the opening-tuned networks. One call; every stage is cut by its own
# timeout, so what finished comes back.
#
# Run on the device machine from the repository root, with what this machine made beforehand
# (all ignored by git):
#   gpu/tygem.npz    moveorder pack-pool --pool data/pool/tygem.jsonl --out gpu/tygem.npz --processes 2
#   gpu/pro.npz      moveorder pack-pool --pool data/pool/pro.jsonl --out gpu/pro.npz --even-only
#   gpu/kgs.npz      moveorder pack-pool --pool data/pool/kgs.jsonl --out gpu/kgs.npz --even-only
#   data/arrangements/{pro,kgs}/20m.jsonl   config/cpu.yaml's Pro20 and KGS20 arrangements
#   .whl/sgfmill-*.whl                      the one dependency the device image lacks
# Stages (environment variables, defaults for an H200):
#   1. tygem: INIT (tygem-6x128) trained TYGEM_STEPS (15000) more steps of 1,024 on gpu/tygem.npz,
#      AdamW lr 0.002, 300 warm-up steps, cosine to 0 (a warm restart of the shipped run's recipe);
#   2. four fine-tunings from stage 1, side by side on the one GPU, lr 0.001, cosine:
#      pro-all / kgs-all: FT_STEPS (1500) steps of 1,024 on every position of the level's even games;
#      pro-open60 / kgs-open60: OPEN_STEPS (800) steps of 256 on their first 60 moves (--max-move 60);
#   3. Pro20 with pro-open60 and KGS20 with kgs-open60: ranked beam W = WIDTH (512), 8 processes
#      each, INFER_SECONDS (100) each.  LENGTH=40: the 40-move sets instead; NETS=DIR: stage 3 alone,
#      with DIR/pro-open60.pt and DIR/kgs-open60.pt (a second call, the networks carried back).
# To check the script on a CPU: DEVICE=cpu BLOCKS=1 FILTERS=8 INIT= TYGEM_STEPS=20 FT_STEPS=10
# OPEN_STEPS=10 WIDTH=4 POOLDIR=small (no GPU figures then).
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
DEVICE=${DEVICE:-cuda}
BLOCKS=${BLOCKS:-6}
FILTERS=${FILTERS:-128}
INIT=${INIT-tygem-6x128}
TYGEM_STEPS=${TYGEM_STEPS:-15000}
FT_STEPS=${FT_STEPS:-1500}
OPEN_STEPS=${OPEN_STEPS:-800}
WIDTH=${WIDTH:-512}
INFER_SECONDS=${INFER_SECONDS:-100}
TYGEM_SECONDS=${TYGEM_SECONDS:-330}
FT_SECONDS=${FT_SECONDS:-150}
POOLDIR=${POOLDIR:-gpu}
SEED=20231128
WORK=${WORK:-/tmp/ft}
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
if ! python3 -c "import sgfmill" 2>/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
exec > >(tee -a "$OUT/log.txt") 2>&1
date -u
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.is_available() and torch.cuda.get_device_name(0))"
nproc
mkdir -p "$WORK"

train() {  # train DIR SECONDS ARGS...: one train-policy run, cut at SECONDS; its log and metrics kept
    local dir=$1 secs=$2
    shift 2
    local t=$(date +%s)
    timeout "$secs" python3 -m moveorder.cli train-policy --out-dir "$WORK/$dir" --blocks "$BLOCKS" \
        --filters "$FILTERS" --no-value-head --no-symmetries --precision auto --lr-schedule cosine \
        --heldout-fraction 0.05 --seed "$SEED" --device "$DEVICE" --quiet "$@" > "$WORK/$dir.log" 2>&1
    echo "$dir: exit $?, $(( $(date +%s) - t )) s"
    if [ -f "$WORK/$dir/metrics.json" ]; then
        cp "$WORK/$dir/model.pt" "$OUT/$dir.pt"
        python3 -c "import json; m=json.load(open('$WORK/$dir/metrics.json')); print('$dir', {k: m.get(k) for k in ('top1_accuracy','mean_log_likelihood','positions','steps','steps_per_second','seconds')})"
    else  # cut: the last checkpoint's weights, as a model.pt
        python3 bench/cut_checkpoint.py "$WORK/$dir/checkpoint.pt" "$OUT/$dir.pt"
    fi
}

NETS=${NETS:-}     # a folder with pro-open60.pt and kgs-open60.pt: skip stages 1 and 2, infer with those
LENGTH=${LENGTH:-20}
if [ -z "$NETS" ]; then
init=()
[ -n "$INIT" ] && init=(--init "$INIT")
train tygem "$TYGEM_SECONDS" --pool "$POOLDIR/tygem.npz" "${init[@]}" --steps "$TYGEM_STEPS" --batch-size 1024 \
    --lr 0.002 --warmup-steps 300 --checkpoint-every 1000
base=$WORK/tygem/model.pt
[ -f "$base" ] || base=$OUT/tygem.pt

pids=()
for level in pro kgs; do
    train "$level-all" "$FT_SECONDS" --pool "$POOLDIR/$level.npz" --init "$base" --steps "$FT_STEPS" \
        --batch-size 1024 --lr 0.001 --warmup-steps 100 --checkpoint-every 500 &
    pids+=($!)
    train "$level-open60" "$FT_SECONDS" --pool "$POOLDIR/$level.npz" --init "$base" --steps "$OPEN_STEPS" \
        --batch-size 256 --lr 0.001 --warmup-steps 50 --max-move 60 --checkpoint-every 500 &
    pids+=($!)
done
wait "${pids[@]}"
NETS=$OUT
fi

t=$(date +%s)
pids=()
for level in pro kgs; do
    mkdir -p "$WORK/inf-$level"
    split -n l/8 -d "data/arrangements/$level/${LENGTH}m.jsonl" "$WORK/inf-$level/part"
    for f in "$WORK/inf-$level"/part0?; do
        OMP_NUM_THREADS=1 timeout "$INFER_SECONDS" python3 -m moveorder.cli infer-set --arrangements "$f" \
            --out "$f.out.jsonl" --table "$f.csv" --network "$NETS/$level-open60.pt" --device "$DEVICE" \
            --method beam --beam-width "$WIDTH" --beam-future 1.0 --seed "$SEED" --quiet > "$f.log" 2>&1 &
        pids+=($!)
    done
done
wait "${pids[@]}"
echo "inference: $(( $(date +%s) - t )) s"
for level in pro kgs; do
    echo "$level: $(cat "$WORK/inf-$level"/part0?.out.jsonl 2>/dev/null | wc -l) of 100 arrangements"
    cat "$WORK/inf-$level"/part0?.out.jsonl > "$WORK/$level$LENGTH.jsonl" 2>/dev/null
    awk 'FNR > 1 || NR == 1' "$WORK/inf-$level"/part0?.csv > "$WORK/$level$LENGTH.csv" 2>/dev/null
    tail -n 2 "$WORK/inf-$level/part00.log"
done
(cd "$WORK" && tar czf "$OUT/results.tgz" ./*.log ./*/metrics.json ./*$LENGTH.jsonl ./*$LENGTH.csv 2>/dev/null)
date -u
