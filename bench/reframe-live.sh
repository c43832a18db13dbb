#!/usr/bin/env bash
# Reframing planned live (frame by frame, nothing looked at ahead), on every
# shared clip and each aspect given. The clip is fed to `run` through a FIFO,
# which it reads as a stream and so plans as the frames come, exactly as it
# plans a camera or `--live` (which would also drop the frames a busy
# 2-core machine falls behind on); it writes a lossless file and the path it
# took. `quality` then judges that file against the clip as
# bench/reframe-quality.sh judges the offline plan. One JSON a clip and
# aspect goes to $OUT (or ./reframe-live); bench/reframe_table.py makes the
# tables. CROPS (default 5) and EVERY (default 15) are quality's --crops
# and --every.
#   bench/reframe-live.sh [seamstream] [clips dir] [aspects]
#   e.g. bench/reframe-live.sh target/release/seamstream ../shared/data/video "9:16 1:1"
set -u
bin=${1:-seamstream}
clips=${2:-../shared/data/video}
aspects=${3:-9:16 1:1}
out=${OUT:-reframe-live}; mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
for c in "$clips"/*.mp4 "$clips"/*.webm; do
  [ -f "$c" ] || continue
  n=$(basename "$c"); n=${n%.*}
  for a in $aspects; do
    tag="$n-${a/:/x}"
    boxes=()
    [ -f "$here/reframe/$n.json" ] && boxes=(--boxes "$here/reframe/$n.json")
    rm -f "$out/$tag.path.json" "$out/$tag.mkv" "$out/fifo"
    t0=$(date +%s)
    mkfifo "$out/fifo"
    cat "$c" > "$out/fifo" &
    # Lossless (x264 at crf 0), so that what is judged is the reframe.
    "$bin" run "$out/fifo" "$out/$tag.mkv" --no-audio --crf 0 --preset ultrafast \
      --op "reframe:aspect=$a" --reframe-path "$out/$tag.path.json" \
      > "$out/$tag.run.log" 2>&1
    rc=$?
    wait
    rm -f "$out/fifo"
    if [ $rc -eq 0 ]; then
      "$bin" quality "$c" "$out/$tag.mkv" --every "${EVERY:-15}" --crops "${CROPS:-5}" \
        "${boxes[@]}" --reframe-path "$out/$tag.path.json" --json \
        > "$out/$tag.json" 2> "$out/$tag.log"
      rc=$?
    fi
    echo "$tag rc=$rc $(( $(date +%s) - t0 )) s"
  done
done
