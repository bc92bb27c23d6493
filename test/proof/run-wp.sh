#!/bin/sh
# run-wp.sh FILE INCLUDE_DIR TIMEOUT [PAR] — prove FILE with Frama-C WP + RTE, fail on any
# unproved goal. Options of proof_<name>.opts beside FILE are appended. PAR: goals handed to
# the provers at a time (-wp-par; default 2 when z3 proves goals, 16 when the cache answers
# them: see below). A goal that overruns its timeout because the machine is overloaded (more
# provers than cores: two proofs side by side plus other builds) is reported by WP as
# "Failed: Unknown error", not as a timeout: keep every goal far below TIMEOUT.
#
# WP's cache (README.md, "The cache"): results of the provers kept in test/proof/wp-cache,
# one file per goal, named by a digest of the goal itself. VRAMKIT_WP_CACHE picks the mode:
# replay (the default: a goal found there is not proved again, any other goal is; nothing is
# written), update (as replay, and new results are written there: after a change of a
# proved header, commit what it adds), none (every goal to the prover), offline (no prover
# at all: a goal not found fails).
set -eu
src=$1; inc=$2; timeout=${3:-20}
here=$(cd "$(dirname "$0")" && pwd)
opts_file=${src%.c}.opts
extra=""
if [ -f "$opts_file" ]; then extra=$(grep -v '^#' "$opts_file" | tr '\n' ' '); fi
# Each proof proves its own functions (its -wp-fct list) and uses the contracts of what they
# call (base.h's checked arithmetic, another header's functions, or this header's functions
# of another part): WP proves a callee's precondition at each call site, as a goal of the
# run that proves the caller. A callee whose callers are not all in this run keeps the
# status "unknown" here (its other call sites are goals of other runs), so the report's
# unknowns are reviews, not errors, and instead every goal of the run must be proved
# ("Proved goals: N / N", checked below). check-lists.sh checks that every function of a
# proved header is in some run's list, so every call site is a goal somewhere.
unknown=REVIEW
mode=${VRAMKIT_WP_CACHE:-replay}
cache_dir=${VRAMKIT_WP_CACHE_DIR:-$here/wp-cache}
# PAR. WP's scheduler starts at most PAR goals, then sleeps 50 ms before it looks again; a
# goal the cache answers takes no prover time, so with PAR 2 a replay spent about 40% of its
# wall time asleep (proof_attempt: 62 s, 29 s of CPU). Replaying (or offline), 16 at a time:
# 34 s. Only a goal missing from the cache still starts z3, so after a change of a proved
# header record the cache first (record-cache.sh: update mode, 2 at a time), or a replay may
# run many provers at once on 2 cores (see TIMEOUT above).
case $mode in
  none|update) par=${4:-2} ;;
  *) par=${4:-16} ;;
esac
case $mode in
  none) cache="" ;;
  replay|update|offline) mkdir -p "$cache_dir"; cache="-wp-cache $mode -wp-cache-dir $cache_dir" ;;
  *) echo "run-wp.sh: VRAMKIT_WP_CACHE=$mode is not none, replay, update or offline"; exit 2 ;;
esac
# why3 needs to know the provers once per machine/user
[ -f "${HOME:-/root}/.why3.conf" ] || why3 config detect >/dev/null 2>&1 || true
log=$(basename "${src%.c}").log
# shellcheck disable=SC2086
frama-c -cpp-extra-args="-I$inc -D__FRAMAC_PROOF__" -machdep x86_64 \
  -wp -wp-rte -warn-unsigned-overflow -warn-signed-overflow \
  -wp-prover z3 -wp-timeout "$timeout" -wp-par "$par" $cache \
  $extra "$src" \
  -then -report-classify -report-unclassified-unknown $unknown -report-unclassified-warning ERROR \
  >"$log" 2>&1 && rc=0 || rc=$?
grep -E '^\[wp\] Proved goals|^\[wp\] \[Cache\]|^\[report\]|ERROR|Failed|Unknown|Timeout' "$log" || true
if [ "$rc" -ne 0 ]; then
  echo "proof FAILED for $src (full log: $(pwd)/$log)"
  tail -40 "$log"
  exit 1
fi
goals=$(sed -n 's/^\[wp\] Proved goals: *\([0-9]*\) *\/ *\([0-9]*\).*/\1 \2/p' "$log" | tail -1)
if [ -z "$goals" ]; then
  echo "proof produced no goals for $src: nothing was proved"
  exit 1
fi
set -- $goals
if [ "$1" -ne "$2" ] || [ "$2" -eq 0 ]; then
  echo "proof FAILED for $src: $1 of $2 goals proved (full log: $(pwd)/$log)"
  grep -E 'Goal .*: (Unknown|Timeout|Failed)' "$log" | head -20
  exit 1
fi
echo "proof passed: $src"
