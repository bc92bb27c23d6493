#!/bin/bash
# ci/gpu.sh [OUTDIR] — everything that needs a GPU, as one command of at most 8 minutes on the
# lent GPU machine (one H100, 16 cores; nvcc 13, CMake and ninja from pip, PyTorch, h5py, numpy
# and pytest in python3; no package registry and no C development packages), built to pass on
# first contact: it looks before it acts, adapts to what it finds, and always leaves a summary.
#
# The device call (from the repository root; ci/gpu-sim.sh rehearses it without a GPU):
#   here, once, where apt works:  ci/gpu-deps-fetch.sh     -> .gpu-deps/ (~27 MB, git-ignored)
#   run:   command "ci/gpu.sh"   carry [".gpu-deps"]   timeout_s 540
# OUTDIR defaults to $OUT (the device tool's folder, whose files come back), else ./gpu-out.
#
# Steps, in order of what matters most, with what each took in the first run (an H200, 16
# cores, 2026-11-27: 277 s in all; test/bench/RESULTS.md); every
# limit is cut to what the deadline (DEADLINE, 470 s) leaves, a step with no time left is
# skipped, a failed step is reported and the next one runs:
#   preflight      11 s  prints what is here and what the run does about it: GPU, CPUs, memory,
#                        disk, glibc, nvcc (PATH, /usr/local/cuda), gcc, cmake (>= 3.21; pip's
#                        too), ninja / make / the carried ninja, pkg-config (not needed),
#                        python3 with torch/h5py/numpy/pytest, compute-sanitizer, NCCL (header
#                        and library: toolkit, PyTorch's nvidia wheel, carried nccl.h; else the
#                        NCCL backend is left out, said so), the carried .gpu-deps (checked)
#   configure       7 s  build-gpu/, Ninja (else make), RelWithDebInfo, the GPU's architecture,
#                        HDF5/Criterion/cJSON from .gpu-deps alone (-DVRAMKIT_DEPS_PREFIX: no
#                        pkg-config, no h5cc, RPATH into .gpu-deps/lib: no LD_LIBRARY_PATH),
#                        MPI off, hw tests limited to HW_TIMEOUT seconds each
#   build          30 s  only the target vramkit_gpu (hw tests, GPU benchmarks, the CLI, the
#                        Python library), keep-going: a broken target fails its own test only
#   hw-tests       63 s  ctest -L hw: one test at a time, one Criterion test at a time (--jobs
#                        1), each at most HW_TIMEOUT (180 s), all stopped by the deadline
#                        (--stop-time)
#   hw-large       35 s  hw_large: 2^31 elements and more (8 GiB tensors), every element checked
#   python-tests   26 s  the Python package over this build (test_gpu.py: batches into torch)
#   sanitizer      69 s  compute-sanitizer memcheck over hw_kernels' kernel tests and hw_stream,
#                        racecheck over the kernels that share memory (norm, quantisation);
#                        any error it reports fails the step (ci/gpu-sanitize.sh)
#   bench-kernels   1 s  bench_kernels --json: every kernel against the copy, and beside each its
#                        variants (key@variant: list1, fold, rowwide, many, store16, bits,
#                        half4) on the same data
#   torch-kernels   5 s  the same shapes through PyTorch
#   stream-gpu     13 s  bench_stream: a 4 GiB HDF5 file, 3 epochs in order, 2 shuffled, 2 in
#                        order with a reader a CPU (the default is at most 8): the readers A/B
#   python-stream  13 s  vramkit.stream from Python into torch against user-report 004's
#                        h5py+torch loader on the same file, 3 epochs each
#   python-cpu    ~40 s  bench_python_stream.py --device cpu at its defaults (issue 30's CPU
#                        target: the h5py chunk loader and DataLoader, on 16 cores, no GPU)
# (python-cpu is new since that run: a guess, most of it the 1 GiB file it writes.) About 5
# minutes in all; the deadline keeps the command under 8, cutting from the end; what it leaves
# out is reported "skipped (out of time)", and a second, shorter call can run it (GPU_STEPS
# below).
# SUMMARY.md is rewritten after every step, so a run cut anywhere (the tool's own limit, a
# signal) still leaves one. OUTDIR gets at most 8 files (the device tool returns 8): SUMMARY.md,
# gpu.log (every step's output, the preflight first), hw-junit.xml, kernels.json,
# torch_kernels.json, stream.txt, python_stream.json, python_cpu.json.
# Exit status: 0 when every step ran and passed, 1 otherwise, 3 when the preflight found
# nothing to build with; 0 with a message and nothing run on a machine without an NVIDIA GPU.
# Environment: DEADLINE (seconds for the whole run, 470), BUILD_DIR (build-gpu), GPU_JOBS
# (the CPUs), HW_TIMEOUT (180), STREAM_SIZE (4GiB), GPU_DEPS (.gpu-deps), GPU_STEPS (a
# space-separated list of the steps to run after the build, default all: a second, shorter
# call runs a few), GPU_SIM=1 (ci/gpu-sim.sh: no GPU is expected; everything up to the GPU runs
# and every hw test must reach its "no GPU" skip, 77).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-${OUT:-$root/gpu-out}}
build=${BUILD_DIR:-$root/build-gpu}
jobs=${GPU_JOBS:-$(nproc 2>/dev/null || echo 4)}
hw_timeout=${HW_TIMEOUT:-180}
stream_size=${STREAM_SIZE:-4GiB}
deadline=${DEADLINE:-470}
deps=${GPU_DEPS:-$root/.gpu-deps}
sim=${GPU_SIM:-0}
only=${GPU_STEPS:-}
start_all=$(date +%s)

# ---- is there a GPU at all -----------------------------------------------------------------
cap=""
if [ "$sim" = 1 ]; then
    cap=90 # the H100's, as the device call will have it
elif ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "ci/gpu.sh: no NVIDIA GPU here (nvidia-smi is not installed): nothing to run." >&2
    exit 0
else
    cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
    if [ -z "$cap" ] || ! [[ "$cap" =~ ^[0-9]+$ ]]; then
        echo "ci/gpu.sh: no NVIDIA GPU here (nvidia-smi lists none: $(nvidia-smi -L 2>&1 | head -n 1)): nothing to run." >&2
        exit 0
    fi
fi

mkdir -p "$out"
log=$out/gpu.log
: >"$log"
work=$(mktemp -d "${TMPDIR:-/tmp}/vramkit-gpu.XXXXXX")
steps=$work/steps # one line per step: name|status|seconds (never in OUTDIR: its files are counted)
: >"$steps"

say() { echo "$*" | tee -a "$log"; }
elapsed() { echo $(($(date +%s) - start_all)); }

# The summary, from what is in OUTDIR now; rewritten after every step.
summarize() {
    if [ -n "${py:-}" ]; then
        "$py" "$root/ci/gpu-summary.py" --out "$out" --steps "$steps" --seconds "$(elapsed)" \
            --sim "$sim" >"$out/SUMMARY.md.tmp" 2>>"$log"
        local rc=$?
        mv -f "$out/SUMMARY.md.tmp" "$out/SUMMARY.md"
        return $rc
    fi
    { echo "# ci/gpu.sh summary (no python3: steps only)"; echo; sed 's/^/- /' "$steps"; } >"$out/SUMMARY.md"
    grep -qv '|ok|' "$steps" && return 1
    return 0
}

# A signal (the tool's limit, Ctrl-C) ends the step in progress, records it and writes the summary.
current_pid=""
current_step=""
on_signal() {
    [ -n "$current_pid" ] && kill -TERM "$current_pid" 2>/dev/null
    [ -n "$current_step" ] && echo "$current_step|cut by a signal|$(elapsed)" >>"$steps"
    say "== ci/gpu.sh: cut by a signal after $(elapsed) s"
    summarize
    rm -rf "$work"
    exit 1
}
trap on_signal TERM INT HUP

# step NAME LIMIT COMMAND...: run with a time limit cut to what the deadline leaves (less 15 s
# for the summary), output to the log, status recorded, the summary rewritten.
step() {
    local name=$1 limit=$2
    shift 2
    local t0 rc left what
    if [ -n "$only" ] && [[ " $only " != *" $name "* ]] && [[ " configure build " != *" $name "* ]]; then
        return 0
    fi
    t0=$(date +%s)
    left=$((deadline - (t0 - start_all) - 15))
    if [ "$left" -lt 10 ]; then
        echo "$name|skipped (out of time)|0" >>"$steps"
        say "== $name: skipped, the deadline is near"
        summarize
        return 124
    fi
    [ "$limit" -gt "$left" ] && limit=$left
    say "== $name ($(date -u +%H:%M:%S), limit ${limit}s): $*"
    current_step=$name
    timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1 &
    current_pid=$!
    wait "$current_pid"
    rc=$?
    current_pid=""
    current_step=""
    what=ok
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then what="timed out"; elif [ "$rc" -ne 0 ]; then what="failed ($rc)"; fi
    echo "$name|$what|$(($(date +%s) - t0))" >>"$steps"
    say "== $name: $what in $(($(date +%s) - t0)) s"
    summarize
    return "$rc"
}
skip() { # skip NAME WHY
    if [ -n "$only" ] && [[ " $only " != *" $1 "* ]]; then return 0; fi
    echo "$1|skipped ($2)|0" >>"$steps"
    say "== $1: skipped ($2)"
}

# ---- preflight: what is here, and what the run will do about it -----------------------------
pf() { say "preflight: $*"; }
first_exe() { # the first of the arguments that is an executable file
    local f
    for f in "$@"; do if [ -n "$f" ] && [ -x "$f" ] && [ ! -d "$f" ]; then echo "$f"; return 0; fi; done
    return 1
}
{
    echo "ci/gpu.sh $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$([ "$sim" = 1 ] && echo ', SIMULATION (GPU_SIM=1): no GPU expected')"
    if [ "$sim" = 1 ]; then echo "none (simulation), architecture $cap"; else
        nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version,compute_cap --format=csv,noheader 2>&1 | head -n 1
    fi
    echo "$(nproc) CPUs, $(free -g 2>/dev/null | awk '/^Mem:/{print $2 " GiB memory, " $7 " GiB available"}')"
} >>"$log" 2>&1
pf "deadline ${deadline}s, outdir $out, build $build, jobs $jobs"
pf "kernel $(uname -r), glibc $(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}'), disk free $(df -h "$root" 2>/dev/null | awk 'NR==2{print $4}') here, $(df -h /tmp 2>/dev/null | awk 'NR==2{print $4}') in /tmp"
# python3 first: pip's cmake and ninja live beside it. The one with PyTorch when there are
# several (PATH's, then the image's /opt/torch/.venv): the comparisons need torch.
py=$(command -v python3 || true)
for cand in "$py" /opt/torch/.venv/bin/python3 /opt/conda/bin/python3; do
    if [ -x "$cand" ] && "$cand" -c 'import torch' >/dev/null 2>&1; then
        py=$cand
        break
    fi
done
if [ -n "$py" ]; then
    pybin=$("$py" -c 'import os, sys; print(os.path.dirname(sys.executable))' 2>/dev/null)
    [ -n "$pybin" ] && case ":$PATH:" in *":$pybin:"*) ;; *) PATH=$PATH:$pybin ;; esac
    pymods=$("$py" - 2>/dev/null <<'PY'
import importlib
out = []
for m in ("torch", "h5py", "numpy", "pytest"):
    try:
        mod = importlib.import_module(m)
        v = getattr(mod, "__version__", "?")
        if m == "torch":
            v += " cuda " + str(mod.version.cuda) + (" available" if mod.cuda.is_available() else " NOT available")
        out.append("%s %s" % (m, v))
    except Exception as e:
        out.append("%s missing (%s)" % (m, type(e).__name__))
print(", ".join(out))
PY
)
    pf "python3 $py ($("$py" -c 'import platform; print(platform.python_version())' 2>/dev/null)): $pymods"
else
    pf "python3: MISSING (the summary is written as a plain list; the Python steps are skipped)"
fi
export PATH
nvcc=$(first_exe "$(command -v nvcc 2>/dev/null)" /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc || true)
cuda_root=""
if [ -n "$nvcc" ]; then
    cuda_root=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
    pf "nvcc $nvcc: $("$nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p'), toolkit $cuda_root"
else
    pf "nvcc: MISSING (not on PATH, not in /usr/local/cuda): the CUDA parts cannot build"
fi
pf "gcc $(gcc -dumpfullversion 2>/dev/null || echo MISSING), g++ $(g++ -dumpfullversion 2>/dev/null || echo MISSING)"
cmake_exe=$(command -v cmake || true)
ctest_exe=$(command -v ctest || true)
cmake_ver=$([ -n "$cmake_exe" ] && "$cmake_exe" --version | sed -n 's/cmake version //p' | head -n 1)
pf "cmake ${cmake_exe:-MISSING} ${cmake_ver:-}"
generator=()
if command -v ninja >/dev/null; then
    generator=(-G Ninja)
    pf "ninja $(command -v ninja) $(ninja --version): generator Ninja"
elif command -v make >/dev/null; then
    generator=(-G "Unix Makefiles")
    pf "ninja: not here; make $(command -v make): generator Unix Makefiles"
elif [ -x "$deps/bin/ninja" ] && "$deps/bin/ninja" --version >/dev/null 2>&1; then
    generator=(-G Ninja -DCMAKE_MAKE_PROGRAM="$deps/bin/ninja")
    pf "ninja, make: not here; the carried $deps/bin/ninja $("$deps/bin/ninja" --version): generator Ninja"
else
    pf "ninja, make: MISSING, and no carried ninja runs: nothing can build"
fi
pf "pkg-config $(command -v pkg-config || echo 'not here (not needed: the dependencies come from the carried prefix)')"
deps_args=()
if [ -d "$deps" ]; then
    if deps_line=$("$root/ci/gpu-deps-check.sh" "$deps" 2>&1); then
        deps_args=(-DVRAMKIT_DEPS_PREFIX="$deps")
        pf "$deps_line"
    else
        pf "carried dependencies UNUSABLE: $deps_line; trying the system's"
    fi
else
    pf "no carried $deps (ci/gpu-deps-fetch.sh makes it; carry it): trying the system's packages"
fi
if [ ${#deps_args[@]} -eq 0 ] && ! { [ -f /usr/include/cjson/cJSON.h ] && [ -f /usr/include/criterion/criterion.h ]; }; then
    pf "the system has no cJSON/Criterion headers either: nothing to build with"
    generator=()
fi
# NCCL: the header and the library, best from one place (the toolkit, PyTorch's wheel), the
# carried header with a library found elsewhere last; without both the backend is left out
nccl_args=(-DVRAMKIT_NCCL=OFF)
nccl_h=""
nccl_lib=""
wheel_nccl=$([ -n "$py" ] && "$py" - 2>/dev/null <<'PY'
import glob, os, site
roots = site.getsitepackages() + [site.getusersitepackages()]
for r in roots:
    for lib in sorted(glob.glob(os.path.join(r, "nvidia", "**", "libnccl.so*"), recursive=True)):
        inc = glob.glob(os.path.join(os.path.dirname(os.path.dirname(lib)), "include", "nccl.h"))
        print(lib + " " + (os.path.dirname(inc[0]) if inc else ""))
        raise SystemExit
PY
)
for cand in "${cuda_root:+$cuda_root/include}|$(ls "${cuda_root:-/nonexistent}"/lib*/libnccl.so* "${cuda_root:-/nonexistent}"/targets/*/lib/libnccl.so* 2>/dev/null | head -n 1)" \
            "${wheel_nccl#* }|${wheel_nccl%% *}" \
            "/usr/include|$(ldconfig -p 2>/dev/null | awk '/libnccl\.so/{print $NF; exit}')" \
            "$deps/nccl/include|${wheel_nccl%% *}"; do
    inc=${cand%%|*}
    lib=${cand#*|}
    if [ -n "$inc" ] && [ -f "$inc/nccl.h" ] && [ -n "$lib" ] && [ -f "$lib" ]; then
        nccl_h=$inc
        nccl_lib=$lib
        break
    fi
done
if [ -n "$nccl_h" ] && [ -n "$nvcc" ]; then
    nccl_args=(-DVRAMKIT_NCCL=ON -DVRAMKIT_NCCL_INCLUDE_DIR="$nccl_h" -DVRAMKIT_NCCL_LIBRARY="$nccl_lib")
    hv=$(awk '/#define NCCL_(MAJOR|MINOR|PATCH) /{printf "%s%s", (n++ ? "." : ""), $3}' "$nccl_h/nccl.h")
    lv=$([ -n "$py" ] && "$py" -c "import ctypes,sys; l=ctypes.CDLL(sys.argv[1]); v=ctypes.c_int(); l.ncclGetVersion(ctypes.byref(v)); print(v.value)" "$nccl_lib" 2>/dev/null)
    pf "NCCL: nccl.h $hv in $nccl_h, library $nccl_lib (version code ${lv:-?}): the NCCL backend and hw_nccl are built"
else
    pf "NCCL: no nccl.h with a libnccl (toolkit, PyTorch's nvidia wheel, the system, the carried header): the NCCL backend and hw_nccl are left out"
fi
sanitizer=$(first_exe "$(command -v compute-sanitizer 2>/dev/null)" "${cuda_root:+$cuda_root/bin/compute-sanitizer}" \
            "${cuda_root:+$cuda_root/compute-sanitizer/compute-sanitizer}" /usr/local/cuda/bin/compute-sanitizer \
            /usr/local/cuda/compute-sanitizer/compute-sanitizer /opt/nvidia/*/compute-sanitizer/compute-sanitizer || true)
pf "compute-sanitizer ${sanitizer:-not here: the sanitizer step is skipped}"
if [ ${#generator[@]} -eq 0 ] || [ -z "$cmake_exe" ] || [ -z "$nvcc" ]; then
    echo "preflight|nothing to build with (see gpu.log)|$(elapsed)" >>"$steps"
    summarize
    cat "$out/SUMMARY.md"
    rm -rf "$work"
    exit 3
fi
echo "preflight|ok|$(elapsed)" >>"$steps"

# ---- configure and build: only what the GPU steps use -----------------------------------------
cd "$root" || exit 1
step configure 120 "$cmake_exe" -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$cap" -DVRAMKIT_WERROR=OFF -DVRAMKIT_MPI=OFF \
    -DVRAMKIT_HW_TIMEOUT="$hw_timeout" ${py:+-DPython3_EXECUTABLE="$py"} "${deps_args[@]}" "${nccl_args[@]}"
configured=$?
built=1
if [ "$configured" -eq 0 ]; then
    keep_going=(-k 0)
    [ "${generator[1]}" = "Unix Makefiles" ] && keep_going=(-k)
    step build 300 "$cmake_exe" --build "$build" --target vramkit_gpu -j"$jobs" -- "${keep_going[@]}"
    built=$?
fi

# ---- the GPU steps ---------------------------------------------------------------------------
# ctest's --stop-time: the wall-clock time (local) at which every test still running is ended,
# 20 s before the deadline, so ctest itself writes the junit record of what did not finish
stop_at() { date -d "@$((start_all + deadline - 20))" +%H:%M:%S; }
bench=$build/test/bench
if [ "$configured" -eq 0 ]; then
    # hw_large last: it is the slowest and the least likely to find something new
    step hw-tests 600 "$ctest_exe" --test-dir "$build" -L hw -E '^hw_large$' --output-on-failure \
        --stop-time "$(stop_at)" --output-junit "$out/hw-junit.xml.main"
    step hw-large 240 "$ctest_exe" --test-dir "$build" -R '^hw_large$' --output-on-failure \
        --stop-time "$(stop_at)" --output-junit "$out/hw-junit.xml.large"
    # one junit file for the summary (and the 8-file limit): the two runs' test cases together
    if [ -n "$py" ]; then
        "$py" "$root/ci/gpu-summary.py" --merge-junit "$out/hw-junit.xml" "$out/hw-junit.xml.main" \
            "$out/hw-junit.xml.large" >>"$log" 2>&1
    fi
    rm -f "$out/hw-junit.xml.main" "$out/hw-junit.xml.large"
    summarize
fi
if [ "$sim" = 1 ]; then
    for s in python-tests sanitizer bench-kernels torch-kernels stream-gpu python-stream python-cpu; do
        skip "$s" "simulation: no GPU"
    done
elif [ "$configured" -ne 0 ]; then
    for s in python-tests sanitizer bench-kernels torch-kernels stream-gpu python-stream python-cpu; do
        skip "$s" "not configured"
    done
else
    has_torch=0
    [ -n "$py" ] && "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1 && has_torch=1
    # the Python package over this build: its tests (test_gpu.py hands batches to torch on cuda:0)
    if [ -n "$py" ] && "$py" -c 'import h5py, numpy, pytest' >/dev/null 2>&1; then
        step python-tests 120 env VRAMKIT_PYTHON="$py" "$root/python/tests/run.sh" "$build"
    else
        skip python-tests "no h5py, numpy and pytest in python3"
    fi
    if [ -n "$sanitizer" ]; then
        step sanitizer 120 "$root/ci/gpu-sanitize.sh" "$sanitizer" "$build"
    else
        skip sanitizer "no compute-sanitizer"
    fi
    step bench-kernels 90 sh -c "'$bench/bench_kernels' --json >'$out/kernels.json'"
    if [ "$has_torch" = 1 ]; then
        step torch-kernels 120 sh -c "'$py' '$root/test/bench/bench_torch_kernels.py' --ours '$out/kernels.json' --json >'$out/torch_kernels.json'"
    else
        skip torch-kernels "no PyTorch with CUDA"
    fi
    # in order, shuffled, then in order with a reader a CPU (the default stops at 8): an A/B of
    # the readers on this machine
    step stream-gpu 150 sh -c "'$bench/bench_stream' --device cuda:0 --size '$stream_size' --budget 4GiB --epochs 3 >'$out/stream.txt' && '$bench/bench_stream' --device cuda:0 --size '$stream_size' --budget 4GiB --epochs 2 --shuffle >>'$out/stream.txt' && '$bench/bench_stream' --device cuda:0 --size '$stream_size' --budget 4GiB --epochs 2 --readers '$jobs' >>'$out/stream.txt'"
    h5=$(sed -n 's/^file *\([^:]*\):.*/\1/p' "$out/stream.txt" 2>/dev/null | head -n 1)
    if [ -n "$h5" ] && [ -f "$h5" ] && [ "$has_torch" = 1 ] && "$py" -c 'import h5py' 2>/dev/null; then
        # vramkit.stream from Python, then baseline_h5py_torch.py (user-report 004's loader) on the
        # same file with the same chunks (the budget's half), 3 epochs each
        step python-stream 150 sh -c "PYTHONPATH='$root/python' VRAMKIT_LIBRARY='$build/driver/libvramkit_py.so' '$py' '$root/test/bench/bench_python_stream.py' --file '$h5' --device cuda:0 --budget 4GiB --epochs 3 --json >'$out/python_stream.json'"
    else
        skip python-stream "no streamed file, or no torch with CUDA and h5py"
    fi
    # issue 30's CPU figure on a machine with cores to spare for the readers: vramkit.stream at
    # its defaults against the h5py chunk loader and DataLoader(num_workers=2), no GPU involved
    if [ -n "$py" ] && "$py" -c 'import h5py, numpy' >/dev/null 2>&1; then
        step python-cpu 150 sh -c "PYTHONPATH='$root/python' VRAMKIT_LIBRARY='$build/driver/libvramkit_py.so' '$py' '$root/test/bench/bench_python_stream.py' --device cpu --json >'$out/python_cpu.json'"
    else
        skip python-cpu "no h5py and numpy in python3"
    fi
fi

# ---- summary ------------------------------------------------------------------------------
summarize
summary_rc=$?
rm -rf "$work"
cat "$out/SUMMARY.md"
echo "ci/gpu.sh: logs and summary in $out ($(elapsed) s)"
exit "$summary_rc"
