#!/usr/bin/env bash
# A long clip for the throughput benches, made on the GPU host: SRC decoded
# by NVIDIA's decoder, scaled to WxH and encoded once by x264 at PRESET, no
# B-frames, then that stream repeated LOOPS times into OUT (.mp4) without
# encoding again (as `ffmpeg -stream_loop N -c copy` would; each repeat
# starts on a key frame, times run on). Used by throughput.sh and
# multi-gpu.sh; needs the bundle's env (.gpu/b/env.sh) sourced.
#   bench/loop-clip.sh OUT SRC W H LOOPS PRESET
set -eu
out=$1 src=$2 w=$3 h=$4 loops=$5 preset=$6
once=$out.once.mp4
gst-launch-1.0 -q filesrc location="$src" ! qtdemux ! h264parse ! nvh264dec ! videoconvert \
  ! videoscale ! "video/x-raw,format=I420,width=$w,height=$h" ! x264enc speed-preset="$preset" \
  bframes=0 ! h264parse ! mp4mux ! filesink location="$once"
parts=""
for _ in $(seq 1 "$loops"); do
  parts="$parts filesrc location=$once ! qtdemux ! h264parse ! c."
done
# shellcheck disable=SC2086
gst-launch-1.0 -q concat name=c ! h264parse ! mp4mux ! filesink location="$out" $parts
rm -f "$once"
