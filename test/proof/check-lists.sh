#!/bin/sh
# check-lists.sh PROOF_DIR INCLUDE_DIR — every function a proof's header defines is in that
# proof's -wp-fct list. A proof_<name>.opts with a -wp-fct line proves only the functions it
# names; one added to the header and not to the list would go unproved without a word. The
# headers of a proof: <name>.h, plus those named on a "# covers: a.h b.h" line of its opts.
# Functions are the VRAM_DEF definitions (VRAM_DEF or VRAM_HD VRAM_DEF at the start of a line, declarations
# included). A function left out on purpose is named on a "# not proved: f g" line of the
# opts, with the reason beside it (and its unit tests).
set -eu
dir=$1; inc=$2
missing=0; checked=0
for opts in "$dir"/proof_*.opts; do
  fct=$(grep '^-wp-fct' "$opts" | sed 's/^-wp-fct[ =]*//' | tr ',' '\n' | tr -d ' ' || true)
  [ -n "$fct" ] || continue
  name=$(basename "$opts" .opts); name=${name#proof_}
  skip=$(grep '^# not proved:' "$opts" | sed 's/^# not proved://' | tr ' ,' '\n\n' || true)
  headers="$name.h $(grep '^# covers:' "$opts" | sed 's/^# covers://' || true)"
  for h in $headers; do
    [ -f "$inc/vramkit/$h" ] || { echo "$opts: header $h not found"; exit 1; }
    for f in $(awk '/^(VRAM_HD )?VRAM_DEF/ { l = $0; if (l !~ /\(/) { getline n; l = l " " n }
                    sub(/\(.*/, "", l); k = split(l, w, /[ *]+/); print w[k] }' \
               "$inc/vramkit/$h" | sort -u); do
      if printf '%s\n' "$skip" | grep -qx "$f"; then continue; fi
      checked=$((checked + 1))
      if ! printf '%s\n' "$fct" | grep -qx "$f"; then
        echo "$opts: $f (defined in $h) is not in its -wp-fct list: it would go unproved"
        missing=$((missing + 1))
      fi
    done
  done
done
if [ "$checked" -eq 0 ]; then echo "no function checked: the lists or the headers were not found"; exit 1; fi
if [ "$missing" -ne 0 ]; then exit 1; fi
echo "every one of $checked functions is in its proof's list"
