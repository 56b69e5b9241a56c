#!/bin/bash
# s8.sh FILTER TAG: build, then (in parallel) the Python runner tests and the kernel cases on the GPU,
# then one bench of FILTER; everything small into $OUT.
filter=$1; tag=$2
mkdir -p $OUT/t
bash build/gpu-scripts/build.sh > $OUT/t/build.txt 2>&1 || { cat $OUT/t/build.txt; exit 1; }
py=$(scripts/find-torch-python)
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/t/gpu.txt
(timeout 200 tests/unit/engine/worker/python/run_tests.sh > $OUT/t/python-tests-gpu.txt 2>&1; echo "rc=$?" >> $OUT/t/python-tests-gpu.txt) &
(timeout 240 $py tests/unit/engine/propose/knowledge/kernels/cpu_emulation/run_replacements.py build/gpu-scripts/kernel_cases.json /tmp/kc --device cuda > $OUT/t/kernel-cases-gpu.txt 2>&1; echo "rc=$?" >> $OUT/t/kernel-cases-gpu.txt) &
wait
BENCH_TIMEOUT=${BT:-330} bash build/gpu-scripts/bench.sh $tag 0 "$filter" > /dev/null 2>&1
(cd build/results && find . -name run.jsonl -delete; find . -name best.py -delete; tar czf $OUT/results-$tag.tgz $tag)
tail -3 build/results/$tag/console.log
tail -3 $OUT/t/python-tests-gpu.txt; grep -c "^ok" $OUT/t/kernel-cases-gpu.txt; grep -v "^ok" $OUT/t/kernel-cases-gpu.txt | head -20
