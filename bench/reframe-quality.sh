#!/usr/bin/env bash
# Reframing's quality on every shared clip, for each aspect given: subjects
# kept (the hand-marked boxes in bench/reframe/), similarity (BDS) ÷ scaling's
# and ÷ the best fixed crop's, flicker ÷ scaling's and ÷ the centre crop's,
# and the window path's largest jump (boxes for a clip not in bench/reframe/
# may lie beside it, as CLIP.json). One JSON a clip and aspect goes to
# $OUT (or ./reframe-out); bench/reframe_table.py makes the tables.
#   bench/reframe-quality.sh [seamstream] [clips dir] [aspects] [extra op keys]
#   e.g. bench/reframe-quality.sh target/release/seamstream ../shared/data/video "9:16 1:1"
# CROPS (default 5) and EVERY (default 15) are quality's --crops and --every.
# LIVE=1 judges the plan made live instead of ahead: the clip is fed to `run`
# through a FIFO, which it reads as a stream and so plans as the frames come,
# exactly as it plans a camera or `--live` (which would also drop the frames
# a busy 2-core machine falls behind on); `run` writes a lossless file and
# the path it took, and `quality` judges that file.
set -u
bin=${1:-seamstream}
clips=${2:-../shared/data/video}
aspects=${3:-9:16 1:1}
extra=${4:-}
out=${OUT:-reframe-out}; mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# CLIP_EXTS (default "mp4 webm"): the clips' file extensions.
shopt -s nullglob
files=()
for e in ${CLIP_EXTS:-mp4 webm}; do files+=("$clips"/*."$e"); done
for c in "${files[@]}"; do
  [ -f "$c" ] || continue
  n=$(basename "$c"); n=${n%.*}
  for a in $aspects; do
    tag="$n-${a/:/x}"
    boxes=()
    [ -f "$here/reframe/$n.json" ] && boxes=(--boxes "$here/reframe/$n.json")
    # Boxes beside a clip of one's own (CLIP.json next to CLIP.mp4).
    [ -f "$clips/$n.json" ] && boxes=(--boxes "$clips/$n.json")
    rm -f "$out/$tag.path.json"
    t0=$(date +%s)
    judged=(--op "reframe:aspect=$a$extra")
    rc=0
    if [ "${LIVE:-0}" = 1 ]; then
      rm -f "$out/$tag.mkv" "$out/fifo"
      mkfifo "$out/fifo"
      cat "$c" > "$out/fifo" &
      # Lossless (x264 at crf 0), so that what is judged is the reframe.
      "$bin" run "$out/fifo" "$out/$tag.mkv" --no-audio --crf 0 --preset ultrafast \
        --op "reframe:aspect=$a$extra" --reframe-path "$out/$tag.path.json" \
        > "$out/$tag.run.log" 2>&1
      rc=$?
      wait
      rm -f "$out/fifo"
      judged=("$out/$tag.mkv")
    fi
    if [ $rc -eq 0 ]; then
      "$bin" quality "$c" "${judged[@]}" --every "${EVERY:-15}" --crops "${CROPS:-5}" \
        "${boxes[@]}" --reframe-path "$out/$tag.path.json" --json \
        > "$out/$tag.json" 2> "$out/$tag.log"
      rc=$?
    fi
    echo "$tag rc=$rc $(( $(date +%s) - t0 )) s"
  done
done
