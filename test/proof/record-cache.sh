#!/bin/sh
# record-cache.sh BUILD_DIR [CTEST_ARGS...] — record WP's cache (test/proof/wp-cache) for the
# proofs as they are now, and drop the entries no goal uses any more. Runs
# `VRAMKIT_WP_CACHE=update ctest --test-dir BUILD_DIR -L proof -j2 CTEST_ARGS`: a goal found in
# the cache is replayed, any other is proved and written there. Before the run every entry's
# access time is set to 2000-01-01; an entry WP reads gets a new one (the file system's
# relatime rule: an access time older than a day is updated on read), so after a run of the
# whole label (no -R in CTEST_ARGS) an entry still dated 2000 belongs to no goal of today's
# proofs and is removed. Where reads do not update access times (a noatime mount) nothing is
# removed, and it says so. Then: git add -A test/proof/wp-cache and commit.
# Wrap it in the CPU lock: flock /tmp/vramkit-cpu.lock test/proof/record-cache.sh build
set -eu
build=${1:?usage: record-cache.sh BUILD_DIR [CTEST_ARGS...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
cache=${VRAMKIT_WP_CACHE_DIR:-$here/wp-cache}
mkdir -p "$cache"
old=200001010000
# can this file system tell a read entry from an unread one?
probe="$cache/.atime-probe"
echo probe >"$probe"
touch -a -t "$old" "$probe"
cat "$probe" >/dev/null
prune=1
if [ -n "$(find "$probe" -newerat '2000-01-02')" ]; then :; else prune=0; fi
rm -f "$probe"
find "$cache" -name '*.json' -exec touch -a -t "$old" {} +
rc=0
VRAMKIT_WP_CACHE=update ctest --test-dir "$build" -L proof -j2 "$@" || rc=$?
if [ "$rc" -ne 0 ]; then
  echo "record-cache: the proofs failed (ctest exit $rc): nothing removed"
  exit "$rc"
fi
case " $* " in
  *" -R "* | *" -E "* | *" -I "* | *" -L "*)
    echo "record-cache: only some proofs ran: nothing removed (run the whole label to prune)"
    exit 0 ;;
esac
if [ "$prune" -eq 0 ]; then
  echo "record-cache: reads do not update access times here (noatime?): nothing removed"
  exit 0
fi
stale=$(find "$cache" -name '*.json' ! -newerat '2000-01-02' | wc -l)
find "$cache" -name '*.json' ! -newerat '2000-01-02' -delete
echo "record-cache: $(find "$cache" -name '*.json' | wc -l) entries kept, $stale unused ones removed"
