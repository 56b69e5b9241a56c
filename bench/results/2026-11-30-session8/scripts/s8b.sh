#!/bin/bash
# s8b.sh FILTER TAG: build, the kernel cases on the GPU, then one bench of FILTER.
filter=$1; tag=$2
mkdir -p $OUT/t
bash build/gpu-scripts/build.sh > $OUT/t/build.txt 2>&1 || { cat $OUT/t/build.txt; exit 1; }
py=$(scripts/find-torch-python)
timeout 150 $py tests/unit/engine/propose/knowledge/kernels/cpu_emulation/run_replacements.py build/gpu-scripts/kernel_cases.json /tmp/kc --device cuda > $OUT/t/kernel-cases-gpu.txt 2>&1; echo "rc=$?" >> $OUT/t/kernel-cases-gpu.txt
BENCH_TIMEOUT=${BT:-330} bash build/gpu-scripts/bench.sh $tag 0 "$filter" > /dev/null 2>&1
(cd build/results && find . -name run.jsonl -delete; find . -name best.py -delete; tar czf $OUT/results-$tag.tgz $tag)
tail -2 build/results/$tag/console.log
grep -c "^ok" $OUT/t/kernel-cases-gpu.txt; grep -E "^FAIL|tensor_core|rc=" $OUT/t/kernel-cases-gpu.txt | head -20
