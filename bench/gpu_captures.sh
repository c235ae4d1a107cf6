#!/usr/bin/env bash
# Issues 25 and 24 on a lent GPU, the third lease, in one call; every stage is cut by its own timeout,
# so what finished comes back (under $OUT: log.txt and results.tgz).
#
#   A. config/captures.yaml's inference on the GPU: the 100 Pro and 100 KGS arrangements with captures
#      at 40, 60, 80 and 100 moves, the rule's own flags (`snakemake -n -p --configfile
#      config/captures.yaml`: ranked beam W 32, beam_future 1, patience 2, the shipped `tygem`, seed
#      20231128), split into shards of SHARD arrangements, PROCS processes side by side (longest first);
#      then KataGo's scoring of every set and length on the GPU (b6c96, 2 visits, the rule's flags but the
#      OpenCL tuning: KataGo's own, made once by `katago tuner` before the scoring).
#   B. the same arrangements at LENGTHS_B (100) moves with the shipped 6 x 128 (`tygem-6x128`), same
#      search: does a stronger network find more sequences with captures?
#   T. beside them: the shipped `tygem-6x128` trained TRAIN_STEPS (20000) more steps of 1,024 on the
#      packed Tygem pool (its own recipe, a warm restart), then held-out top-1 on the pro and kgs
#      held-out games on the GPU (`moveorder cross-level --device cuda`, with the shipped 4 x 32 `tygem`
#      as a check against its CPU figures).
#
# Run from the repository root on the device machine, with BUNDLE (gpu4/, ignored by git) made here:
#   {ids,offsets,points,captured,winner}.npy.xz   gpu/tygem.npz's arrays, xz'd (the npz is too big to
#                                                 carry with the rest: 46 MB, 34 MB so)
#   katago.xz libzip.so.4 libOpenCL.so.1          tools/katago's binary, stripped and xz'd, its libzip,
#                                                 and this machine's OpenCL ICD loader
#   g170-b6c96-s175395328-d26788732.bin.gz        KataGo's model (katago_install)
#   arr/{pro,kgs}/{40,60,80,100}m.jsonl           config/captures.yaml's arrangements (select_games)
#   {pro,kgs}-heldout.jsonl                       the held-out games of data/pool/SET.jsonl (and one more,
#                                                 so that the split holds out exactly these)
# and .whl/sgfmill-*.whl (the one dependency the device image lacks).
# The lease it was written for (H200, docs/benchmarks.md "A third GPU lease"): `PROCS=14 bash
# bench/gpu_captures.sh` (425 s), then on the warm machine `PROCS=14 LENGTHS_B= TRAIN_SECONDS=230
# INFER_SECONDS=40 SCORE_SECONDS=230 KATAGO_TUNING=cpu-tune.txt bash bench/gpu_captures.sh` (273 s:
# the training resumed from its checkpoint, A's inference resumed as done, scoring with the CPU's
# tuning). Learned there: 14 CPU-bound inference processes starve the training loop (12 steps a
# second against 62 beside nothing), and KataGo's own OpenCL tuning did not finish in 200 s on the
# loaded machine: next time tune first, alone, and train alone.
# To check the script on a CPU (no GPU figures then): DEVICE=cpu PROCS=2 SHARD=1 GAMES=2 LENGTHS_A=40
# LENGTHS_B=40 NET_B=tygem INIT= BLOCKS=1 FILTERS=8 BATCH=32 TRAIN_STEPS=3 POSITIONS=200
# KATAGO_TUNING=tools/katago/opencl-tune.txt (KataGo on pocl, with the CPU's tuning instead of its tuner).
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
DEVICE=${DEVICE:-cuda}
BUNDLE=${BUNDLE:-gpu4}
WORK=${WORK:-/tmp/cap}
PROCS=${PROCS:-14}
SHARD=${SHARD:-10}
GAMES=${GAMES:-100}
LENGTHS_A=${LENGTHS_A-100 80 60 40}  # empty: none
LENGTHS_B=${LENGTHS_B-100}  # empty: none
TRAIN_STEPS=${TRAIN_STEPS:-20000}
INIT=${INIT-tygem-6x128}
BLOCKS=${BLOCKS:-6}
FILTERS=${FILTERS:-128}
BATCH=${BATCH:-1024}
POSITIONS=${POSITIONS:-20000}
NET_B=${NET_B:-tygem-6x128}
KATAGO_TUNING=${KATAGO_TUNING:-}
TRAIN_SECONDS=${TRAIN_SECONDS:-400}
INFER_SECONDS=${INFER_SECONDS:-420}
SCORE_SECONDS=${SCORE_SECONDS:-150}
SCORE_PROCS=${SCORE_PROCS:-2}
KATAGO_SKIP=${KATAGO_SKIP:-}
SEED=20231128
. bench/gpu_lib.sh
device_start
mkdir -p "$WORK"/kg "$WORK"/inf "$WORK"/res

# --- T: training, in the background ----------------------------------------------------------------
if [ "$TRAIN_STEPS" != 0 ]; then
    (
        for a in ids offsets points captured winner; do xz -dc "$BUNDLE/$a.npy.xz" > "$WORK/$a.npy"; done
        python3 -c "
import numpy as np, sys
w = sys.argv[1]
np.savez(w + '/tygem.npz', **{a: np.load(f'{w}/{a}.npy') for a in ('ids', 'offsets', 'points', 'captured', 'winner')})
" "$WORK"
        rm -f "$WORK"/*.npy
        stamp "T: pool unpacked"
        init=()
        [ -n "$INIT" ] && init=(--init "$INIT")
        timeout "$TRAIN_SECONDS" python3 -m moveorder.cli train-policy --pool "$WORK/tygem.npz" \
            --out-dir "$WORK/tygem" "${init[@]}" --blocks "$BLOCKS" --filters "$FILTERS" --steps "$TRAIN_STEPS" \
            --batch-size "$BATCH" --lr 0.002 --warmup-steps 300 --lr-schedule cosine --precision auto \
            --no-value-head --no-symmetries --heldout-fraction 0.05 --seed "$SEED" --device "$DEVICE" \
            --checkpoint-every 1000 --quiet > "$WORK/train.log" 2>&1
        stamp "T: train-policy exit $?"
        nets=(--network tygem tygem)
        if [ -f "$WORK/tygem/metrics.json" ]; then
            cp "$WORK/tygem/model.pt" "$WORK/res/tygem-6x128-more.pt"
        elif [ -f "$WORK/tygem/checkpoint.pt" ]; then  # cut: the last checkpoint's weights, as a model.pt
            python3 bench/cut_checkpoint.py "$WORK/tygem/checkpoint.pt" "$WORK/res/tygem-6x128-more.pt"
        fi
        [ -f "$WORK/res/tygem-6x128-more.pt" ] && nets+=(--network tygem-6x128-more "$WORK/res/tygem-6x128-more.pt")
        [ "$BLOCKS" = 6 ] && nets+=(--network tygem-6x128 tygem-6x128)
        python3 -m moveorder.cli cross-level "${nets[@]}" --positions "$POSITIONS" \
            --heldout pro "$BUNDLE/pro-heldout.jsonl" --heldout kgs "$BUNDLE/kgs-heldout.jsonl" --device "$DEVICE" --seed "$SEED" \
            --table "$WORK/res/heldout.csv" --inference-table "$WORK/res/heldout-inf.csv" \
            --markdown "$WORK/res/heldout.md" > "$WORK/cross.log" 2>&1
        stamp "T: cross-level exit $?"
        cat "$WORK/res/heldout.csv"
    ) &
    train_pid=$!
fi

# --- KataGo: unpack, see the GPU through OpenCL, tune once ------------------------------------------
if [ -z "$KATAGO_SKIP" ]; then
    (
        K=$WORK/kg
        katago_unpack "$K" "$BUNDLE"
        t=$(date +%s)
        if [ -n "$KATAGO_TUNING" ]; then cp "$KATAGO_TUNING" "$K/tune.txt"; exit 0; fi
        timeout 200 "$K/katago" tuner -config "$K/empty.cfg" -model "$BUNDLE/g170-b6c96-s175395328-d26788732.bin.gz" \
            -output "$K/tune.txt" > "$K/tuner.log" 2>&1
        stamp "KataGo tuner: exit $?, $(($(date +%s) - t)) s"
        tail -n 5 "$K/tuner.log"
    ) &
    katago_pid=$!
fi

# --- A and B: inference, shards longest first ----------------------------------------------------------
jobs=$WORK/jobs.txt
: > "$jobs"
for n in $LENGTHS_B; do for s in pro kgs; do echo "B $NET_B $s $n" >> "$jobs"; done; done
for n in $LENGTHS_A; do for s in pro kgs; do echo "A tygem $s $n" >> "$jobs"; done; done
shards=$WORK/shards.txt
: > "$shards"
while read -r run net s n; do
    d=$WORK/inf/$run-$s-$n
    mkdir -p "$d"
    head -n "$GAMES" "$BUNDLE/arr/$s/${n}m.jsonl" | split -l "$SHARD" -d -a 3 - "$d/part"
    for f in "$d"/part???; do echo "$run $net $f" >> "$shards"; done
done < "$jobs"
# A's shards first (its wall time is the configuration's), 100 moves first; then B's.
{ grep '^A ' "$shards"; grep '^B ' "$shards"; } > "$shards.sorted"
stamp "inference: $(wc -l < "$shards.sorted") shards, $PROCS processes"
DEADLINE=$((T0 + INFER_SECONDS))
export DEVICE SEED DEADLINE PYTHONPATH
xargs -P "$PROCS" -L 1 bash -c '
    [ "$(date +%s)" -ge "$DEADLINE" ] && exit 0
    t=$(date +%s)
    OMP_NUM_THREADS=1 timeout $((DEADLINE - t)) python3 -m moveorder.cli infer-set --arrangements "$2" \
        --network "$1" --out "$2.jsonl" --table "$2.csv" --stats "$2-stats.json" --iterations 20000 \
        --trials 5 --init greedy --neighbour mix --t-start 1.0 --t-end 0.1 --schedule geometric \
        --seed "$SEED" --chunk 20 --precision float32 --method beam --beam-width 32 --beam-future 1 \
        --patience 2 --device "$DEVICE" --quiet > "$2.log" 2>&1
    rc=$?
    echo "$0 $(basename "$(dirname "$2")")/$(basename "$2"): exit $rc, $(($(date +%s) - t)) s, done at $(($(date +%s) - '"$T0"')) s"
' < "$shards.sorted" > "$WORK/shards.log" 2>&1 &
infer_pid=$!

merge() {  # merge RUN: one JSONL and one CSV a set and length, from the shards in order
    local run=$1 d
    for d in "$WORK"/inf/"$run"-*; do
        local key
        key=$(basename "$d")
        cat "$d"/part???.jsonl > "$WORK/res/$key.jsonl" 2>/dev/null
        awk 'FNR > 1 || NR == 1' "$d"/part???.csv > "$WORK/res/$key.csv" 2>/dev/null
        python3 -c "
import json, sys, glob
s = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + '/part???-stats.json'))]
print(sys.argv[2], len(open(sys.argv[3]).read().splitlines()), 'arrangements;',
      'shard seconds summed', round(sum(x.get('seconds', 0) for x in s), 1))
" "$d" "$key" "$WORK/res/$key.jsonl"
    done
}

# A done: when no A shard is left running or queued (the log has every A shard's line)
n_a=$(grep -c '^A ' "$shards.sorted")
while kill -0 "$infer_pid" 2>/dev/null && [ "$(grep -c '^A ' "$WORK/shards.log" 2>/dev/null)" -lt "$n_a" ]; do sleep 2; done
stamp "A: inference finished ($(grep -c '^A ' "$WORK/shards.log") of $n_a shards)"
merge A

# --- A's scoring on the GPU -----------------------------------------------------------------------------
if [ -z "$KATAGO_SKIP" ]; then
    wait "$katago_pid"
    K=$WORK/kg
    [ -f "$K/env" ] && . "$K/env"
    if [ -s "$K/tune.txt" ]; then
        t=$(date +%s)
        pids=()
        last=
        for n in $LENGTHS_A; do for s in pro kgs; do
            key=A-$s-$n
            last=$key
            mkdir -p "$WORK/sc/$key"
            timeout "$SCORE_SECONDS" python3 -m moveorder.cli score --results "$WORK/res/$key.jsonl" \
                --katago "$K/katago" --model "$BUNDLE/g170-b6c96-s175395328-d26788732.bin.gz" \
                --tuning "$K/tune.txt" --visits 2 --rules chinese --komi 7.5 --delta-max best_move \
                --threads "$SCORE_PROCS" --max-batch 1 --cache "$WORK/sc/$key/analyses.jsonl" \
                --work-dir "$WORK/sc/$key" --table "$WORK/res/$key-scored.csv" \
                --moves-table "$WORK/res/$key-moves.csv" --stats "$WORK/res/$key-score-stats.json" \
                --quiet > "$WORK/sc/$key.log" 2>&1 &
            pids+=($!)
        done; done
        for p in "${pids[@]}"; do wait "$p"; done
        stamp "A: scoring, ${#pids[@]} tables side by side, $SCORE_PROCS KataGo processes each: $(($(date +%s) - t)) s"
        echo "scored tables: $(ls "$WORK"/res/*-scored.csv 2>/dev/null | wc -l)"
        tail -n 3 "$WORK/sc/$last.log"
    else
        echo "KataGo: no tuning, no scoring"
    fi
fi

wait "$infer_pid"
stamp "B: inference finished"
merge B
[ -n "${train_pid:-}" ] && wait "$train_pid"
cp "$WORK"/*.log "$WORK/shards.log" "$WORK/res/" 2>/dev/null
cp "$WORK/tygem/metrics.json" "$WORK/res/train-metrics.json" 2>/dev/null
cp "$WORK/kg/tuner.log" "$WORK/kg/tune.txt" "$WORK/res/" 2>/dev/null
for d in "$WORK"/inf/*; do cat "$d"/part???-stats.json > "$WORK/res/$(basename "$d")-shard-stats.jsonl" 2>/dev/null; done
(cd "$WORK/res" && tar czf "$OUT/results.tgz" --exclude='*.pt' .)
[ -f "$WORK/res/tygem-6x128-more.pt" ] && cp "$WORK/res/tygem-6x128-more.pt" "$OUT/"
stamp "done"
