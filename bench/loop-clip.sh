#!/usr/bin/env bash
# A long clip for the throughput benches, made on the GPU host: SRC decoded
# by NVIDIA's decoder LOOPS times over, scaled to WxH and encoded by x264 at
# PRESET, no B-frames, into OUT (.mp4). Used by throughput.sh and
# multi-gpu.sh; needs the bundle's env (.gpu/b/env.sh) sourced.
#   bench/loop-clip.sh OUT SRC W H LOOPS PRESET
set -eu
out=$1 src=$2 w=$3 h=$4 loops=$5 preset=$6
parts=""
for _ in $(seq 1 "$loops"); do
  parts="$parts filesrc location=$src ! qtdemux ! h264parse ! nvh264dec ! c."
done
# shellcheck disable=SC2086
gst-launch-1.0 -q concat name=c ! videoconvert ! videoscale \
  ! "video/x-raw,format=I420,width=$w,height=$h" ! x264enc speed-preset="$preset" \
  bframes=0 ! h264parse ! mp4mux ! filesink location="$out" $parts
