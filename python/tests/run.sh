#!/bin/bash
# run.sh BUILD_DIR [PYTEST ARGS] — the Python package's tests (label `python`) against a build tree: the
# package from python/, the library and the vramkit command from BUILD_DIR. The Python is
# $VRAMKIT_PYTHON, else python3; it needs numpy, h5py and pytest (ci/test.sh makes a virtual
# environment with them). Exit 77 (skipped) where they are missing or the build has no HDF5.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
py=${VRAMKIT_PYTHON:-python3}
lib=$build/driver/libvramkit_py.so
if ! "$py" -c 'import numpy, h5py, pytest' 2>/dev/null; then
  echo "python tests skipped: $py lacks numpy, h5py or pytest (pip install numpy h5py pytest)"
  exit 77
fi
[ -f "$lib" ] || { echo "python tests: no $lib"; exit 1; }
export PYTHONPATH=$here/..${PYTHONPATH:+:$PYTHONPATH}
export VRAMKIT_LIBRARY=$lib VRAMKIT_EXE=$build/driver/vramkit
shift
[ $# -gt 0 ] || set -- "$here"
exec "$py" -m pytest -q -p no:cacheprovider "$@"
