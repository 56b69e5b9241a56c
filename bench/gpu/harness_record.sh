#!/bin/bash
# harness_record.sh OUT LABEL=RUNNER_DIR...: the evaluation harness's figures for each hiera_runner
# package directory given (this checkout's engine/worker/python, an older commit's exported beside it),
# side by side in one run on one GPU, the runners taking turns:
#   - `hiera bench bench/gpu/kernelbench_level2 --baseline eager,compile --budget 6 --llm none`, with
#     fresh torch.compile and Triton caches: the problem's wall time and its phases (OUT/LABEL/level2/,
#     with the run's optimize report);
#   - bench/gpu/harness_bench.py --cases $HARNESS_CASES (default level2,delivery): OUT/LABEL/harness.json.
# The binary is $HIERA (default build/gpu/bin/hiera, from bench/gpu/build_release.sh); the C++ side is the
# same for every runner. Record only what bench/results/README.md lists.
set -u
[ $# -ge 2 ] || { sed -n '2,10p' "$0"; exit 2; }
out=$1; shift
root=$(cd "$(dirname "$0")/../.." && pwd)
hiera=${HIERA:-$root/build/gpu/bin/hiera}
python=$("$root/scripts/find-torch-python") || { echo "no python3 with torch" >&2; exit 1; }
mkdir -p "$out"; out=$(cd "$out" && pwd)
cd "$root" || exit 1
fresh_caches() {
  export TORCHINDUCTOR_CACHE_DIR=$(mktemp -d /tmp/inductor.XXXX) TRITON_CACHE_DIR=$(mktemp -d /tmp/triton.XXXX)
}
rc=0
for step in level2 harness; do
  for pair in "$@"; do
    label=${pair%%=*}; runner=$(cd "${pair#*=}" && pwd)
    mkdir -p "$out/$label"
    fresh_caches
    if [ $step = level2 ]; then
      runs=$(mktemp -d /tmp/runs.XXXX)
      start=$(date +%s%N)
      HIERA_PYTHONPATH=$runner "$hiera" bench bench/gpu/kernelbench_level2 --baseline eager,compile --budget 6 \
        --llm none --out "$out/$label/level2" --runs-dir "$runs" --quiet > "$out/$label/level2.log" 2>&1 || rc=1
      echo "command wall $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$out/$label/level2.log"
      find "$runs" -name report.md -exec cp {} "$out/$label/level2/optimize-report.md" \;
    else
      "$python" bench/gpu/harness_bench.py --runner "$runner" --cases "${HARNESS_CASES:-level2,delivery}" \
        --label "$label" --out "$out/$label/harness.json" > "$out/$label/harness.log" 2>&1 || rc=1
    fi
    echo "$step $label: $(tail -1 "$out/$label/$step.log")"
  done
done
exit $rc
