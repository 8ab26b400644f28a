#!/usr/bin/env bash
# Makes COUNT (first argument, default 48) photo-like 4000 × 3000 JPEGs in .build/bench-photos,
# once: crops of one large plasma fractal (ImageMagick), so each has photo-like detail and its
# own bytes. Used by images.sh and bounded.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-48}
photos=.build/bench-photos
if [ "$(ls "$photos"/photo-*.jpg 2>/dev/null | wc -l)" -lt "$count" ]; then
  mkdir -p "$photos"
  /usr/bin/convert -seed 7 -size 6400x4800 plasma:fractal -quality 95 "$photos/base.jpg"
  for i in $(seq 1 "$count"); do
    left=$(( (i * 317) % 2400 )); top=$(( (i * 211) % 1800 ))
    vips crop "$photos/base.jpg" "$photos/photo-$i.jpg[Q=90]" "$left" "$top" 4000 3000
  done
fi
