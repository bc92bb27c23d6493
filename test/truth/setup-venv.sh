#!/bin/sh
# setup-venv.sh — make (or reuse) the harness's venv and print its python. The venv lives
# under ${VRAMKIT_TRUTH_VENV:-~/.cache/vramkit/truth-venv} and is reinstalled only when
# requirements.txt changes (a copy is kept in the venv), so reruns are cheap. torch comes
# from PyPI (about 5 GiB with its CUDA libraries; nothing of them is used: every tensor is
# fake). Exit 77 (skip) when the venv cannot be made or the packages cannot be had.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
venv=${VRAMKIT_TRUTH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/vramkit/truth-venv}
req=$here/requirements.txt
if [ -x "$venv/bin/python" ] && cmp -s "$req" "$venv/requirements.txt"; then
  echo "$venv/bin/python"; exit 0
fi
mkdir -p "$(dirname "$venv")"
if ! { [ -x "$venv/bin/python" ] || python3 -m venv "$venv" >&2; }; then
  echo "truth: cannot make a venv at $venv" >&2; exit 77
fi
if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req" >&2; then
  echo "truth: cannot install $req into $venv" >&2; exit 77
fi
cp "$req" "$venv/requirements.txt"
echo "$venv/bin/python"
