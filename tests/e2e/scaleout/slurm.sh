#!/bin/sh
# Starts a throwaway one-node Slurm on loopback (munged, slurmctld and slurmd
# with their own key, sockets, ports, state and logs in a temporary directory;
# SLURM_CONF points the client commands at it; the system's Slurm and munge
# setups are neither read nor changed), then runs the Slurm part of the
# scale-out tests in it: workers as job steps, a step cancelled mid-job.
# Then `hiera optimize --worker slurm,workers=2` on a CPU sample, and `hiera
# bench --worker slurm,workers=1` on a one-problem suite, each while another
# job holds the node: the CLI's path from spec to allocation (pending, shown
# in its progress line, not as a stray line) to a finished run, and the job
# cancelled after.
# Needs root (slurmd runs job steps as their users) and Debian's slurm-wlm
# and munge. Usage: slurm.sh path/to/hiera_scaleout_e2e_tests path/to/hiera.
# Exit 77: skipped.
set -u
tests=$1
hiera=$2
skip() { echo "SKIPPED: $*" >&2; exit 77; }

for tool in munged slurmctld slurmd sbatch srun squeue scancel scontrol; do
  command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] ||
    skip "no $tool (Debian: slurm-wlm and munge; scripts/setup installs them)"
done
PATH=$PATH:/usr/sbin
[ "$(id -u)" -eq 0 ] || skip "a one-node Slurm needs root to start slurmd"
[ -r /etc/munge/munge.key ] || command -v mungekey >/dev/null 2>&1 || skip "no munge key and no mungekey to make one"

dir=$(mktemp -d "${TMPDIR:-/tmp}/hiera-slurm-XXXXXX")
chmod 700 "$dir"
cleanup() {
  [ -n "${SLURM_CONF:-}" ] && scancel --quiet --user="$(id -un)" --name=hiera-workers 2>/dev/null
  [ -n "${SLURM_CONF:-}" ] && scancel --quiet --user="$(id -un)" --name=hiera-blocker 2>/dev/null
  for pidfile in slurmd.pid slurmctld.pid munged.pid; do
    [ -s "$dir/$pidfile" ] && kill "$(cat "$dir/$pidfile")" 2>/dev/null
  done
  sleep 0.5
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM

mkdir -p "$dir/state" "$dir/spool"
mungekey --create --keyfile="$dir/munge.key" 2>/dev/null || cp /etc/munge/munge.key "$dir/munge.key"
chmod 600 "$dir/munge.key"
munged --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
  --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" || skip "munged did not start: $(cat "$dir/munged.log" 2>/dev/null)"

ports=$(python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))') || skip "python3 is needed to pick free ports"
set -- $ports
host=$(hostname -s)
cat > "$dir/slurm.conf" <<CONF
ClusterName=hieratest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$1
SlurmdPort=$2
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 CoresPerSocket=2 ThreadsPerCore=1 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF" -i || skip "slurmctld did not start: $(tail -5 "$dir/slurmctld.log" 2>/dev/null)"
slurmd -f "$SLURM_CONF" || skip "slurmd did not start: $(tail -5 "$dir/slurmd.log" 2>/dev/null)"
ready=""
for _ in $(seq 100); do
  [ "$(sinfo --noheader --format=%t 2>/dev/null)" = "idle" ] && { ready=1; break; }
  sleep 0.2
done
[ -n "$ready" ] || skip "the test Slurm node did not come up: $(sinfo 2>&1) $(tail -5 "$dir/slurmctld.log") $(tail -5 "$dir/slurmd.log")"

HIERA_SCALEOUT_SLURM=1 "$tests" --gtest_filter='Slurm.*'
status=$?
if [ $status -ne 0 ]; then
  # Failed once in about nine runs on a loaded two-core machine: the held job could start before
  # `scontrol hold` (now it pends behind a blocking job first). Any failure still gets one loud retry,
  # with the daemons' logs; a second failure fails the test.
  echo "RETRYING the Slurm tests after a failure (exit $status); slurmctld.log and slurmd.log tails:" >&2
  tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2
  scancel --quiet --user="$(id -un)" --name=hiera-workers 2>/dev/null
  scancel --quiet --user="$(id -un)" --name=hiera-blocker 2>/dev/null
  HIERA_SCALEOUT_SLURM=1 "$tests" --gtest_filter='Slurm.*'
  status=$?
fi

# Takes both CPUs with a blocking job, so that hiera's job pends; the blocker
# goes once hiera's stderr ($1) shows the wait. Sets $watcher (wait for it).
hold_the_node() {
  blocker=$(sbatch --parsable --job-name=hiera-blocker --output=/dev/null --cpus-per-task=2 --wrap 'exec sleep 300')
  for _ in $(seq 100); do
    [ "$(squeue --noheader --jobs="$blocker" --format=%T 2>/dev/null)" = "RUNNING" ] && break
    sleep 0.2
  done
  (
    for _ in $(seq 300); do
      grep -q "waiting: Slurm job" "$1" 2>/dev/null && break
      sleep 0.2
    done
    scancel "$blocker"
  ) &
  watcher=$!
}

# The checks both commands share: submitted, pending shown in the progress
# line (after $3, a pattern for what comes before it) and not as a stray
# line, released, none left behind.
check_allocation_notices() {  # name err_file progress_prefix
  job=$(sed -n "s/^hiera $1: submitted Slurm job \([0-9]*\) .*/\1/p" "$2")
  [ -n "$job" ] || { echo "FAILED: hiera $1 gave no submission notice" >&2; status=1; }
  grep -q "^$3waiting: Slurm job $job is pending" "$2" ||
    { echo "FAILED: hiera $1's progress did not show the pending allocation" >&2; status=1; }
  if grep -q "^hiera $1: Slurm job $job is \(pending\|running\)" "$2"; then
    echo "FAILED: hiera $1's pending allocation was a stray line beside the progress" >&2; status=1
  fi
  grep -q "^hiera $1: cancelled Slurm job $job: its resources are released" "$2" ||
    { echo "FAILED: hiera $1 did not release its allocation" >&2; status=1; }
  left=$(squeue --noheader --name=hiera-workers --states=PENDING,RUNNING 2>&1)
  [ -z "$left" ] || { echo "FAILED: allocations left behind: $left" >&2; status=1; }
}

if [ $status -eq 0 ] && [ -x "$(dirname "$hiera")/hiera-worker" ]; then
  sample=$(dirname "$0")/../../fixtures/optimize/row_loop_mlp.py
  hold_the_node "$dir/optimize.err"
  # No --quiet: the progress goes to the (non-TTY) stderr, one line per change.
  "$hiera" optimize "$sample" --budget 2 --llm none --worker slurm,workers=2 --runs-dir "$dir/runs" \
    --json "$dir/result.json" >"$dir/optimize.out" 2>"$dir/optimize.err"
  code=$?
  wait "$watcher"
  cat "$dir/optimize.err" >&2
  # Before the optimizer's first report the wait is a line of its own: no bar then.
  check_allocation_notices optimize "$dir/optimize.err" '\(.* | \)\{0,1\}'
  # 0 improved, 3 no improvement: either way the run completed on the Slurm workers.
  if [ $code -ne 0 ] && [ $code -ne 3 ]; then echo "FAILED: hiera optimize exited $code" >&2; status=1; fi
  [ $status -eq 0 ] && echo "hiera optimize --worker slurm,workers=2: waited for job $job (shown in progress), completed (exit $code), allocation released" >&2

  # The same for `hiera bench` on a one-problem suite: the wait shows in the
  # bench's line, with the suite's bar and counts.
  mkdir -p "$dir/suite/elementwise"
  printf '%s\n' 'import torch' '' '' 'class Model(torch.nn.Module):' '    def forward(self, x):' \
    '        return torch.relu(x)' '' '' 'def get_inputs():' '    return [torch.randn(64, 64)]' '' '' \
    'def get_init_inputs():' '    return []' >"$dir/suite/elementwise/relu.py"
  echo '{}' >"$dir/config.json"
  hold_the_node "$dir/bench.err"
  "$hiera" bench "$dir/suite" --out "$dir/bench" --budget 1 --llm none --config "$dir/config.json" \
    --worker slurm,workers=1 >"$dir/bench.out" 2>"$dir/bench.err"
  code=$?
  wait "$watcher"
  cat "$dir/bench.err" >&2
  check_allocation_notices bench "$dir/bench.err" '\[\.*\] 0/1 problems, 0 correct\(, 1 running\)\{0,1\} | '
  if [ $code -ne 0 ]; then echo "FAILED: hiera bench exited $code" >&2; status=1; fi
  grep -q "1 problem(s) run, 0 reused" "$dir/bench.err" || { echo "FAILED: hiera bench did not run its problem" >&2; status=1; }
  [ $status -eq 0 ] && echo "hiera bench --worker slurm,workers=1: waited for job $job (shown in progress), completed, allocation released" >&2
fi
[ $status -eq 0 ] || { echo "--- slurmctld.log" >&2; tail -20 "$dir/slurmctld.log" >&2; echo "--- slurmd.log" >&2; tail -20 "$dir/slurmd.log" >&2; }
exit $status
