#!/bin/sh
# install_check.sh SOURCE_DIR BUILD_DIR WORK_DIR — the three ways a user takes the core:
# `cmake --install` + find_package, add_subdirectory of the source tree, and pkg-config.
set -eu
src=$1; build=$2; work=$3
rm -rf "$work"; mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/vramkit/vramkit.h"
# find_package
cmake -S "$src/test/unit/consumer" -B "$work/pkg" -DVRAMKIT_CONSUME=package \
      -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/pkg" >/dev/null
"$work/pkg/consumer"
# add_subdirectory (vendored): must not build the driver or the tests
cmake -S "$src/test/unit/consumer" -B "$work/sub" -DVRAMKIT_CONSUME=subdirectory \
      -DVRAMKIT_SOURCE="$src" >/dev/null
cmake --build "$work/sub" >/dev/null
"$work/sub/consumer"
if [ -e "$work/sub/vramkit/driver" ]; then echo "vendored build configured the driver"; exit 1; fi
# pkg-config
pc=$(find "$work/prefix" -name vramkit.pc | head -1)
test -n "$pc"
cflags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags vramkit)
cc $cflags -std=c11 -Wall -Wextra -Werror "$src/test/unit/consumer/main.c" -o "$work/pc-consumer"
"$work/pc-consumer"
echo "install check passed: find_package, add_subdirectory, pkg-config"
