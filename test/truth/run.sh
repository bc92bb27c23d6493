#!/bin/sh
# run.sh VRAMKIT [truth.py options] — the harness in one command: its venv (setup-venv.sh),
# then truth.py against the vramkit binary given. The full table:
#   test/truth/run.sh build/driver/vramkit --markdown test/truth/RESULTS.md
# The subset the default CI run measures: add --subset (ctest -L '^truth$' runs that).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: run.sh VRAMKIT [truth.py options]" >&2; exit 2; }
vk=$1; shift
py=$("$here/setup-venv.sh") || exit $?
exec "$py" -W ignore "$here/truth.py" --vramkit "$vk" "$@"
