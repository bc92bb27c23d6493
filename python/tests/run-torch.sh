#!/bin/sh
# run-torch.sh BUILD_DIR — the Python package's tests against torch's own code (test_torch.py;
# test_gpu.py where a GPU is) in the truth harness's venv (test/truth/setup-venv.sh: torch,
# h5py, pytest), so that the default CI run has them without a second venv of torch. Exit 77
# (skipped) where that venv cannot be had.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
py=$("$here/../../test/truth/setup-venv.sh") || exit $?
VRAMKIT_PYTHON=$py exec "$here/run.sh" "${1:?usage: run-torch.sh BUILD_DIR}" \
  "$here/test_torch.py" "$here/test_gpu.py"
