#!/bin/sh
# profile.sh LOG... — where a proof's time goes, per function: the goals WP made for it and
# the seconds its simplifier (Qed) spent on them, plus the prover's seconds on goals the
# cache did not hold. LOG is a run's log (build/test/proof/proof_<name>.log). Qed runs on
# every goal, cached or not, so its time is what a replay of the cache still costs: the
# functions at the top are the ones to split, to take structs by value, or to run alone.
set -eu
for log in "$@"; do
  awk -v name="$log" '
    function secs(s) { return s ~ /ms$/ ? substr(s, 1, length(s) - 2) / 1000 : substr(s, 1, length(s) - 1) }
    /^\[wp\] \[[^]]*\] Goal typed_/ {
      g = $0; sub(/.*Goal typed_(ref_)?/, "", g); sub(/ .*/, "", g)
      # the function: the goal name up to the kind of property
      f = g; sub(/_(assert|ensures|requires|assigns|call|loop|exits|terminates|variant|invariant|complete|disjoint|check|lemma|post|pre|wp_typed)(_|$).*/, "", f)
      q = 0; p = 0
      if (match($0, /\(Qed:[0-9.]+m?s\)/)) q = secs(substr($0, RSTART + 5, RLENGTH - 6))
      else if ($2 == "[Qed]" && match($0, /\([0-9.]+m?s\)/)) q = secs(substr($0, RSTART + 1, RLENGTH - 2))
      if ($2 != "[Qed]" && $0 !~ /cached/ && match($0, /\) \([0-9.]+m?s\)/)) p = secs(substr($0, RSTART + 3, RLENGTH - 4))
      n[f]++; qed[f] += q; prv[f] += p; tq += q; tp += p; tn++
    }
    END {
      printf "%s: %d goals, Qed %.1f s, prover (not cached) %.1f s\n", name, tn, tq, tp
      for (f in n) printf "  %7.1f s Qed %7.1f s prover %5d goals  %s\n", qed[f], prv[f], n[f], f | "sort -rn | head -15"
    }' "$log"
done
