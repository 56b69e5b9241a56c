#!/bin/bash
# s7.sh BUILD(0|1) A_FILTER B_FILTER TAG: optional build, the Python runner tests on the GPU (with a build),
# then two benches side by side (GPU 0 and 1); results tarred into $OUT.
build=$1; fa=$2; fb=$3; tag=$4
mkdir -p $OUT/t
if [ "$build" = 1 ]; then
  bash build/gpu-scripts/build.sh || exit 1
  nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/t/gpu.txt
  (CUDA_VISIBLE_DEVICES=1 timeout 150 tests/unit/engine/worker/python/run_tests.sh > $OUT/t/python-tests-gpu.txt 2>&1; echo "rc=$?" >> $OUT/t/python-tests-gpu.txt) &
  ptests=$!
fi
BENCH_TIMEOUT=${BT:-400} bash build/gpu-scripts/bench.sh ${tag}a 0 "$fa" > /dev/null 2>&1 &
a=$!
[ -n "$ptests" ] && wait $ptests
BENCH_TIMEOUT=${BT:-400} bash build/gpu-scripts/bench.sh ${tag}b 1 "$fb" > /dev/null 2>&1 &
wait $a; wait
(cd build/results && find . -name run.jsonl -delete; find . -name best.py -delete; tar czf $OUT/results-$tag.tgz ${tag}a ${tag}b)
tail -3 build/results/${tag}a/console.log build/results/${tag}b/console.log
tail -5 $OUT/t/python-tests-gpu.txt 2>/dev/null
