#!/bin/bash
# ci/gpu-sanitize.sh SANITIZER BUILD_DIR — ci/gpu.sh's sanitizer step: NVIDIA's compute-sanitizer
# over the hw tests of the kernels and the streamer, each run held to its own limit (115 s in
# all; a run that reaches it is reported as timed out, and fails the step):
#   memcheck   hw_kernels (every kernel and its variants, the multi-tensor casts and
#              quantisation, at their edges: chunk and launch splits, misaligned starts, bad
#              gather indices; the three loops over every size and the list variants' four
#              combinations are left to the plain run), hw_stream, hw_scaler: out-of-bounds and
#              misaligned device accesses, accesses to freed memory
#   racecheck  the kernels that share memory between threads (the norm's block sums and its
#              last-block finish, the quantisation's row reductions): hazards on shared memory
# API errors are not reported (--report-api-errors no): some tests make them on purpose. Each run
# is one Criterion test at a time (--jobs 1), its children followed (--target-processes all).
# Prints "sanitizer: TOOL TEST: N errors in S s" per run (the summary collects these lines).
# Exit: 0 when every run reported no error and its tests passed; 1 otherwise.
set -uo pipefail
san=${1:?usage: gpu-sanitize.sh SANITIZER BUILD_DIR}
hw=${2:?usage: gpu-sanitize.sh SANITIZER BUILD_DIR}/test/hw
rc_all=0
run() { # run TOOL LIMIT EXE [CRITERION ARGS...]
    local tool=$1 limit=$2 exe=$3
    shift 3
    local t0 log rc errors
    if [ ! -x "$hw/$exe" ]; then
        echo "sanitizer: $tool $exe: not built"
        rc_all=1
        return
    fi
    t0=$(date +%s)
    log=$(mktemp)
    timeout --kill-after=5 "$limit" "$san" --tool "$tool" --report-api-errors no --target-processes all \
        --print-limit 20 --error-exitcode 86 "$hw/$exe" --jobs 1 "$@" >"$log" 2>&1
    rc=$?
    cat "$log"
    # memcheck: "ERROR SUMMARY: N errors"; racecheck: "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)"
    errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p; s/.*RACECHECK SUMMARY: .*(\([0-9]*\) error.*/\1/p' "$log" |
             awk '{s += $1} END {print s + 0}')
    rm -f "$log"
    local what="$errors errors"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then what="$what, TIMED OUT after ${limit}s"; rc_all=1
    elif [ "$rc" -eq 86 ] || [ "$errors" -gt 0 ]; then what="**$errors errors**"; rc_all=1
    elif [ "$rc" -ne 0 ]; then what="$what, but the tests FAILED (exit $rc)"; rc_all=1
    fi
    echo "sanitizer: $tool $exe${1:+ $*}: $what in $(($(date +%s) - t0)) s"
}
heavy='unscale_one_tensor_every_size_dtype_and_alignment|scale_by_device_factors|unscale_many_tensors_any_launch_split'
heavy="$heavy|variants_list_and_norm_every_combination"
# the quantisation's and the list norm's variants read and write what the defaults under
# memcheck do (variants_half_norm_alignment keeps the half-norm variant in); the cast variant's
# loads are new, so variants_cast_wide_stores stays
heavy="$heavy|variants_quant_bits|variants_half_norm_list"
run memcheck 50 hw_kernels --filter "hw_kernels/!($heavy)"
run memcheck 20 hw_stream
run memcheck 15 hw_scaler
run racecheck 30 hw_kernels --filter 'hw_kernels/@(l2norm_does_not_depend_on_alignment|variants_norm_fold_alignment|int8_rows_bit_for_bit)'
exit "$rc_all"
