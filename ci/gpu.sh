#!/bin/bash
# ci/gpu.sh [OUTDIR] — everything that needs a GPU, in one command, on a GPU machine: unpack the
# carried dependencies (.gpu-debs, see ../shared/gpu/README.md), configure for this GPU's
# architecture, build in build-gpu/, run `ctest -L hw`, every benchmark (label bench), the
# PyTorch comparison of the kernels and the streamer against the h5py+torch loader; write the
# logs and a short summary into OUTDIR (default ./gpu-out): at most 8 files, one folder.
#   OUTDIR/SUMMARY.md         pass/fail of each hw test; each benchmark's ratio to its ceiling
#                             and to PyTorch / the h5py+torch loader
#   OUTDIR/gpu.log            every step's output
#   OUTDIR/hw-junit.xml       ctest's record of the hw tests
#   OUTDIR/kernels.json       bench_kernels --json
#   OUTDIR/torch_kernels.json bench_torch_kernels.py --json
#   OUTDIR/stream.txt         bench_stream on the GPU (and shuffled)
#   OUTDIR/h5py.json          baseline_h5py_torch.py --json on the same file
#   OUTDIR/python_stream.json bench_python_stream.py --json: vramkit.stream into torch vs that loader
# Every step has a time limit, and all of them together a deadline (DEADLINE seconds, default
# 540: the device machine's commands end at 10 minutes, and the summary must be written before);
# a step that fails or runs out of time is reported and the next one runs, a step with no time
# left is skipped. Exit status: 0 when
# every step ran and every hw test passed, 1 otherwise; 0 with a message and nothing written
# on a machine without an NVIDIA GPU.
# Environment: BUILD_DIR (default build-gpu), GPU_JOBS (default: the CPUs), STREAM_SIZE (the
# streamed file, default 4GiB), HW_TIMEOUT / BENCH_TIMEOUT (seconds per test, 300 / 240),
# DEADLINE (seconds for the whole run, 540).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/gpu-out}
build=${BUILD_DIR:-$root/build-gpu}
jobs=${GPU_JOBS:-$(nproc 2>/dev/null || echo 4)}
stream_size=${STREAM_SIZE:-4GiB}
hw_timeout=${HW_TIMEOUT:-300}
bench_timeout=${BENCH_TIMEOUT:-240}
deadline=${DEADLINE:-540}

# ---- is there a GPU at all -----------------------------------------------------------------
if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "ci/gpu.sh: no NVIDIA GPU here (nvidia-smi is not installed): nothing to run." >&2
    exit 0
fi
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
if [ -z "$cap" ] || ! [[ "$cap" =~ ^[0-9]+$ ]]; then
    echo "ci/gpu.sh: no NVIDIA GPU here (nvidia-smi lists none: $(nvidia-smi -L 2>&1 | head -n 1)): nothing to run." >&2
    exit 0
fi

mkdir -p "$out"
log=$out/gpu.log
: >"$log"
steps=$out/.steps # one line per step: name, status, seconds (folded into SUMMARY.md, then removed)
: >"$steps"
start_all=$(date +%s)

# step NAME LIMIT COMMAND...: run with a time limit (cut to what the deadline leaves, less 20 s
# for the summary), output to the log, status recorded.
step() {
    local name=$1 limit=$2
    shift 2
    local t0 rc left
    t0=$(date +%s)
    left=$((deadline - (t0 - start_all) - 20))
    if [ "$left" -lt 10 ]; then
        echo "$name|skipped (out of time)|0" >>"$steps"
        echo "== $name: skipped, the deadline is near" | tee -a "$log"
        return 124
    fi
    [ "$limit" -gt "$left" ] && limit=$left
    echo "== $name ($(date -u +%H:%M:%S), limit ${limit}s): $*" | tee -a "$log"
    timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1
    rc=$?
    local what=ok
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then what="timed out"; elif [ "$rc" -ne 0 ]; then what="failed ($rc)"; fi
    echo "$name|$what|$(($(date +%s) - t0))" >>"$steps"
    echo "== $name: $what in $(($(date +%s) - t0)) s" | tee -a "$log"
    return "$rc"
}

{
    echo "ci/gpu.sh $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
    nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader
    nproc
} >>"$log" 2>&1

# ---- dependencies and build ----------------------------------------------------------------
cd "$root" || exit 1
if [ -x .gpu-debs/unpack-debs.sh ]; then
    if env_lines=$(.gpu-debs/unpack-debs.sh 2>>"$log"); then
        eval "$env_lines"
        echo "== dependencies unpacked from .gpu-debs" | tee -a "$log"
    else
        echo "== .gpu-debs/unpack-debs.sh failed: trying the system's packages" | tee -a "$log"
    fi
else
    echo "== no .gpu-debs carried: using the system's packages (see ../shared/gpu/README.md)" | tee -a "$log"
fi
step configure 120 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CUDA_ARCHITECTURES="$cap" -DVRAMKIT_WERROR=OFF
step build 300 cmake --build "$build" -j"$jobs"
built=$?

# ---- hw tests, benchmarks, comparisons ------------------------------------------------------
if [ "$built" -eq 0 ]; then
    step hw-tests $((hw_timeout * 4)) ctest --test-dir "$build" -L hw --output-on-failure \
        --timeout "$hw_timeout" --output-junit "$out/hw-junit.xml"
    step benchmarks $((bench_timeout * 3)) ctest --test-dir "$build" -L bench -E '^bench_torch_kernels$' \
        --output-on-failure --timeout "$bench_timeout"
    step bench-kernels-json "$bench_timeout" sh -c "'$build/test/bench/bench_kernels' --json >'$out/kernels.json'"
    if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
        step torch-kernels "$bench_timeout" sh -c "python3 '$root/test/bench/bench_torch_kernels.py' --ours '$out/kernels.json' --json >'$out/torch_kernels.json'"
    else
        echo "torch-kernels|skipped (no PyTorch with CUDA)|0" >>"$steps"
    fi
    step stream-gpu "$bench_timeout" sh -c "'$build/test/bench/bench_stream' --device cuda:0 --size '$stream_size' --budget 4GiB --epochs 3 >'$out/stream.txt' && '$build/test/bench/bench_stream' --device cuda:0 --size '$stream_size' --budget 4GiB --epochs 2 --shuffle >>'$out/stream.txt'"
    h5=$(sed -n 's/^file *\([^:]*\):.*/\1/p' "$out/stream.txt" 2>/dev/null | head -n 1)
    if [ -n "$h5" ] && [ -f "$h5" ]; then
        step h5py-baseline "$bench_timeout" sh -c "python3 '$root/test/bench/baseline_h5py_torch.py' --file '$h5' --chunk-bytes 2GiB --batch 128 --epochs 3 --json >'$out/h5py.json'"
    else
        echo "h5py-baseline|skipped (bench_stream wrote no file)|0" >>"$steps"
    fi
    # the Python package over this build: its tests (test_gpu.py hands batches to torch on
    # cuda:0) and vramkit.stream into torch against the h5py+torch loader on one file
    if python3 -c 'import torch, h5py, numpy, pytest' >/dev/null 2>&1; then
        step python-tests "$bench_timeout" env VRAMKIT_PYTHON=python3 "$root/python/tests/run.sh" "$build"
        if [ -n "$h5" ] && [ -f "$h5" ]; then
            step python-stream "$bench_timeout" sh -c "PYTHONPATH='$root/python' VRAMKIT_LIBRARY='$build/driver/libvramkit_py.so' python3 '$root/test/bench/bench_python_stream.py' --file '$h5' --device cuda:0 --budget 4GiB --epochs 3 --json >'$out/python_stream.json'"
        fi
    else
        echo "python-tests|skipped (no torch, h5py, numpy and pytest together)|0" >>"$steps"
    fi
fi

# ---- summary -------------------------------------------------------------------------------
python3 "$root/ci/gpu-summary.py" --out "$out" --steps "$steps" --seconds $(($(date +%s) - start_all)) \
    >"$out/SUMMARY.md" 2>>"$log"
summary_rc=$?
rm -f "$steps"
cat "$out/SUMMARY.md"
echo "ci/gpu.sh: logs and summary in $out ($(($(date +%s) - start_all)) s)"
exit "$summary_rc"
