#!/bin/sh
# Takes the Neovim screenshots of docs/screenshots (see README.md there):
# Neovim in a detached tmux session, keys sent with send-keys, each screen
# captured with its colours (capture-pane -e) and drawn by render_ansi.py.
#   sh docs/screenshots/capture_nvim.sh FILE.cu   (from the repository root)
set -eu
repo=$(pwd)
file=$1
out=docs/screenshots
s=hiera-shot
export HIERA_REPO="$repo"
tmux kill-session -t $s 2>/dev/null || true
tmux new-session -d -s $s -x 118 -y 32 "nvim -n -i NONE -u $out/nvim_demo_init.lua $file"
shot() { sleep "$2"; tmux capture-pane -e -p -t $s > "/tmp/$1.txt"; /usr/bin/python3 $out/render_ansi.py "/tmp/$1.txt" "$out/$1.png"; }
keys() { tmux send-keys -t $s "$@"; }
sleep 3
keys '12G' 'f(' 'b'                                   # the kernel's name
keys ':lua vim.lsp.buf.hover()' Enter
shot nvim-hover 3
keys j                                                 # moving the cursor closes the hover
keys ':17G' Enter
keys ':lua vim.lsp.buf.code_action()' Enter
shot nvim-code-actions 3
keys Escape
keys ':12G' Enter ':HieraProfile' Enter
shot nvim-profile-progress 6
tmux kill-session -t $s
