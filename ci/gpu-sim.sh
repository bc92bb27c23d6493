#!/bin/bash
# ci/gpu-sim.sh [--fresh] — rehearses the GPU machine's ci/gpu.sh run on this machine, without a
# GPU, before device time is spent on it. It builds (once, cached) a bare root that has only
# what the GPU machine is known to have: `debootstrap --variant=minbase` from Debian's mirror,
# then gcc, g++ and python3 (with venv) and nothing else: no -dev package, no pkg-config, no
# make, no HDF5/Criterion/cJSON; CMake and ninja from PyPI in a virtual environment at
# /opt/torch/.venv whose bin/ comes first on PATH (as PyTorch's python3 does there); the CUDA
# toolkit of this machine bind-mounted read-only at /usr/local/cuda (copied when mounts are
# refused) and not on PATH. Into it goes exactly what a device call carries: the files git
# tracks, the untracked files it does not ignore, and the carried folder (.gpu-deps, made by
# ci/gpu-deps-fetch.sh when missing). There it runs `GPU_SIM=1 ci/gpu.sh`, which does
# everything up to the GPU: preflight, configure, build and link of every GPU target, and each
# hw test, which must reach its "no GPU" skip (exit 77). The last line says what passed.
#   --fresh          rebuild the root from scratch
# Environment: GPU_SIM_ROOT (the cached root, default /var/tmp/vramkit-gpu-sim/root),
# GPU_SIM_SUITE (bookworm), GPU_SIM_MIRROR (http://deb.debian.org/debian), GPU_SIM_LOGS (where
# the run's SUMMARY.md and gpu.log are kept, default /var/tmp/vramkit-gpu-sim/last), CUDA_HOME
# (/usr/local/cuda), GPU_JOBS (the CPUs).
# Needs root (debootstrap, chroot, mount), debootstrap, and the network for the first run.
# Takes about 6 minutes the first time (the root: 3; the build: 3 on 2 cores), then the build alone.
# Not part of the default CI run (ci/test.sh).
# Exit: 0 when everything up to the GPU passed; 1 when something failed; 3 for an environment
# that cannot simulate (not root, no debootstrap, no CUDA toolkit).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
fresh=0
[ "${1:-}" = "--fresh" ] && fresh=1
base=${GPU_SIM_ROOT:-/var/tmp/vramkit-gpu-sim/root}
suite=${GPU_SIM_SUITE:-bookworm}
mirror=${GPU_SIM_MIRROR:-http://deb.debian.org/debian}
logs=${GPU_SIM_LOGS:-/var/tmp/vramkit-gpu-sim/last}
cuda=$(readlink -f "${CUDA_HOME:-/usr/local/cuda}")
jobs=${GPU_JOBS:-$(nproc)}
die() { echo "gpu-sim: $*" >&2; echo "gpu-sim: FAIL: $*"; exit "${2:-1}"; }

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mount)" 3
command -v debootstrap >/dev/null || die "debootstrap is missing (apt-get install debootstrap)" 3
[ -x "$cuda/bin/nvcc" ] || die "no CUDA toolkit at $cuda (set CUDA_HOME)" 3

# ---- the root, cached: rebuilt when its recipe changes ---------------------------------------
recipe="suite=$suite mirror=$mirror packages=gcc,g++,python3,python3-venv pip=cmake,ninja v1"
if [ "$fresh" = 1 ] || [ "$(cat "$base/.vramkit-sim-recipe" 2>/dev/null)" != "$recipe" ]; then
    echo "gpu-sim: building the root in $base ($suite minbase + gcc g++ python3; cmake and ninja from PyPI)"
    rm -rf "$base"
    mkdir -p "$base"
    debootstrap --variant=minbase --include=gcc,g++,python3,python3-venv "$suite" "$base" "$mirror" \
        >"$base.debootstrap.log" 2>&1 || die "debootstrap failed (see $base.debootstrap.log)"
    cp /etc/resolv.conf "$base/etc/resolv.conf"
    # this machine's certificate authorities, for pip's HTTPS (an egress proxy may sign with its own)
    ca=${PIP_CERT:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}
    [ -f "$ca" ] && mkdir -p "$base/etc/ssl/certs" && cp "$ca" "$base/etc/ssl/certs/ca-certificates.crt"
    chroot "$base" /usr/bin/python3 -m venv /opt/torch/.venv
    chroot "$base" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
        /opt/torch/.venv/bin/pip install -q --disable-pip-version-check cmake ninja ||
        die "pip install cmake ninja failed in the root"
    chroot "$base" apt-get clean
    echo "$recipe" >"$base/.vramkit-sim-recipe"
fi
# what the GPU machine lacks must be missing here too; the only -dev packages are those that
# gcc, g++ and python3 themselves pull in (libc6-dev and the like)
for tool in pkg-config make h5cc; do
    ! chroot "$base" sh -c "command -v $tool" >/dev/null 2>&1 || die "the root has $tool: it must not (--fresh)"
done
for inc in hdf5 hdf5.h criterion cjson; do
    [ ! -e "$base/usr/include/$inc" ] || die "the root has /usr/include/$inc: it must not (--fresh)"
done
chroot "$base" sh -c 'command -v g++' >/dev/null || die "the root lacks g++ (--fresh)"
deps_query=(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces
            --no-enhances gcc g++ python3 python3-venv)
pulled=$(chroot "$base" "${deps_query[@]}" 2>/dev/null || "${deps_query[@]}")
pulled=$(echo "$pulled" | grep -v '^ ' | grep -v '^<' | sort -u)
devs=$(chroot "$base" dpkg-query -W -f '${Package}\n' | grep -- '-dev$' | sort)
extra=$(comm -23 <(echo "$devs") <(echo "$pulled") | paste -sd' ')
[ -z "$extra" ] || die "the root holds -dev packages that gcc, g++ and python3 do not pull in: $extra"
echo "gpu-sim: the root's only -dev packages are the toolchain's: $(echo "$devs" | paste -sd' ')"

# ---- the mounts, undone on any exit ------------------------------------------------------------
mounted=()
cleanup() {
    local m
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
mount_into() { # mount_into OPTIONS... TARGET
    local target=${*: -1}
    mkdir -p "$target"
    mount "$@" && mounted+=("$target")
}
mount_into -t proc proc "$base/proc"
mount_into --bind /dev "$base/dev"
mkdir -p "$base/usr/local/cuda-sim"
if mount_into --bind "$cuda" "$base/usr/local/cuda-sim" && mount -o remount,bind,ro "$base/usr/local/cuda-sim"; then
    cuda_how="bind-mounted read-only"
else
    echo "gpu-sim: bind mounts refused: copying $cuda into the root (slow)"
    rm -rf "$base/usr/local/cuda-sim"
    cp -a "$cuda" "$base/usr/local/cuda-sim"
    cuda_how="copied"
fi
ln -sfn cuda-sim "$base/usr/local/cuda"

# ---- what a device call carries: tracked + untracked-not-ignored files, and the carry paths ----
if [ ! -f "$repo/.gpu-deps/MANIFEST" ]; then
    echo "gpu-sim: no .gpu-deps: ci/gpu-deps-fetch.sh"
    "$repo/ci/gpu-deps-fetch.sh" "$repo/.gpu-deps"
fi
tree=$base/work/vramkit
rm -rf "$tree" "$base/out"
mkdir -p "$tree" "$base/out"
(cd "$repo" && git ls-files -z -co --exclude-standard | tar -cf - --null -T - && tar -cf - .gpu-deps) |
    tar -xif - -C "$tree"
carried=$(du -sm "$tree" | cut -f1)
[ "$carried" -le 64 ] || die "the tree and .gpu-deps are ${carried} MiB: over the device call's 64 MiB"

# ---- the run -------------------------------------------------------------------------------------
echo "gpu-sim: $suite root $base, CUDA $cuda $cuda_how, ${carried} MiB carried; GPU_SIM=1 ci/gpu.sh"
set +e
chroot "$base" /usr/bin/env -i HOME=/root LANG=C.UTF-8 GPU_SIM=1 GPU_JOBS="$jobs" OUT=/out \
    PATH=/opt/torch/.venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c 'cd /work/vramkit && ci/gpu.sh'
rc=$?
set -e
mkdir -p "$logs"
cp -f "$base/out/"* "$logs/" 2>/dev/null || true

# ---- the verdict: every hw test the sources define reached its skip ------------------------------
expected=$(cd "$repo/test/hw" && ls hw_*.c hw_*.cu 2>/dev/null | sed 's/\.cu\?$//' | sort)
grep -q 'the NCCL backend and hw_nccl are built' "$logs/gpu.log" 2>/dev/null || expected=$(echo "$expected" | grep -vx hw_nccl)
expected=$(printf '%s\nhw_torch_parity\n' "$expected" | sort)
skipped=$(python3 - "$logs/hw-junit.xml" <<'PY' 2>/dev/null
import sys, xml.etree.ElementTree as ET
for tc in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    s = tc.find("skipped")
    if s is not None and s.get("message") == "SKIP_RETURN_CODE=77":
        print(tc.get("name"))
PY
)
skipped=$(echo "$skipped" | sort)
missing=$(comm -23 <(echo "$expected") <(echo "$skipped") | paste -sd' ')
n=$(echo "$expected" | grep -c .)
echo "gpu-sim: logs in $logs (SUMMARY.md, gpu.log, hw-junit.xml)"
if [ "$rc" -eq 0 ] && [ -z "$missing" ]; then
    echo "gpu-sim: PASS: preflight, configure (no pkg-config, no h5cc, deps from .gpu-deps), build and link of vramkit_gpu; $n/$n hw tests reached their no-GPU skip (77): $(echo "$skipped" | paste -sd' ')"
    exit 0
fi
echo "gpu-sim: FAIL: ci/gpu.sh exit $rc; hw tests that did not reach their skip: ${missing:-none} (see $logs/SUMMARY.md)"
exit 1
