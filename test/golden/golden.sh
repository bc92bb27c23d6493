#!/bin/bash
# golden.sh — runs every case of cases.txt through the vramkit CLI and compares its exit
# code, stdout and stderr with expected/NAME.txt. What varies from run to run (durations,
# rates, temporary paths) is replaced by placeholders first; nothing else is.
#
# usage: golden.sh --vramkit EXE [--fixtures-tool EXE] [--work DIR] [--only REGEX] [--update]
#   --fixtures-tool  golden_fixtures (writes the HDF5 files); without it, cases tagged h5 skip
#   --update         write expected/ from this run instead of comparing (review the diff!)
#
# cases.txt: one case a line, `NAME TAGS COMMAND...`; TAGS is '-' or a comma list of
#   h5     needs the HDF5 fixtures
#   nogpu  describes a machine without an NVIDIA driver (skipped where one is present)
# The command runs under bash in an empty directory $T (also HOME), with a clean environment
# (PATH, LC_ALL=C, TZ=UTC) and stdin from /dev/null; $VK is vramkit, $FIX the fixtures
# (HDF5 files and test/fuzz/corpus), $SRC the source tree.
# Exit: 0 all equal, 1 a case differs or has no expected output, 2 bad usage.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
vk="" fixtool="" work="" only="" update=0
while [ $# -gt 0 ]; do
  case "$1" in
    --vramkit) vk=$2; shift 2 ;;
    --fixtures-tool) fixtool=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --update) update=1; shift ;;
    *) echo "golden.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -x "$vk" ] || { echo "golden.sh: --vramkit '$vk' is not an executable" >&2; exit 2; }
vk=$(cd "$(dirname "$vk")" && pwd)/$(basename "$vk")
if [ -n "$fixtool" ]; then fixtool=$(cd "$(dirname "$fixtool")" && pwd)/$(basename "$fixtool"); fi
. "$here/prepare.sh"
golden_prepare "$work" "$fixtool" golden.sh || exit 2

# Durations, rates and the paths of this run become placeholders.
normalise() {
  sed -E -e "s#$1#<T>#g" -e "s#$fix#<FIX>#g" -e "s#$src#<SRC>#g" \
      -e 's/[0-9]+\.[0-9]+ s\b/<S> s/g' \
      -e 's/[0-9]+\.[0-9]+ GB\/s/<R> GB\/s/g' \
      -e 's/(waited <S> s of <S> s) \([0-9]+%\)(: .*)?$/\1 (<P>%)<VERDICT>/' \
      -e 's/"(seconds|[a-z_]+_seconds)":[-0-9.eE+]+/"\1":<N>/g' \
      -e 's/"(end_to_end|read|copy)":[-0-9.eE+]+/"\1":<N>/g' \
      -e 's/\(([0-9.]+ [KMGT]?i?B) available\)/(<HOST> available)/g' \
      -e 's/"host_available_bytes":[0-9]+/"host_available_bytes":<HOST>/g'
}

pass=0 fail=0 skip=0 missing=0 n=0
declare -A seen=()
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in ''|'#'*) continue ;; esac
  name=${line%% *}; rest=${line#* }
  tags=${rest%% *}; cmd=${rest#* }
  if [ -n "${seen[$name]:-}" ]; then echo "golden.sh: case '$name' is named twice" >&2; exit 2; fi
  seen[$name]=1
  n=$((n + 1))
  if [ -n "$only" ] && ! [[ $name =~ $only ]]; then continue; fi
  if [[ ,$tags, == *,h5,* ]] && [ $have_h5 = 0 ]; then skip=$((skip + 1)); continue; fi
  if [[ ,$tags, == *,nogpu,* ]] && [ $have_gpu = 1 ]; then skip=$((skip + 1)); continue; fi
  t=$work/cases/$name
  mkdir -p "$t"
  (cd "$t" && exec env -i PATH="$PATH" HOME="$t" LC_ALL=C TZ=UTC VK="$vk" FIX="$fix" SRC="$src" T="$t" \
      timeout 120 bash -c "$cmd" </dev/null >"$t.out" 2>"$t.err")
  rc=$?
  {
    printf '$ %s\nexit %d\n--- stdout\n' "$cmd" "$rc"
    normalise "$t" <"$t.out"
    printf -- '--- stderr\n'
    normalise "$t" <"$t.err"
  } >"$t.txt"
  exp=$here/expected/$name.txt
  if [ $update = 1 ]; then
    mkdir -p "$here/expected" && cp "$t.txt" "$exp"
    pass=$((pass + 1))
  elif [ ! -f "$exp" ]; then
    echo "MISSING $name: no expected/$name.txt (record it with --update)"
    missing=$((missing + 1))
  elif diff -u --label "expected/$name.txt" --label "this run" "$exp" "$t.txt"; then
    pass=$((pass + 1))
  else
    echo "DIFFERS $name"
    fail=$((fail + 1))
  fi
done <"$here/cases.txt"

stale=0
if [ -z "$only" ]; then
  for f in "$here"/expected/*.txt; do
    [ -e "$f" ] || continue
    b=$(basename "$f" .txt)
    if [ -z "${seen[$b]:-}" ]; then echo "STALE expected/$b.txt: no such case"; stale=$((stale + 1)); fi
  done
fi
if [ $update = 1 ]; then
  echo "golden: recorded $pass of $n cases ($skip skipped on this machine)"
  exit 0
fi
echo "golden: $pass equal, $fail differ, $missing missing, $stale stale, $skip skipped, of $n cases"
[ $fail = 0 ] && [ $missing = 0 ] && [ $stale = 0 ]
