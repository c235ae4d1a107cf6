#!/usr/bin/env bash
# Issues 24 and 25 on a lent GPU, the fourth lease, in one call; every stage is cut by its own deadline,
# so what finished comes back (under $OUT: log.txt, results.tgz, the fine-tuned networks).
#
#   F. the shipped 6 x 128 (`tygem-6x128`, Tygem only) fine-tuned on each level's WHOLE pool, handicap
#      games included (the JSONL pool: the packed one refuses setup stones, and the second lease's
#      even-games fine-tuning lost 0.5 points on pro, whose held-out positions are 60% handicap games):
#      STEPS steps of 1,024, lr 0.001, cosine, then held-out top-1 of both networks and of the shipped
#      one on the GPU (`moveorder cross-level --device cuda`; the shipped one's figures are known from
#      this CPU: pro 48.8%, kgs 52.0%).
#   S. KataGo tuned alone first (the third lease's tuner was starved by 14 CPU-bound processes), then
#      the scoring of config/captures.yaml's full-size inference (the third lease's 8 tables, 800
#      arrangements) with one KataGo process whose SCORE_THREADS analysis threads share its network
#      cache and batches (`moveorder score --shared-cache`; the third lease's 16 one-position processes
#      analysed 66 positions a second, on the CPU as it turned out).  All 8 tables are sent as one file so that KataGo sees one
#      queue; the cache (one line an analysed position) is what comes back, and each table is then
#      scored from it on the CPU.  The cache starts from CACHE (default: the bundle's, the third
#      lease's 15,193 analyses; empty: none).
#
# Run from the repository root on the device machine, with BUNDLE (ignored by git) made here:
#   katago.xz libzip.so.4 libOpenCL.so.1 g170-b6c96-s175395328-d26788732.bin.gz   as in gpu_captures.sh
#   {pro,kgs}.jsonl.xz            data/pool/SET.jsonl of config/cpu.yaml (train-policy holds out its games)
#   {pro,kgs}-heldout.jsonl       the held-out games of those pools (and one more: the split holds out these)
#   A-{pro,kgs}-{40,60,80,100}.jsonl   the third lease's captures inference tables
#   cache.jsonl.xz                the third lease's KataGo cache of those tables (2 visits, b6c96)
# and .whl/sgfmill-*.whl.
# The lease it was written for (H200, docs/benchmarks.md "A fourth GPU lease" and "The full size scored"):
# `STEPS=2000 TRAIN_SECONDS=400 TUNE_SECONDS=150 SCORE_UNTIL=480 bash bench/gpu_levels_score.sh` (245 s:
# F finished; S's KataGo ran on pocl, the image listing no NVIDIA ICD, and the one-file scoring hit an id
# that two lengths share), then `STEPS=0 TUNE_SECONDS=100 SCORE_UNTIL=270` (both mended: S on the GPU,
# KataGo's tuner cut at 100 s), then `STEPS=0 CACHE= KATAGO_TUNING=gpu/lease4/cpu-tune.txt
# SCORE_UNTIL=90` (all 43,642 positions from an empty cache on the GPU, 17 s).
# To check the script on a CPU (no GPU figures then): DEVICE=cpu STEPS=3 BATCH=16 POSITIONS=200 INIT=
# BLOCKS=1 FILTERS=8 KATAGO_TUNING=tools/katago/opencl-tune.txt SCORE_THREADS=2 SCORE_BATCH=2.
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
DEVICE=${DEVICE:-cuda}
BUNDLE=${BUNDLE:-gpu/lease4}
WORK=${WORK:-/tmp/lev}
STEPS=${STEPS:-2000}
BATCH=${BATCH:-1024}
INIT=${INIT-tygem-6x128}
BLOCKS=${BLOCKS:-6}
FILTERS=${FILTERS:-128}
POSITIONS=${POSITIONS:-20000}
TRAIN_SECONDS=${TRAIN_SECONDS:-400}
TUNE_SECONDS=${TUNE_SECONDS:-180}
SCORE_UNTIL=${SCORE_UNTIL:-500}
SCORE_THREADS=${SCORE_THREADS:-64}
SCORE_BATCH=${SCORE_BATCH:-64}
KATAGO_TUNING=${KATAGO_TUNING:-}
CACHE=${CACHE-$BUNDLE/cache.jsonl.xz}  # the KataGo cache to start from; empty: none
SEED=20231128
MODEL=g170-b6c96-s175395328-d26788732.bin.gz
. bench/gpu_lib.sh
device_start
rm -rf "$WORK"
mkdir -p "$WORK"/kg "$WORK"/res

# --- F: fine-tuning on each level's whole pool, side by side, then held-out top-1 -------------------------
finetune() {  # finetune SET
    local s=$1
    xz -dc "$BUNDLE/$s.jsonl.xz" > "$WORK/$s.jsonl"
    local init=()
    [ -n "$INIT" ] && init=(--init "$INIT")
    local t
    t=$(date +%s)
    timeout $((T0 + TRAIN_SECONDS - t)) python3 -m moveorder.cli train-policy --pool "$WORK/$s.jsonl" \
        --out-dir "$WORK/$s-ft" "${init[@]}" --blocks "$BLOCKS" --filters "$FILTERS" --steps "$STEPS" \
        --batch-size "$BATCH" --lr 0.001 --warmup-steps 100 --lr-schedule cosine --precision auto \
        --no-value-head --no-symmetries --heldout-fraction 0.05 --seed "$SEED" --device "$DEVICE" \
        --checkpoint-every 250 --quiet > "$WORK/$s-ft.log" 2>&1
    stamp "F: $s: train-policy exit $?, $(($(date +%s) - t)) s"
    if [ -f "$WORK/$s-ft/metrics.json" ]; then
        cp "$WORK/$s-ft/model.pt" "$WORK/res/$s-ft.pt"
        cp "$WORK/$s-ft/metrics.json" "$WORK/res/$s-ft-metrics.json"
    elif [ -f "$WORK/$s-ft/checkpoint.pt" ]; then  # cut: the last checkpoint's weights, as a model.pt
        python3 bench/cut_checkpoint.py "$WORK/$s-ft/checkpoint.pt" "$WORK/res/$s-ft.pt"
    fi
}
f_pid=
if [ "$STEPS" != 0 ]; then
    (
        finetune pro &
        finetune kgs &
        wait
        nets=()
        for s in pro kgs; do [ -f "$WORK/res/$s-ft.pt" ] && nets+=(--network "$s-ft" "$WORK/res/$s-ft.pt"); done
        [ "$BLOCKS" = 6 ] && nets+=(--network tygem-6x128 tygem-6x128)
        t=$(date +%s)
        python3 -m moveorder.cli cross-level "${nets[@]}" --positions "$POSITIONS" \
            --heldout pro "$BUNDLE/pro-heldout.jsonl" --heldout kgs "$BUNDLE/kgs-heldout.jsonl" --device "$DEVICE" \
            --seed "$SEED" --table "$WORK/res/heldout.csv" --inference-table "$WORK/res/heldout-inf.csv" --markdown "$WORK/res/heldout.md" > "$WORK/res/cross.log" 2>&1
        stamp "F: cross-level exit $?, $(($(date +%s) - t)) s"
        cat "$WORK/res/heldout.csv"
    ) &
    f_pid=$!
fi

# --- S: KataGo, tuned alone, then the captures tables' scoring ------------------------------------------
K=$WORK/kg
katago_unpack "$K" "$BUNDLE"
if [ -n "$KATAGO_TUNING" ]; then
    cp "$KATAGO_TUNING" "$K/tune.txt"
else
    t=$(date +%s)
    timeout "$TUNE_SECONDS" "$K/katago" tuner -config "$K/empty.cfg" -model "$BUNDLE/$MODEL" \
        -output "$K/tune.txt" > "$K/tuner.log" 2>&1
    stamp "S: KataGo tuner exit $?, $(($(date +%s) - t)) s"
    tail -n 4 "$K/tuner.log"
    cp "$K/tuner.log" "$WORK/res/" 2>/dev/null
    if [ ! -s "$K/tune.txt" ]; then
        echo "S: no tuning of its own: the CPU's (tools/katago/opencl-tune.txt)"
        cp tools/katago/opencl-tune.txt "$K/tune.txt" 2>/dev/null || cp "$BUNDLE/cpu-tune.txt" "$K/tune.txt"
    fi
fi
cp "$K/tune.txt" "$WORK/res/tune.txt"
# one file, ids made unique (a game is in each length's table under its own id; the cache is by position)
for f in "$BUNDLE"/A-*.jsonl; do
    python3 -c "
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    r['id'] = f\"{r['id']}-{r['set']}-{r['n']}\"
    print(json.dumps(r))
" "$f"
done > "$WORK/all.jsonl"
if [ -n "$CACHE" ]; then xz -dc "$CACHE" > "$WORK/res/cache.jsonl"; else : > "$WORK/res/cache.jsonl"; fi
before=$(wc -l < "$WORK/res/cache.jsonl")
t=$(date +%s)
mkdir -p "$WORK/sc"
timeout $((T0 + SCORE_UNTIL - t)) python3 -m moveorder.cli score --results "$WORK/all.jsonl" \
    --katago "$K/katago" --model "$BUNDLE/$MODEL" --tuning "$K/tune.txt" --visits 2 --rules chinese \
    --komi 7.5 --delta-max best_move --threads "$SCORE_THREADS" --shared-cache --max-batch "$SCORE_BATCH" \
    --cache "$WORK/res/cache.jsonl" --work-dir "$WORK/sc" --table "$WORK/res/all-scored.csv" \
    --moves-table "$WORK/res/all-moves.csv" --stats "$WORK/res/all-score-stats.json" --quiet > "$WORK/res/score.log" 2>&1
rc=$?
after=$(wc -l < "$WORK/res/cache.jsonl")
s=$(($(date +%s) - t))
stamp "S: score exit $rc, $s s, $((after - before)) positions analysed ($(( (after - before) / (s > 0 ? s : 1) )) a second), cache $after"
tail -n 3 "$WORK/res/score.log"
tail -n 5 "$WORK"/sc/stderr-0.log 2>/dev/null

[ -n "$f_pid" ] && wait "$f_pid"
cp "$WORK"/*.log "$WORK/res/" 2>/dev/null
xz -T0 -9 "$WORK/res/cache.jsonl"
(cd "$WORK/res" && tar czf "$OUT/results.tgz" --exclude='*.pt' .)
cp "$WORK"/res/*.pt "$OUT/" 2>/dev/null
stamp "done"
