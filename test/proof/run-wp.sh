#!/bin/sh
# run-wp.sh FILE INCLUDE_DIR TIMEOUT [PAR] — prove FILE with Frama-C WP + RTE, fail on any
# unproved goal. Options of proof_<name>.opts beside FILE are appended. PAR: provers at a
# time (default 2). A goal that overruns its timeout because the machine is overloaded (more
# provers than cores: two proofs side by side plus other builds) is reported by WP as
# "Failed: Unknown error", not as a timeout: keep every goal far below TIMEOUT.
set -eu
src=$1; inc=$2; timeout=${3:-20}; par=${4:-2}
opts_file=${src%.c}.opts
extra=""
if [ -f "$opts_file" ]; then extra=$(grep -v '^#' "$opts_file" | tr '\n' ' '); fi
# why3 needs to know the provers once per machine/user
[ -f "${HOME:-/root}/.why3.conf" ] || why3 config detect >/dev/null 2>&1 || true
log=$(basename "${src%.c}").log
# shellcheck disable=SC2086
frama-c -cpp-extra-args="-I$inc -D__FRAMAC_PROOF__" -machdep x86_64 \
  -wp -wp-rte -warn-unsigned-overflow -warn-signed-overflow \
  -wp-prover z3 -wp-timeout "$timeout" -wp-par "$par" \
  $extra "$src" \
  -then -report-classify -report-unclassified-unknown ERROR -report-unclassified-warning ERROR \
  >"$log" 2>&1 && rc=0 || rc=$?
grep -E '^\[wp\] Proved goals|^\[report\]|ERROR|Failed|Unknown|Timeout' "$log" || true
if [ "$rc" -ne 0 ]; then
  echo "proof FAILED for $src (full log: $(pwd)/$log)"
  tail -40 "$log"
  exit 1
fi
if ! grep -q '^\[wp\] Proved goals' "$log"; then
  echo "proof produced no goals for $src: nothing was proved"
  exit 1
fi
echo "proof passed: $src"
