#!/usr/bin/env bash
# The whole pipeline against NVIDIA's decoder alone and GStreamer's own
# nvcodec pipeline, in one call on the GPU host (issue 27):
#   here:  cargo build --release && bench/gpu-bundle.sh
#   there: bench/throughput.sh [1080p|4k ...]
# Makes its clips there if absent ($tp/*.mp4: the shared dog-walk clip
# scaled up and looped, x264 --preset fast), then for each prints fps for
#   decoder alone (system memory out, and CUDA memory out),
#   GStreamer's nvcodec pipeline (decode, cudascale, cudadownload; 1.22's
#     nvcodec has no cudaconvertscale),
#   ours into null (fast retarget to 75% width, gaussian sigma=2), with the
#     decoder's CUDA memory and with SEAMSTREAM_HOST_COPIES=1 (the old path),
#     decoded by seamstream's NVIDIA decoder (the default) and by
#     GStreamer's (SEAMSTREAM_NVDEC=0, rows named nvh264dec),
#   ours into x264 --preset veryfast, and the nvcodec decoder with
#     videoscale into the same x264,
# with ours' ms a frame in each stage (copy in, chain, copy out) and where
# its frames were (memory in/out). QUICK=1 keeps the decoder and ours into
# null only (OPS= chooses ops; seamstream's decoder with and without its
# display delay). Logs and JSON go to $OUT.
set -u
out=${OUT:-tp-out}; mkdir -p "$out"; out=$(cd "$out" && pwd)
. .gpu/b/env.sh
export SEAMSTREAM_CACHE=${SEAMSTREAM_CACHE:-/tmp/seamstream-cache}
sizes=${*:-1080p 4k}
tp=${TP:-/tmp/tp}; mkdir -p "$tp"
src=.gpu/clips/dog-walk-720p.mp4
make_clip() { # name width height loops
  local f=$tp/$1.mp4
  [ -f "$f" ] && return
  bench/loop-clip.sh "$f" "$src" "$2" "$3" "$4" fast > "$out/make-$1.log" 2>&1 \
    || echo "could not make $f (see make-$1.log)"
}
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# gst-launch timed by wall clock; its start is in the figure (as ours is).
timed() { # name frames cmd...
  local name=$1 frames=$2; shift 2
  local t0; t0=$(date +%s%N)
  "$@" > "$out/$name.log" 2>&1; local rc=$?
  local t; t=$(ms "$t0")
  awk -v n="$name" -v f="$frames" -v t="$t" -v rc="$rc" \
    'BEGIN { printf "%-44s %7d %9.1f %s\n", n, f, f * 1000 / t, (rc ? "FAILED rc=" rc : "") }'
}
ours() { # name cmd... (fps by wall clock as above, then the summary's own
  # fps from the source's start, and its stage times)
  local name=$1; shift
  local t0; t0=$(date +%s%N)
  "$@" --json > "$out/$name.json" 2> "$out/$name.log"; local rc=$?
  local t; t=$(ms "$t0")
  python3 - "$name" "$out/$name.json" "$rc" "$t" <<'PY'
import json, sys
name, path, rc, t = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
try:
    s = json.loads([l for l in open(path) if l.startswith("{")][-1])
except Exception:
    print(f"{name:44s} FAILED rc={rc}"); sys.exit()
print(f"{name:44s} {s['frames_out']:7d} {s['frames_out'] * 1000 / t:9.1f}  own {s['fps']:6.1f}  copy in {s['ms_copy_in']:.3f}"
      f"  chain {s['ms_chain']:.3f}  copy out {s['ms_copy_out']:.3f}"
      f"  memory {s['memory_in']}/{s['memory_out']}")
PY
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader | tee "$out/gpu.txt"
nproc | sed 's/^/cores: /'
for size in $sizes; do
  case $size in
    1080p) make_clip 1080p 1920 1080 7; w=1440; h=1080 ;;
    4k) make_clip 4k 3840 2160 2; w=2880; h=2160 ;;
    *) echo "unknown size $size"; continue ;;
  esac
  clip=$tp/$size.mp4
  [ -f "$clip" ] || continue
  # The frame count (and the kernel cache filled) by one run of ours.
  frames=$(seamstream run "$clip" null --device cuda --op gaussian:sigma=2 --json 2>/dev/null \
    | sed -n 's/.*"frames_out":\([0-9]*\).*/\1/p')
  echo
  echo "== $size ($clip, $frames frames) =="
  printf '%-44s %7s %9s\n' "pipeline" "frames" "fps"
  D="filesrc location=$clip ! qtdemux ! h264parse ! nvh264dec"
  if [ -n "${QUICK:-}" ]; then
    # QUICK=1: the decoder and ours into null only (OPS="..." chooses the
    # ops, fast retargeting by default), with seamstream's decoder holding
    # its default display delay and none (SEAMSTREAM_NVDEC_DELAY=0).
    for round in 1 2; do
      timed "decoder-cuda-$size-$round" "$frames" gst-launch-1.0 -q $D ! "video/x-raw(memory:CUDAMemory)" ! fakesink sync=false
      for op in ${OPS:-retarget:width=75%}; do
        n=${op%%:*}
        SEAMSTREAM_NVDEC=0 ours "ours-$n-null-nvh264dec-$size-$round" seamstream run "$clip" null \
          --device cuda --op "$op"
        SEAMSTREAM_NVDEC=1 ours "ours-$n-null-seamstreamnvdec-$size-$round" seamstream run "$clip" null \
          --device cuda --op "$op"
        SEAMSTREAM_NVDEC=1 SEAMSTREAM_NVDEC_DELAY=0 ours "ours-$n-null-seamstreamnvdec-delay0-$size-$round" \
          seamstream run "$clip" null --device cuda --op "$op"
      done
    done
    continue
  fi
  for round in 1 2; do
    timed "decoder-system-$size-$round" "$frames" gst-launch-1.0 -q $D ! "video/x-raw" ! fakesink sync=false
    timed "decoder-cuda-$size-$round" "$frames" gst-launch-1.0 -q $D ! "video/x-raw(memory:CUDAMemory)" ! fakesink sync=false
    timed "nvcodec-scale-download-$size-$round" "$frames" gst-launch-1.0 -q $D ! cudascale \
      ! "video/x-raw(memory:CUDAMemory),width=$w,height=$h" ! cudadownload ! fakesink sync=false
    for op in retarget:width=75% gaussian:sigma=2; do
      n=${op%%:*}
      SEAMSTREAM_NVDEC=0 ours "ours-$n-null-nvh264dec-$size-$round" seamstream run "$clip" null \
        --device cuda --op "$op"
      ours "ours-$n-null-seamstreamnvdec-$size-$round" seamstream run "$clip" null --device cuda --op "$op"
      SEAMSTREAM_HOST_COPIES=1 ours "ours-$n-null-hostcopies-$size-$round" seamstream run "$clip" null \
        --device cuda --op "$op"
    done
  done
  # Into x264 (veryfast; ours' default quality, crf 23, no B-frames), once each.
  X="x264enc pass=qual quantizer=23 speed-preset=veryfast bframes=0 ! h264parse ! mp4mux"
  ours "ours-retarget-x264-$size" seamstream run "$clip" "$out/ours-$size.mp4" --device cuda \
    --op retarget:width=75% --preset veryfast --no-audio
  SEAMSTREAM_HOST_COPIES=1 ours "ours-retarget-x264-hostcopies-$size" seamstream run "$clip" \
    "$out/ours-host-$size.mp4" --device cuda --op retarget:width=75% --preset veryfast --no-audio
  timed "nvcodec-videoscale-x264-$size" "$frames" gst-launch-1.0 -q $D ! "video/x-raw" ! videoscale \
    ! "video/x-raw,width=$w,height=$h" ! $X ! filesink location="$out/peer-$size.mp4"
  timed "nvcodec-cudascale-x264-$size" "$frames" gst-launch-1.0 -q $D ! cudascale \
    ! "video/x-raw(memory:CUDAMemory),width=$w,height=$h" ! cudadownload ! $X \
    ! filesink location="$out/peer-cuda-$size.mp4"
  rm -f "$out"/*.mp4
done
