#!/bin/bash
# ci/gpu-deps-check.sh [DIR] — on the GPU machine (ci/gpu.sh's preflight runs it): is the carried
# folder that ci/gpu-deps-fetch.sh made (default .gpu-deps) whole and usable here? Checks every
# file against the MANIFEST's sha256 (a cut transfer shows), this machine's glibc against the
# version the libraries need, and that the loader resolves every library's dependencies from
# the folder or from glibc (ldd: no "not found"). Prints one line per finding; the last line
# says ok or what is wrong.
# Exit: 0 usable; 3 missing, damaged or unusable here (the line names the file or the need).
set -uo pipefail
dir=${1:-.gpu-deps}
fail() { echo "gpu-deps: $*" >&2; exit 3; }
[ -f "$dir/MANIFEST" ] || fail "$dir/MANIFEST is missing: run ci/gpu-deps-fetch.sh where apt works and carry $dir"
bad=$(cd "$dir" && sed -n '/^# sha256/,$p' MANIFEST | tail -n +2 | sha256sum --quiet -c - 2>&1 | head -n 3)
[ -z "$bad" ] || fail "$dir differs from its MANIFEST (a partial copy?): $bad"
need=$(sed -n 's/^glibc >= //p' "$dir/MANIFEST")
have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
if [ -n "$need" ] && [ -n "$have" ]; then
    lowest=$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n 1)
    [ "$lowest" = "$need" ] || fail "the carried libraries need glibc >= $need; this machine has $have"
fi
command -v ldd >/dev/null || fail "ldd is missing: cannot check the carried libraries"
for f in "$dir"/lib/*.so*; do
    missing=$(ldd "$f" 2>&1 | grep 'not found' | awk '{print $1}' | paste -sd' ')
    [ -z "$missing" ] || fail "$(basename "$f") needs $missing, neither carried nor on this machine"
done
echo "gpu-deps: $dir ok: $(ls "$dir/lib" | wc -l) libraries resolve (glibc $have >= $need), headers $(ls "$dir/include" | wc -l) entries$([ -f "$dir/nccl/include/nccl.h" ] && echo ', nccl.h carried')"
