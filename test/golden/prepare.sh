# prepare.sh — sourced by golden.sh and test/memcheck/cli.sh: the folder the CLI cases run in.
# golden_prepare WORK FIXTOOL PROG: empties WORK (a temporary folder when ""), copies the fuzz
# corpora into WORK/fix/corpus and, with FIXTOOL (golden_fixtures), writes the HDF5 fixtures
# beside them. Sets work, fix, have_h5 (the fixtures exist) and have_gpu (an NVIDIA driver);
# returns 2 after a line naming PROG when it cannot. Needs $src, the source tree.
golden_prepare() {
  work=$1
  [ -n "$work" ] || work=$(mktemp -d)
  rm -rf "$work" && mkdir -p "$work/fix" "$work/cases" || return 2
  work=$(cd "$work" && pwd)
  fix=$work/fix
  cp -r "$src/test/fuzz/corpus" "$fix/corpus" || return 2
  have_h5=0
  if [ -n "$2" ]; then
    "$2" "$fix" || { echo "$3: the fixtures tool failed" >&2; return 2; }
    have_h5=1
  fi
  have_gpu=0
  [ -e /proc/driver/nvidia/version ] && have_gpu=1
  return 0
}
