#!/bin/bash
# wheel.sh — what a user gets from `pip wheel .`: the wheel is py3-none (no Python ABI),
# installs into a fresh venv with its dependency, puts `vramkit` on that venv's PATH, answers
# `python -m vramkit`, streams an HDF5 file byte for byte, and carries no path of this
# checkout. Built without CUDA (the CPU build: this is about packaging, and the CUDA build
# takes minutes). Needs python3 with venv and PyPI (or a pip cache) for scikit-build-core and
# numpy; VRAMKIT_PYTHON (with h5py) writes the test file. Exit 77 (skipped) without them.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
py=${VRAMKIT_PYTHON:-python3}
"$py" -c 'import h5py, numpy' 2>/dev/null || { echo "wheel: $py lacks h5py: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset VRAMKIT_LIBRARY VRAMKIT_EXE PYTHONPATH
fail() { echo "wheel: $*"; exit 1; }
python3 -m venv "$tmp/venv" >/dev/null 2>&1 || { echo "wheel: no python3 venv: skipped"; exit 77; }
v=$tmp/venv/bin
"$v/pip" install -q --disable-pip-version-check numpy >/dev/null 2>&1 ||
  { echo "wheel: numpy cannot be installed: skipped"; exit 77; }
if ! "$v/pip" wheel -q --disable-pip-version-check --no-deps -w "$tmp/dist" "$root" \
     -C cmake.define.VRAMKIT_CUDA=OFF -C build-dir="$tmp/build" > "$tmp/log" 2>&1; then
  if grep -qiE "could not find a version|connection|network" "$tmp/log"; then
    echo "wheel: the build backend cannot be had: skipped"; exit 77
  fi
  tail -20 "$tmp/log"; fail "pip wheel failed"
fi
whl=$(ls "$tmp"/dist/vramkit-*.whl) || fail "no wheel"
case $(basename "$whl") in
  vramkit-*-py3-none-linux_*.whl|vramkit-*-py3-none-manylinux*.whl) ;;
  *) fail "$(basename "$whl") is not tagged py3-none-PLATFORM" ;;
esac
"$v/pip" install -q --disable-pip-version-check "$whl" || fail "cannot install $whl"
mkdir "$tmp/unpacked" && (cd "$tmp/unpacked" && "$v/python" -m zipfile -e "$whl" .)
if grep -rlF "$root" "$tmp/unpacked" >/dev/null; then
  grep -rlF "$root" "$tmp/unpacked"; fail "the wheel carries the build path $root"
fi
cd "$tmp" || exit 1
PATH=$v:/usr/bin:/bin vramkit --help > "$tmp/help" 2>&1 || fail "vramkit --help from the venv's PATH: $(cat "$tmp/help")"
grep -q "stream" "$tmp/help" || fail "vramkit --help does not list stream"
"$v/python" -m vramkit plan --help > /dev/null || fail "python -m vramkit plan --help"
"$py" -c 'import h5py, numpy as np, sys
with h5py.File(sys.argv[1], "w") as f: f["x"] = np.arange(3000, dtype=np.int32).reshape(1000, 3)' "$tmp/t.h5"
"$v/python" - "$tmp/t.h5" <<'PY' || fail "streaming from the installed wheel"
import sys, numpy as np, vramkit
assert "site-packages" in vramkit.__file__, vramkit.__file__
with vramkit.stream(sys.argv[1], "/x", batch=64, shuffle=True, budget="16KiB") as s:
    got = {int(i): a.tobytes() for b in s for i, a in zip(b.samples, b.arrays[0])}
ref = np.arange(3000, dtype=np.int32).reshape(1000, 3)
assert len(got) == 1000 and all(got[i] == ref[i].tobytes() for i in range(1000))
try:
    vramkit.stream(sys.argv[1], "/x", batch=64, device="cuda:0")
    raise SystemExit("a CPU build opened cuda:0")
except vramkit.VramkitError as e:
    assert "built without CUDA" in str(e), e
PY
echo "wheel: $(basename "$whl") installs, runs and streams"
