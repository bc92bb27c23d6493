#!/bin/bash
# vg.sh — valgrind memcheck over one command and every process it starts.
#
#   vg.sh run LOGDIR CMD [ARGS...]    runs CMD under valgrind, one log per process in LOGDIR
#                                     (exit: CMD's own; replaces this shell)
#   vg.sh check LOGDIR                 0 when every log reports 0 errors; else prints them, 1
#   vg.sh test [--exit N] [--logs DIR] [--skip PATTERNS] CMD [ARGS...]
#                                     run + check: 0 when CMD exits N (default 0) and valgrind
#                                     found nothing; 1 otherwise (the reason on stderr).
#                                     --skip: more programs not to trace (comma list of
#                                     patterns, as --trace-children-skip; also $VG_SKIP)
#
# Why logs and not valgrind's --error-exitcode alone: a Criterion test binary forks a server
# that execs one worker per test (boxfort), and the server ignores a worker's exit code when
# the test itself passed (Criterion issue #137), so an error valgrind finds in a worker would
# not fail the binary. Every process valgrind traces writes LOGDIR/vg.PID.log and each one's
# "ERROR SUMMARY" is read here. --error-exitcode stays on for a plain program (the vramkit
# command): it turns an error into exit 97, which no case expects.
#
# Traced: every child that execs a program of ours (--trace-children=yes: Criterion's
# workers, vramkit-h5, the attempts' vramkit __guard, vramkit itself run by a test); not
# traced: system programs (/bin, /usr/bin: sh, true, sleep; their errors are not ours) and
# CPython (the Python tests' interpreter, not our code). A process killed by SIGKILL (the
# isolation's guards are, and the HDF5 child at close) or one that execs an untraced program
# (vramkit __exec) writes no summary and is not leak-checked, but every error it met before is
# in its log, and counted.
# Leaks: only "definitely lost" blocks are errors (--errors-for-leak-kinds=definite); what a
# process still holds at exit (caches, a forked child's copy of its parent) is not.
# Suppressions: vramkit.supp beside this script (and $VG_SUPP, a file more), third-party code
# only, each one justified.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)

vg_opts=(--tool=memcheck --trace-children=yes
         "--trace-children-skip=/bin/*,/usr/bin/*,/usr/local/bin/*,*python*${VG_SKIP:+,$VG_SKIP}"
         --track-origins=yes --leak-check=full --show-leak-kinds=definite
         --errors-for-leak-kinds=definite --error-exitcode=97 --num-callers=30
         --suppressions="$here/vramkit.supp" --gen-suppressions=all)
# a case's own suppressions (cli.sh: hdf5-malformed.supp for the malformed HDF5 corpus)
[ -n "${VG_SUPP:-}" ] && vg_opts+=(--suppressions="$VG_SUPP")

check() {
  local dir=$1 bad=0 n=0 nosum=0 f errs sum
  for f in "$dir"/vg.*.log; do
    [ -e "$f" ] || continue
    n=$((n + 1))
    # an error is in the log as it happens, each with the suppression --gen-suppressions=all
    # writes after it: counted so, a process killed before its summary is checked too
    errs=$(grep -c '<insert_a_suppression_name_here>' "$f")
    sum=$(sed -nE 's/^==[0-9]+== ERROR SUMMARY: ([0-9]+) errors.*/\1/p' "$f" | tail -1)
    if [ -z "$sum" ]; then
      nosum=$((nosum + 1)) # killed (SIGKILL), or it exec'd a program not traced
    elif [ "$sum" -gt "$errs" ]; then
      errs=$sum
    fi
    if [ "$errs" != 0 ]; then
      bad=$((bad + 1))
      echo "vg.sh: $errs valgrind error(s) in $(sed -nE 's/^==[0-9]+== Command: //p' "$f" | head -1) ($f):" >&2
      cat "$f" >&2
    fi
  done
  if [ "$n" = 0 ]; then echo "vg.sh: no valgrind log in $dir (did valgrind run?)" >&2; return 1; fi
  echo "vg.sh: $n process(es) checked, $bad with errors, $nosum without a summary (killed, or exec'd an untraced program)" >&2
  [ "$bad" = 0 ]
}

case "${1:-}" in
  run)
    [ $# -ge 3 ] || { echo "usage: vg.sh run LOGDIR CMD [ARGS...]" >&2; exit 2; }
    mkdir -p "$2" || exit 2
    logdir=$(cd "$2" && pwd); shift 2
    exec valgrind "${vg_opts[@]}" --log-file="$logdir/vg.%p.log" "$@" ;;
  check)
    [ $# -eq 2 ] || { echo "usage: vg.sh check LOGDIR" >&2; exit 2; }
    check "$2"; exit $? ;;
  test)
    shift
    want=0 logs=""
    while [ $# -gt 0 ]; do
      case "$1" in
        --exit) want=$2; shift 2 ;;
        --logs) logs=$2; shift 2 ;;
        --skip) export VG_SKIP=${VG_SKIP:+$VG_SKIP,}$2; shift 2 ;;
        *) break ;;
      esac
    done
    [ $# -ge 1 ] || { echo "usage: vg.sh test [--exit N] [--logs DIR] [--skip PATTERNS] CMD [ARGS...]" >&2; exit 2; }
    [ -n "$logs" ] || logs=$(mktemp -d /tmp/vramkit-vg-XXXXXX)
    rm -rf "$logs" && mkdir -p "$logs" || exit 2
    "$0" run "$logs" "$@"
    rc=$?
    ok=0
    check "$logs" || ok=1
    if [ "$rc" != "$want" ]; then
      echo "vg.sh: $1 exited $rc, expected $want" >&2
      ok=1
    fi
    exit $ok ;;
  *)
    sed -n '2,12p' "$0" >&2; exit 2 ;;
esac
