#!/bin/sh
# run-accelerate.sh VRAMKIT MODELS_DIR — test_accelerate.py in the truth harness's venv
# (test/truth/setup-venv.sh makes or reuses it; exit 77 where it cannot be had).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 2 ] || { echo "usage: run-accelerate.sh VRAMKIT MODELS_DIR" >&2; exit 2; }
py=$("$here/../truth/setup-venv.sh") || exit $?
exec "$py" -W ignore "$here/test_accelerate.py" "$1" "$2"
