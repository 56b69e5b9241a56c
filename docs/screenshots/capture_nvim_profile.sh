#!/bin/sh
# The second set of Neovim screenshots (see README.md here): :HieraProfile on a
# KernelBench module, run to its end by the real `hiera worker` on this
# machine's CPU torch, then the hover and the code lens with the measurement.
#   sh docs/screenshots/capture_nvim_profile.sh FILE.py   (from the repository root)
set -eu
repo=$(pwd)
file=$1
out=docs/screenshots
s=hiera-shot-profile
export HIERA_REPO="$repo"
tmux kill-session -t $s 2>/dev/null || true
tmux new-session -d -s $s -x 118 -y 32 "nvim -n -i NONE -u $out/nvim_demo_init.lua $file"
shot() { sleep "$2"; tmux capture-pane -e -p -t $s > "/tmp/$1.txt"; /usr/bin/python3 $out/render_ansi.py "/tmp/$1.txt" "$out/$1.png"; }
keys() { tmux send-keys -t $s "$@"; }
sleep 12
keys '9G' '0' 'fM'                                    # the class name
keys ':HieraProfile' Enter
shot nvim-profile-done 40
keys Escape '9G' '0' 'fM' ':lua vim.lsp.codelens.refresh()' Enter
keys ':lua vim.lsp.buf.hover()' Enter
shot nvim-hover-measured 3
tmux kill-session -t $s
