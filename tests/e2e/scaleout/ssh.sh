#!/bin/sh
# Starts a throwaway OpenSSH server on a loopback port (its own sshd_config,
# host key and user key in a temporary directory; nothing of the system's
# ssh setup is read or changed), then runs the ssh part of the scale-out
# tests through it: `hiera worker` via ssh://127.0.0.1:PORT.
# Usage: ssh.sh path/to/hiera_scaleout_e2e_tests. Exit 77: skipped (no sshd).
set -u
tests=$1
skip() { echo "SKIPPED: $*" >&2; exit 77; }

sshd=$(command -v sshd || echo /usr/sbin/sshd)
[ -x "$sshd" ] || skip "no sshd (Debian: openssh-server; scripts/setup installs it)"
command -v ssh >/dev/null 2>&1 || skip "no ssh client (Debian: openssh-client)"
command -v ssh-keygen >/dev/null 2>&1 || skip "no ssh-keygen"

dir=$(mktemp -d "${TMPDIR:-/tmp}/hiera-sshd-XXXXXX")
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM

ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key" || skip "ssh-keygen failed"
ssh-keygen -q -t ed25519 -N '' -f "$dir/user_key" || skip "ssh-keygen failed"
cp "$dir/user_key.pub" "$dir/authorized_keys"
chmod 600 "$dir/authorized_keys"
# A free loopback port, chosen by the kernel.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
  skip "python3 is needed to pick a free port"

# Root's sshd needs its privilege-separation directory.
[ "$(id -u)" -eq 0 ] && mkdir -p /run/sshd
cat > "$dir/sshd_config" <<CONF
ListenAddress 127.0.0.1
Port $port
HostKey $dir/host_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
AllowUsers $(id -un)
LogLevel ERROR
CONF
"$sshd" -f "$dir/sshd_config" -E "$dir/sshd.log" || skip "sshd did not start: $(cat "$dir/sshd.log" 2>/dev/null)"
for _ in $(seq 50); do [ -s "$dir/sshd.pid" ] && break; sleep 0.1; done
pid=$(cat "$dir/sshd.pid" 2>/dev/null)
[ -n "$pid" ] || skip "sshd did not start: $(cat "$dir/sshd.log" 2>/dev/null)"

ssh_command="ssh -F none -i $dir/user_key -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=$dir/known_hosts -o LogLevel=ERROR"
# sshd may not accept yet: the first connection says whether the setup works at all.
ok=""
for _ in $(seq 20); do
  if $ssh_command -o BatchMode=yes -p "$port" 127.0.0.1 true 2>"$dir/probe.err"; then ok=1; break; fi
  sleep 0.2
done
[ -n "$ok" ] || skip "cannot log in to the test sshd as $(id -un): $(cat "$dir/probe.err") $(cat "$dir/sshd.log")"

HIERA_SCALEOUT_SSH="$ssh_command" HIERA_SCALEOUT_SSH_PORT="$port" "$tests" --gtest_filter='Ssh.*'
