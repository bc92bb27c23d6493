#!/bin/bash
# ci/gpu-deps-fetch.sh [DIR] — on a Debian build machine: make DIR (default .gpu-deps, git-ignored)
# hold what the GPU machine lacks for ci/gpu.sh, as plain files that a device call carries
# (`carry: [".gpu-deps"]`) and that need no unpacking, no pkg-config and no h5cc there:
#   include/           the headers of HDF5 (serial), Criterion and cJSON
#   lib/               libhdf5_serial, libcriterion, libcjson and every library they load, each
#                      under its soname, RUNPATH $ORIGIN (a library finds its neighbours here
#                      and nowhere else first); glibc's own libraries are not carried
#   nccl/include/      nccl.h from this machine's CUDA toolkit (when it has one), in case the
#                      GPU machine's NCCL comes without its header
#   bin/ninja          a fallback build tool (Debian's ninja-build), used only when the GPU
#                      machine has neither ninja nor make
#   MANIFEST           the packages and versions, the glibc version the libraries need, and a
#                      sha256 of every file (ci/gpu-deps-check.sh verifies it there)
# cmake/VramkitDeps.cmake turns DIR into the imported targets the build links
# (-DVRAMKIT_DEPS_PREFIX=DIR). The packages come from apt (`apt-get download`, nothing is
# installed); the closure is computed from the libraries' own DT_NEEDED entries and the script
# fails when one of them is neither carried nor part of glibc. About 25 MB; it counts toward
# the device call's 64 MiB. Idempotent: the downloads are cached under $VRAMKIT_DEB_CACHE
# (default ~/.cache/vramkit/debs).
# Needs: apt-get, dpkg-deb, readelf (binutils), sha256sum. patchelf is taken from its own
# Debian package into the cache when it is not installed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/.gpu-deps}
cache=${VRAMKIT_DEB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vramkit/debs}
arch=$(dpkg --print-architecture)
[ "$arch" = amd64 ] || { echo "gpu-deps-fetch: the GPU machine is x86-64; this is $arch" >&2; exit 3; }
for tool in apt-get apt-cache dpkg-deb readelf sha256sum; do
    command -v "$tool" >/dev/null || { echo "gpu-deps-fetch: $tool is missing (Debian: apt-get install binutils dpkg apt)" >&2; exit 3; }
done

# The libraries the build links (their packages' dependencies come along), the packages that
# hold their headers (taken alone), the tools.
runtime_roots="libhdf5-103-1 libcriterion3 libcjson1"
header_pkgs="libhdf5-dev libcriterion-dev libcjson-dev"
tool_pkgs="ninja-build"
# glibc's libraries and the compiler's runtime: every machine that runs gcc has them, and a
# carried copy would have to match the loader
not_carried_pkgs="libc6 libgcc-s1 gcc-12-base gcc-13-base gcc-14-base libstdc++6"
glibc_sonames="libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 libresolv.so.2 libutil.so.1
               libanl.so.1 ld-linux-x86-64.so.2 libgcc_s.so.1 libstdc++.so.6"

mkdir -p "$cache"
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -print -quit 2>/dev/null)" ]; then
    apt-get update -qq
fi
# the runtime closure by the packages' Depends (first alternative, no virtual packages)
# shellcheck disable=SC2086
closure=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
          --no-enhances $runtime_roots 2>/dev/null | grep -v '^ ' | grep -v '^<' | sort -u)
pkgs=""
for p in $closure; do
    case " $not_carried_pkgs " in *" $p "*) continue ;; esac
    pkgs="$pkgs $p"
done
pkgs="$pkgs $header_pkgs $tool_pkgs"
command -v patchelf >/dev/null || pkgs="$pkgs patchelf"

deb_of() { # the cached .deb of a package (the newest version), or nothing
    local f
    for f in "$cache/${1}_"*"_${arch}.deb" "$cache/${1}_"*_all.deb; do if [ -f "$f" ]; then echo "$f"; fi; done | sort -V | tail -n 1
}
fetch() { # download a package into the cache unless its .deb is there
    [ -n "$(deb_of "$1")" ] && return 0
    (cd "$cache" && apt-get download -qq -o APT::Sandbox::User=root "$1" >/dev/null) ||
        { echo "gpu-deps-fetch: apt-get download $1 failed" >&2; exit 3; }
}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
manifest_pkgs=""
for p in $pkgs; do
    fetch "$p"
    deb=$(deb_of "$p")
    mkdir -p "$stage/$p"
    dpkg-deb -x "$deb" "$stage/$p"
    manifest_pkgs="$manifest_pkgs$(dpkg-deb --showformat='${Package} ${Version}' -W "$deb")
"
done
patchelf=$(command -v patchelf || echo "$stage/patchelf/usr/bin/patchelf")

rm -rf "$dir"
mkdir -p "$dir/include" "$dir/lib" "$dir/bin"

# ---- libraries: the closure of the three by DT_NEEDED, each file under its soname ----------
declare -A by_soname=()
for p in $closure; do
    [ -d "$stage/$p" ] || continue
    while IFS= read -r -d '' f; do
        [ -L "$f" ] && continue
        so=$(readelf -d "$f" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
        [ -n "$so" ] && by_soname[$so]=$f
    done < <(find "$stage/$p" -path '*/lib/*' -name 'lib*.so*' -type f -print0)
done
needed_of() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
queue="libhdf5_serial.so.103 libcriterion.so.3 libcjson.so.1"
declare -A carried=()
while [ -n "$queue" ]; do
    set -- $queue
    so=$1
    shift
    queue="$*"
    [ -n "${carried[$so]:-}" ] && continue
    case " $(echo $glibc_sonames) " in *" $so "*) continue ;; esac
    src=${by_soname[$so]:-}
    [ -n "$src" ] || { echo "gpu-deps-fetch: $so is needed but no fetched package holds it" >&2; exit 3; }
    cp "$src" "$dir/lib/$so"
    chmod u+w "$dir/lib/$so"
    "$patchelf" --set-rpath '$ORIGIN' "$dir/lib/$so"
    carried[$so]=1
    for n in $(needed_of "$src"); do queue="$queue $n"; done
done

# ---- headers, nccl.h, ninja ---------------------------------------------------------------------
cp -r "$stage/libhdf5-dev/usr/include/hdf5/serial/." "$dir/include/"
cp -r "$stage/libcriterion-dev/usr/include/criterion" "$dir/include/"
cp -r "$stage/libcjson-dev/usr/include/cjson" "$dir/include/"
cp "$stage/ninja-build/usr/bin/ninja" "$dir/bin/ninja"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
nccl_h=$(dirname "$(dirname "$(readlink -f "$nvcc" 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")")/include/nccl.h
if [ -f "$nccl_h" ]; then
    mkdir -p "$dir/nccl/include"
    cp "$nccl_h" "$dir/nccl/include/"
fi

# ---- the manifest -------------------------------------------------------------------------------
glibc_need=$(for f in "$dir"/lib/*; do readelf -V "$f" 2>/dev/null; done | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' |
             sort -V | tail -n 1)
{
    echo "# ci/gpu-deps-fetch.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME")"
    echo "glibc >= $glibc_need"
    echo "libraries: $(cd "$dir/lib" && ls | paste -sd' ')"
    printf '%s' "$manifest_pkgs" | sed 's/^/package: /'
    echo "# sha256 of every file"
    (cd "$dir" && find . -type f ! -name MANIFEST | sort | xargs sha256sum)
} >"$dir/MANIFEST"
echo "gpu-deps-fetch: $dir: $(du -sh "$dir" | cut -f1), ${#carried[@]} libraries (glibc >= $glibc_need), $(ls "$dir/include" | wc -l) include entries$([ -f "$dir/nccl/include/nccl.h" ] && echo ', nccl.h')"
