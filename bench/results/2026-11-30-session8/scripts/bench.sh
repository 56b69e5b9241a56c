#!/bin/bash
# bench.sh NAME GPU FILTER: runs `hiera bench samples --filter FILTER` on GPU index GPU into build/results/NAME
# (fresh compile caches), after build.sh. Output copied to $OUT/NAME (minus bulky files).
name=$1; gpu=$2; filter=$3
root=$(pwd)
res=$root/build/results/$name
mkdir -p $res
export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-$name TRITON_CACHE_DIR=/tmp/triton-$name
export HIERA_COMMIT=$(cat build/gpu-scripts/COMMIT)
CUDA_VISIBLE_DEVICES=$gpu timeout ${BENCH_TIMEOUT:-500} build/gpu/bin/hiera bench samples --filter "$filter" --baseline eager,compile \
  --budget 6 --candidates-per-round 2 --out $res > $res/console.log 2>&1
echo "bench $name rc=$?" >> $res/console.log
exit 0
(cd $res && find . -name run.jsonl -delete; find . -name best.py -delete; cp -r . $OUT/$name/)
