#!/bin/bash
# bench_suite.sh OUT_DIR GPU FILTER: `hiera bench $SUITE --filter FILTER --baseline eager,compile
# --budget 6 --candidates-per-round 2` (SUITE: default samples; tests/generalisation for the suite the
# optimizer was never tuned on) on the GPU of index GPU, into OUT_DIR, with fresh torch.compile
# and Triton caches, the console output in OUT_DIR/console.log. The binary is $HIERA (default
# build/gpu/bin/hiera, from bench/gpu/build_release.sh); the records name $HIERA_COMMIT when set (a copy
# of the tree whose .git is stale), else the checkout's HEAD, "+modified" where tracked files differ
# from it. BENCH_TIMEOUT (seconds, default 500) stops the bench with SIGINT, which cancels the
# problems still running and keeps the finished ones. KEEP_BULK=1 keeps run.jsonl and best.py files.
#
# The records of 2026-11-30 were made with this script (then scripts/bench.sh beside the records).
# Record only summary.json, report.md, the plots and problems/ under bench/results (bench/results/README.md).
set -u
[ $# -eq 3 ] || { sed -n '2,10p' "$0"; exit 2; }
out=$1; gpu=$2; filter=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
hiera=${HIERA:-$root/build/gpu/bin/hiera}
mkdir -p "$out"
out=$(cd "$out" && pwd)
name=$(basename "$out")
export TORCHINDUCTOR_CACHE_DIR=$(mktemp -d /tmp/inductor-$name.XXXX) TRITON_CACHE_DIR=$(mktemp -d /tmp/triton-$name.XXXX)
cd "$root" || exit 1
CUDA_VISIBLE_DEVICES=$gpu timeout -s INT "${BENCH_TIMEOUT:-500}" "$hiera" bench "${SUITE:-samples}" --filter "$filter" \
  --baseline eager,compile --budget 6 --candidates-per-round 2 --out "$out" > "$out/console.log" 2>&1
rc=$?
echo "bench $name rc=$rc" >> "$out/console.log"
if [ "${KEEP_BULK:-0}" != 1 ]; then
  find "$out" \( -name run.jsonl -o -name best.py \) -delete
fi
tail -1 "$out/console.log"
exit $rc
