#!/bin/sh
# check-lists.sh PROOF_DIR INCLUDE_DIR — every function a proved header defines is in the
# -wp-fct list of one of the proofs of that header. A proof_<name>.opts with a -wp-fct line
# proves only the functions it names; one added to the header and to no list would go
# unproved without a word. The header of a proof is <name>.h, or the one named on a
# "# header: x.h" line of its opts (a header proved in parts: several proofs name it, and
# their lists together must hold every function), plus those on a "# covers: a.h b.h" line.
# Functions are the VRAM_DEF definitions (VRAM_DEF or VRAM_HD VRAM_DEF at the start of a
# line, declarations included). A function left out on purpose is named on a
# "# not proved: f g" line of an opts, with the reason beside it (and its unit tests).
set -eu
dir=$1; inc=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for opts in "$dir"/proof_*.opts; do
  fct=$(grep '^-wp-fct' "$opts" | sed 's/^-wp-fct[ =]*//' | tr ',' '\n' | tr -d ' ' || true)
  [ -n "$fct" ] || continue
  name=$(basename "$opts" .opts); name=${name#proof_}
  main=$(grep '^# header:' "$opts" | sed 's/^# header://' | tr -d ' ' || true)
  [ -n "$main" ] || main=$name.h
  headers="$main $(grep '^# covers:' "$opts" | sed 's/^# covers://' || true)"
  for h in $headers; do
    [ -f "$inc/vramkit/$h" ] || { echo "$opts: header $h not found"; exit 1; }
    printf '%s\n' "$fct" >>"$tmp/$h.listed"
    grep '^# not proved:' "$opts" | sed 's/^# not proved://' | tr ' ,' '\n\n' >>"$tmp/$h.listed" || true
    printf '%s\n' "$(basename "$opts")" >>"$tmp/$h.by"
  done
done
missing=0; checked=0
for listed in "$tmp"/*.listed; do
  [ -f "$listed" ] || continue
  h=$(basename "$listed" .listed)
  for f in $(awk '/^(VRAM_HD )?VRAM_DEF/ { l = $0; if (l !~ /\(/) { getline n; l = l " " n }
                  sub(/\(.*/, "", l); k = split(l, w, /[ *]+/); print w[k] }' \
             "$inc/vramkit/$h" | sort -u); do
    checked=$((checked + 1))
    if ! grep -qx "$f" "$listed"; then
      echo "$h: $f is in no -wp-fct list of $(tr '\n' ' ' <"$tmp/$h.by"): it would go unproved"
      missing=$((missing + 1))
    fi
  done
done
if [ "$checked" -eq 0 ]; then echo "no function checked: the lists or the headers were not found"; exit 1; fi
if [ "$missing" -ne 0 ]; then exit 1; fi
echo "every one of $checked functions is in its proof's list"
