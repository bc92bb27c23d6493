#!/bin/bash
# cli.sh — the vramkit command under valgrind memcheck (vg.sh) on a table of good and bad
# inputs: each run must exit with its documented code AND valgrind must find no error in
# vramkit or in any process of ours it starts (vramkit-h5, the attempts' shim and guard).
#
# usage: cli.sh --vramkit EXE [--fixtures-tool EXE] [--work DIR] [--only REGEX] [--except REGEX]
#               [--jobs N]
#
# The table, three parts, every case in the golden tests' form (NAME TAGS COMMAND, run under
# bash in an empty directory with $VK, $FIX, $SRC, $T as test/golden/golden.sh gives them):
#   1. every case of test/golden/cases.txt; the expected exit code is the one recorded in
#      test/golden/expected/NAME.txt (so a case's code is stated once, there), but for the
#      try and run cases that start attempts (below: valgrind cannot start them);
#   2. cli_cases.txt beside this script: `NAME TAGS EXIT COMMAND`, what the golden table
#      lacks (truncated and garbage files of every format, empty files, bad options);
#   3. every file of the fuzz corpora of the model readers (test/fuzz/corpus/{safetensors,
#      gguf,config}) through `vramkit estimate`: bad_* exit 2 with an error line that names the
#      file, the others 0 or 2 (on an assumed GPU that fits them all: hdr_* hold headers
#      without their data, a few ok_* configs are not modelled), and of the HDF5 corruption
#      corpus (corpus/h5, the datasets its seeds.txt names) through `vramkit chunks` and
#      `vramkit stream --verify`: 0, 2 or 3 (which one a damaged file gets is HDF5's to say,
#      and differs under valgrind, where its reads past a buffer do not fault; never a signal,
#      never 1), with libhdf5's own invalid reads on them suppressed (hdf5-malformed.supp).
# Exit: 0 every case as expected, 1 a case failed (its reason and valgrind's log printed),
# 2 bad usage.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
golden=$src/test/golden

# ---- one case (run by the loop below through xargs): NAME \t EXPECT \t TAGS \t SAYS \t COMMAND
# (SAYS: what its stderr must contain, or -)
if [ "${1:-}" = --case ]; then
  IFS=$'\t' read -r name expect tags says cmd <<<"$2"
  supp="" # libhdf5's own reads past its buffers on the corpus's malformed files: third-party
  [[ ,$tags, == *,h5corpus,* ]] && supp=$here/hdf5-malformed.supp
  t=$MC_WORK/cases/$name
  rm -rf "$t" && mkdir -p "$t" || exit 2
  (cd "$t" && exec env -i PATH="$PATH" HOME="$t" LC_ALL=C TZ=UTC VK="$MC_WORK/vk" \
      VG_LOGS="$t.vg" FIX="$MC_WORK/fix" SRC="$src" T="$t" VG_SUPP="$supp" \
      timeout 600 bash -c "$cmd" </dev/null >"$t.out" 2>"$t.err")
  rc=$?
  why=""
  case ",$expect," in
    *",$rc,"*|,any,) ;;
    *) why="exited $rc, expected $expect" ;;
  esac
  if [ "$says" != - ] && ! grep -qF -- "$says" "$t.err"; then
    why="${why:+$why; }its error does not name '$says'"
  fi
  if [ ! -d "$t.vg" ]; then
    why="${why:+$why; }vramkit never ran"
  elif ! "$here/vg.sh" check "$t.vg" 2>"$t.vgcheck"; then
    why="${why:+$why; }valgrind found errors"
  fi
  if [ -n "$why" ]; then
    { echo "FAILED $name: $why"
      echo "  \$ $cmd"
      sed 's/^/  stderr: /' "$t.err" | head -20
      cat "$t.vgcheck" 2>/dev/null; } >"$t.fail"
    cat "$t.fail"
    exit 1
  fi
  exit 0
fi

vk="" fixtool="" work="" only="" except="" jobs=2
while [ $# -gt 0 ]; do
  case "$1" in
    --vramkit) vk=$2; shift 2 ;;
    --fixtures-tool) fixtool=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --except) except=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    *) echo "cli.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -x "$vk" ] || { echo "cli.sh: --vramkit '$vk' is not an executable" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "cli.sh: valgrind is not installed" >&2; exit 2; }
vk=$(cd "$(dirname "$vk")" && pwd)/$(basename "$vk")
. "$golden/prepare.sh" # the golden tests' folder: work, fix (corpora, HDF5 fixtures), have_*
golden_prepare "$work" "$fixtool" cli.sh || exit 2
# $VK: vramkit under valgrind, each process's log in the case's own folder
printf '#!/bin/sh\nexec "%s" run "$VG_LOGS" "%s" "$@"\n' "$here/vg.sh" "$vk" >"$work/vk"
chmod +x "$work/vk"

list=$work/list
: >"$list"
skip=0
add() { # NAME EXPECT TAGS COMMAND [SAYS]
  if [ -n "$only" ] && ! [[ $1 =~ $only ]]; then return; fi
  if [ -n "$except" ] && [[ $1 =~ $except ]]; then return; fi
  if [[ ,$3, == *,h5,* ]] && [ $have_h5 = 0 ]; then skip=$((skip + 1)); return; fi
  if [[ ,$3, == *,nogpu,* ]] && [ $have_gpu = 1 ]; then skip=$((skip + 1)); return; fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${5:--}" "$4" >>"$list"
}
# 1. the golden table, each case's exit code as recorded
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in ''|'#'*) continue ;; esac
  name=${line%% *}; rest=${line#* }
  tags=${rest%% *}; cmd=${rest#* }
  exp=$(sed -n '2s/^exit \([0-9]*\)$/\1/p' "$golden/expected/$name.txt" 2>/dev/null)
  [ -n "$exp" ] || { echo "cli.sh: golden case $name has no recorded exit code" >&2; exit 2; }
  # try and run start each attempt as /proc/self/exe (its shim and guard): under valgrind that
  # is valgrind's own tool program, which valgrind 3.19 can neither trace nor run, so no attempt
  # starts and the exit code is not the command's. Valgrind's errors still count; the attempts'
  # paths are checked through the C API (test_api: the library starts vramkit by its path).
  if [[ $cmd =~ \$VK\ (try|run)\ .*\ --\  ]] && [[ $name != *_bad_* ]]; then exp=any; fi
  add "golden_$name" "$exp" "$tags" "$cmd"
done <"$golden/cases.txt"
# 2. this folder's own cases
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in ''|'#'*) continue ;; esac
  read -r name tags exp cmd <<<"$line"
  add "$name" "$exp" "$tags" "$cmd"
done <"$here/cli_cases.txt"
# 3. the corpora
for f in "$src"/test/fuzz/corpus/{safetensors,gguf,config}/*; do
  kind=$(basename "$(dirname "$f")") base=$(basename "$f")
  case "$kind" in safetensors) file=m.safetensors ;; gguf) file=m.gguf ;; *) file=config.json ;; esac
  case "$base" in bad_*) exp=2 says="vramkit: estimate: $file" ;; *) exp=0,2 says="" ;; esac
  add "corpus_${kind}_$base" "$exp" - \
      "cp \$FIX/corpus/$kind/$base $file && \$VK estimate $file --assume-gpu 4TiB" "$says"
done
while read -r file sets; do
  case "$file" in ''|'#'*) continue ;; esac
  base=${file%.h5} dsets=""
  for d in $sets; do dsets="$dsets --dataset $d"; done
  add "corpus_h5_chunks_$base" 0,2,3 h5corpus "\$VK chunks \$FIX/corpus/h5/$file$dsets --budget 1MiB"
  add "corpus_h5_stream_$base" 0,2,3 h5corpus \
      "\$VK stream \$FIX/corpus/h5/$file$dsets --device cpu --budget 1MiB --readers 2 --verify"
done <"$src/test/fuzz/corpus/h5/seeds.txt"

n=$(wc -l <"$list")
echo "cli.sh: $n cases under valgrind, $jobs at a time ($skip skipped on this machine)"
export MC_WORK=$work
xargs -d '\n' -P "$jobs" -n 1 "$0" --case <"$list"
failed=$(find "$work/cases" -maxdepth 1 -name '*.fail' | wc -l)
echo "cli.sh: $((n - failed)) passed, $failed failed, of $n cases"
[ "$failed" = 0 ]
