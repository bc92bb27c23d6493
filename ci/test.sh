#!/bin/bash
# The test command: configure, build (warnings are errors), build the library and the vramkit
# program again at -O3 (Release: the warnings only the optimiser finds are errors too, about
# 1 minute), run unit + fuzz + proof tests, valgrind memcheck over the C API and the command's
# bad inputs (label memcheck_fast, about 1 minute),
# the estimate against PyTorch (label truth, a subset) and the architecture table against
# transformers' classes (every causal-LM type: test/models),
# the mpirun tests (label mpi: 4 ranks each, about 15 s together; MPI builds) and python (the
# package over the build's library), then a time-boxed libFuzzer pass with clang, then print
# coverage of include/.
# Environment: BUILD_DIR (default build-ci), FUZZ_SECONDS (default 10 per harness, two
# harnesses at a time; 0 skips the libFuzzer pass, the corpus replay still runs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-ci}
fuzz_seconds=${FUZZ_SECONDS:-10}
jobs=$(nproc 2>/dev/null || echo 2)

echo "== configure + build ($build)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DVRAMKIT_WERROR=ON -DVRAMKIT_COVERAGE=ON >/dev/null
cmake --build "$build" -j"$jobs"
find "$build" -name '*.gcda' -delete

# Release (-O3): GCC's flow-based warnings (-Wstringop-overflow, -Wformat-truncation,
# -Wmaybe-uninitialized, ...) depend on inlining, so a Debug build does not see them. The
# library (vramkit_py holds every part) and the program, not the tests.
echo "== release build, -O3, warnings are errors ($build-rel)"
cmake -S "$root" -B "$build-rel" -DCMAKE_BUILD_TYPE=Release -DVRAMKIT_WERROR=ON >/dev/null
cmake --build "$build-rel" -j"$jobs" --target vramkit vramkit_py

# The Python package's tests need numpy, h5py and pytest: a virtual environment beside the
# build, from PyPI (the label skips, exit 77, where they cannot be had).
if [ -z "${VRAMKIT_PYTHON:-}" ] && command -v python3 >/dev/null; then
  if [ -x "$build/pyenv/bin/python" ] || python3 -m venv "$build/pyenv" >/dev/null 2>&1; then
    "$build/pyenv/bin/python" -m pip install -q --disable-pip-version-check numpy h5py pytest \
      >/dev/null 2>&1 || echo "ci/test: numpy/h5py/pytest could not be installed: python tests skip"
    export VRAMKIT_PYTHON=$build/pyenv/bin/python
  fi
fi

echo "== tests: unit, fuzz (corpus replay), proof, mpi, python"
# mpirun as root (CI containers) must be allowed explicitly; the mpi tests pass the flag too
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir "$build" -L 'unit|fuzz|proof|mpi|python' --output-on-failure -j"$jobs"

# valgrind memcheck (test/memcheck/): the C API's test (every operation, the streamer with its
# HDF5 child) and the vramkit command on bad inputs of every format and one good run of each
# command; any error valgrind reports in a process of ours fails. About 1 minute; the whole
# label (isolation, streamer, the golden table and the fuzz corpora under valgrind) takes
# longer: `ctest -L memcheck` (docs/tests.md).
echo "== memcheck: valgrind over the C API and the command's bad inputs (label memcheck_fast)"
ctest --test-dir "$build" -L memcheck_fast --output-on-failure -j"$jobs"

# The estimator against PyTorch (test/truth/): the rows of workloads.tsv marked for CI, in a
# venv cached under ~/.cache/vramkit (the first run installs torch and transformers from
# PyPI, about 5 GiB and 3 minutes; later runs reuse it). About 1 minute; skipped (77) where
# the venv cannot be had. The full table: test/truth/run.sh (README, test/bench/RESULTS.md).
# The architecture table against transformers' own classes (test/models/: arch_truth,
# gguf_gen_check, heldout: every causal-LM type of transformers, no silent wrong answer), in
# its pinned venv, also cached under ~/.cache/vramkit (test/models/venv.sh: about 1-3 minutes
# the first time, nothing after); about 40 s. Skipped (77) where the venv cannot be had.
models_venv=${VRAMKIT_MODELS_VENV:-$HOME/.cache/vramkit/models-venv}
if sh "$root/test/models/venv.sh" "$models_venv" >/dev/null 2>&1; then
  cmake -S "$root" -B "$build" -DVRAMKIT_TRUTH_PYTHON="$models_venv/bin/python" >/dev/null
else
  echo "ci/test: the models venv ($models_venv) could not be made: arch_truth, gguf_gen_check, heldout skip"
fi
echo "== truth: the estimate against PyTorch's memory accounting (a subset), the table against transformers"
ctest --test-dir "$build" -L '^truth$' --output-on-failure

if [ "$fuzz_seconds" != 0 ] && command -v clang >/dev/null; then
  echo "== libFuzzer: ${fuzz_seconds}s per harness under ASan+UBSan (clang)"
  cmake -S "$root" -B "$build-fuzz" -DCMAKE_C_COMPILER=clang -DVRAMKIT_FUZZ=ON -DVRAMKIT_CUDA=OFF \
        -DVRAMKIT_HDF5=OFF -DVRAMKIT_MPI=OFF -DVRAMKIT_FUZZ_SECONDS="$fuzz_seconds" >/dev/null
  cmake --build "$build-fuzz" -j"$jobs" --target vramkit_fuzzers
  ctest --test-dir "$build-fuzz" -L fuzz -R '^fuzz_' -E '^fuzz_replay_' --output-on-failure -j"$jobs"
fi

echo "== coverage of include/ by the unit tests (lines, then branches)"
gcovr -r "$root" --object-directory "$build" --filter "$root/include/" --exclude-unreachable-branches
gcovr -r "$root" --object-directory "$build" --filter "$root/include/" --exclude-unreachable-branches -b
