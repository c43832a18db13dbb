#!/usr/bin/env bash
# Reframing's quality on every shared clip, for each aspect given: subjects
# kept (the hand-marked boxes in bench/reframe/), similarity (BDS) ÷ scaling's
# and ÷ the best fixed crop's, flicker ÷ scaling's and ÷ the centre crop's,
# and the window path's largest jump. One JSON a clip and aspect goes to
# $OUT (or ./reframe-out); bench/reframe_table.py makes the tables.
#   bench/reframe-quality.sh [seamstream] [clips dir] [aspects] [extra op keys]
#   e.g. bench/reframe-quality.sh target/release/seamstream ../shared/data/video "9:16 1:1"
set -u
bin=${1:-seamstream}
clips=${2:-../shared/data/video}
aspects=${3:-9:16 1:1}
extra=${4:-}
out=${OUT:-reframe-out}; mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
for c in "$clips"/*.mp4 "$clips"/*.webm; do
  [ -f "$c" ] || continue
  n=$(basename "$c"); n=${n%.*}
  for a in $aspects; do
    tag="$n-${a/:/x}"
    boxes=()
    [ -f "$here/reframe/$n.json" ] && boxes=(--boxes "$here/reframe/$n.json")
    rm -f "$out/$tag.path.json"
    t0=$(date +%s)
    "$bin" quality "$c" --op "reframe:aspect=$a$extra" --every 15 --crops 5 \
      "${boxes[@]}" --reframe-path "$out/$tag.path.json" --json \
      > "$out/$tag.json" 2> "$out/$tag.log"
    echo "$tag rc=$? $(( $(date +%s) - t0 )) s"
  done
done
