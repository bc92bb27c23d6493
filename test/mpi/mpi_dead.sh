#!/bin/bash
# mpi_dead.sh MODE DIR MPIRUN... — runs mpi_dead under mpirun (the rest of the arguments) and
# checks that every surviving rank reported an error (DIR/rank-R.txt: VRAM_E_COMM or
# VRAM_E_TIMEOUT, no failed check) and that the whole run ended: no hang. mpirun itself exits
# non-zero (a rank died, or ranks left without MPI_Finalize): that is expected.
set -u
mode=$1 dir=$2
shift 2
rm -rf "$dir" && mkdir -p "$dir" || exit 1
start=$(date +%s)
timeout -k 5 60 "$@"
rc=$?
took=$(( $(date +%s) - start ))
echo "mpi_dead.sh: mpirun exited $rc after ${took}s ($mode)"
# (mpirun's own status is 128 + the signal of a killed rank: 137 is not a timeout by itself)
if [ "$took" -ge 60 ]; then
  echo "mpi_dead.sh: FAILED: the job hung (killed after 60 s)"
  exit 1
fi
fail=0
for r in 0 1 2; do
  f=$dir/rank-$r.txt
  if [ ! -f "$f" ]; then
    echo "mpi_dead.sh: FAILED: rank $r reported nothing (killed before it saw an error?)"
    fail=1
    continue
  fi
  read -r status secs failures <"$f"
  echo "mpi_dead.sh: rank $r: $status after $secs s, $failures failed checks"
  case "$status" in VRAM_E_COMM|VRAM_E_TIMEOUT) ;; *) fail=1 ;; esac
  [ "$failures" = 0 ] || fail=1
done
[ "$fail" = 0 ] && echo "mpi_dead.sh: ok: every surviving rank got an error, no hang"
exit $fail
