#!/usr/bin/env bash
# Makes the README's strips of consecutive frames of a real clip: the
# original, plain scaling to 4:3 (ffmpeg's area scaling, what
# `seamstream quality` compares with), fast mode and exact mode (the
# program's own output; ffmpeg cuts and tiles the frames).
#   docs/make-retarget-strip.sh [CLIP] [FIRST]   (after cargo build --release)
# CLIP defaults to the shared dog-walk clip, FIRST (the first of the four
# frames shown) to 150.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release/seamstream
clip=${1:-../shared/data/video/dog-walk-720p.mp4}
first=${2:-150}
last=$((first + 3))
out=docs/tour
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
# The clip's first seconds (FIRST + 4 frames at 24 fps or more), so that
# every frame up to the last shown goes through the op and fast mode's seams
# have the history they would have in a whole run.
seconds=$(((last + 1) / 24 + 1))
ffmpeg -v error -y -i "$clip" -t "$seconds" -an -c copy "$tmp/clip.mp4"
clip="$tmp/clip.mp4"
"$bin" run "$clip" "$tmp/fast.mp4" --device cpu --op retarget:width=75%
"$bin" run "$clip" "$tmp/exact.mp4" --device cpu --op retarget:width=75%,mode=exact
tile() { # input, output, scaling first (or "null")
    ffmpeg -v error -y -i "$1" \
        -vf "select='between(n,$first,$last)',$3,scale=-2:180:flags=area,tile=4x1:padding=4:color=white" \
        -frames:v 1 -q:v 4 "$2"
}
tile "$clip" "$out/strip-original.jpg" null
tile "$clip" "$out/strip-scaled.jpg" "scale=trunc(iw*3/4):ih:flags=area"
tile "$tmp/fast.mp4" "$out/strip-fast.jpg" null
tile "$tmp/exact.mp4" "$out/strip-exact.jpg" null
du -ch "$out"/strip-*.jpg | tail -1
