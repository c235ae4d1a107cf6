#!/usr/bin/env bash
# Issue 24 on a lent GPU, in one call: Leela Zero's shape (6 x 128) trained on the packed Tygem pool,
# then the 100 Pro20 arrangements of config/cpu.yaml inferred with it (ranked beam, W 512).
#
# Run on the device machine from the repository root, with what this machine made beforehand:
#   gpu/tygem.npz (ignored by git)     moveorder pack-pool --pool data/pool/tygem.jsonl --out gpu/tygem.npz
#   data/arrangements/pro/20m.jsonl    config/cpu.yaml's Pro20 arrangements
#   .whl/sgfmill-*.whl                 the one dependency the device image lacks (pip download sgfmill==1.1.1)
# Environment: TRAIN_SECONDS (training's wall-time budget, default 300), INFER_SECONDS (default 120),
# BATCH (default 1024), LR (default 0.002), OUT (where the results go; the device tool sets it); to check
# the script itself on a CPU: DEVICE=cpu BLOCKS=1 FILTERS=8 POOL=small.npz (no GPU figures then).
# Training's length is fixed before it starts: a 120-step run measures steps per second, and the
# main run gets steps = rate x TRAIN_SECONDS, so its command (in $OUT/metrics.json) repeats exactly.
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
TRAIN_SECONDS=${TRAIN_SECONDS:-300}
INFER_SECONDS=${INFER_SECONDS:-120}
BATCH=${BATCH:-1024}
LR=${LR:-0.002}
DEVICE=${DEVICE:-cuda}
BLOCKS=${BLOCKS:-6}
FILTERS=${FILTERS:-128}
POOL=${POOL:-gpu/tygem.npz}
ARRANGEMENTS=${ARRANGEMENTS:-data/arrangements/pro/20m.jsonl}
SEED=20231128
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
if ! python3 -c "import sgfmill" 2>/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
mo() { python3 -m moveorder.cli "$@"; }
exec > >(tee -a "$OUT/log.txt") 2>&1
date -u
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.is_available() and torch.cuda.get_device_name(0))"
nproc

common=(--pool "$POOL" --blocks "$BLOCKS" --filters "$FILTERS" --batch-size "$BATCH" --lr "$LR" --warmup-steps 300
        --lr-schedule cosine --precision auto --no-value-head --no-symmetries --heldout-fraction 0.05
        --seed "$SEED" --device "$DEVICE" --quiet)
t0=$(date +%s)
mo train-policy "${common[@]}" --out-dir /tmp/cal --steps 120 --checkpoint-every 1000 || exit 1
rate=$(python3 -c "import json; print(json.load(open('/tmp/cal/metrics.json'))['steps_per_second'])")
steps=$(python3 -c "print(int($rate * $TRAIN_SECONDS) // 100 * 100)")
echo "calibration: $rate steps/s at batch $BATCH ($(( $(date +%s) - t0 )) s with loading); main run: $steps steps"
cp /tmp/cal/metrics.json "$OUT/calibration.json"

t1=$(date +%s)
timeout $(( TRAIN_SECONDS * 5 / 4 + 30 )) \
    python3 -m moveorder.cli train-policy "${common[@]}" --out-dir /tmp/net --steps "$steps" --checkpoint-every 500
echo "training: exit $?, $(( $(date +%s) - t1 )) s"
if [ -f /tmp/net/metrics.json ]; then
    cp /tmp/net/model.pt /tmp/net/policy.txt.gz /tmp/net/metrics.json "$OUT/"
    python3 -c "import json; m=json.load(open('/tmp/net/metrics.json')); print({k: m[k] for k in ('top1_accuracy','mean_log_likelihood','positions','steps','steps_per_second','seconds','data_share')})"
else  # killed: keep the last checkpoint's weights
    python3 -c "import torch; s=torch.load('/tmp/net/checkpoint.pt', weights_only=False); torch.save({'model': s['model'], 'step': s['step']}, '$OUT/partial.pt'); print('partial at step', s['step'])"
    exit 1
fi

# Pro20 with the new network: 8 shards side by side (the beam's bookkeeping is on the CPU), each
# stopped after INFER_SECONDS; infer-set writes each result as it is made, so what finished returns.
t2=$(date +%s)
mkdir -p /tmp/inf
split -n l/8 -d "$ARRANGEMENTS" /tmp/inf/part
pids=()
for f in /tmp/inf/part0?; do
    OMP_NUM_THREADS=1 timeout "$INFER_SECONDS" python3 -m moveorder.cli infer-set --arrangements "$f" \
        --out "$f.out.jsonl" --table "$f.csv" --network /tmp/net/model.pt --device "$DEVICE" --method beam \
        --beam-width 512 --beam-future 1.0 --seed "$SEED" --quiet > "$f.log" 2>&1 &
    pids+=($!)
done
wait "${pids[@]}"  # not a bare wait: that would wait for the log's tee too
echo "inference: $(( $(date +%s) - t2 )) s for $(cat /tmp/inf/part0?.out.jsonl 2>/dev/null | wc -l) of $(wc -l < "$ARRANGEMENTS") arrangements"
cat /tmp/inf/part0?.out.jsonl > "$OUT/pro20.jsonl" 2>/dev/null
awk 'FNR > 1 || NR == 1' /tmp/inf/part0?.csv > "$OUT/pro20.csv" 2>/dev/null  # the shards' tables, one header
tail -n 3 /tmp/inf/part00.log
date -u
