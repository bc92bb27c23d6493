#!/bin/bash
# Installs everything vramkit builds and tests with, from Debian packages.
# Idempotent: when every package is already installed it returns at once.
# The CUDA toolkit is optional (not a Debian package here): with nvcc on the PATH the CUDA
# parts build too; without it the core, the CLI and every unit test still build. Open MPI
# gives the communication table its MPI backend and the mpirun tests (label mpi).
set -euo pipefail
pkgs=(cmake make gcc g++ clang libclang-rt-14-dev pkg-config
      libcriterion-dev libcjson-dev libhdf5-dev
      frama-c-base why3 z3 gcovr valgrind python3
      libopenmpi-dev openmpi-bin)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "ci/install-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# why3 must know its provers once per user (the proofs use z3)
[ -f "$HOME/.why3.conf" ] || why3 config detect >/dev/null 2>&1 || true
echo "ci/install-deps: ok"
