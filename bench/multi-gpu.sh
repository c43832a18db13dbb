#!/usr/bin/env bash
# One job split over the host's GPUs (`run --gpus N`) against one GPU, on a
# long 1080p file, on a GPU host with several GPUs (issue 27):
#   here:  cargo build --release && bench/gpu-bundle.sh
#   there: bench/multi-gpu.sh [MINUTES]     (default 10)
# Makes the file there if absent ($tp/long-1080p.mp4: the shared
# dog-walk clip scaled to 1080p and repeated to MINUTES, x264 veryfast),
# then times, by wall clock, with the host's CPU load: NVIDIA's decoder
# alone on 1, 2, … GPUs at once (the file's frames shared out: the limit);
# into null, --gpus 1, 2, … up to the host's GPUs, for fast retargeting to
# 75% width and for gaussian sigma=2; then the whole split job into an mp4
# (x264 veryfast, joined) with as many workers as GPUs and twice as many.
# Each worker's plan and fixed cost (frames counted, where its boundaries
# went, time before and after its frames) come from its log; `nvidia-smi dmon` runs
# throughout. OPS="retarget:width=75%", COUNTS="1 4" and X264_GPUS="2"
# narrow the runs (device time is short); SEAMSTREAM="path ..." runs other
# builds (each row once a build, side by side) and DECODERS=0 skips the
# decoder-alone rows. Logs go to $OUT.
set -u
out=${OUT:-mg-out}; mkdir -p "$out"; out=$(cd "$out" && pwd)
. .gpu/b/env.sh
export SEAMSTREAM_CACHE=${SEAMSTREAM_CACHE:-/tmp/seamstream-cache}
minutes=${1:-10}
gpus=$(nvidia-smi -L | wc -l)
nvidia-smi -L; nproc | sed 's/^/cores: /'
tp=${TP:-/tmp/tp}; mkdir -p "$tp"
clip=$tp/long-1080p.mp4
src=.gpu/clips/dog-walk-720p.mp4
if [ ! -f "$clip" ]; then
  # dog-walk is 289 frames at 29.97 fps: 9.64 s.
  loops=$(( minutes * 60 * 100 / 964 + 1 ))
  t0=$(date +%s)
  bench/loop-clip.sh "$clip" "$src" 1920 1080 "$loops" veryfast > "$out/make.log" 2>&1 \
    || { echo "could not make $clip"; cat "$out/make.log"; exit 1; }
  echo $(( loops * 289 )) > "$clip.frames"
  echo "made $clip ($loops loops) in $(( $(date +%s) - t0 )) s"
fi
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# The host's CPUs over a row: busy and total jiffies from /proc/stat.
cpu() { awk '/^cpu / { print $2 + $3 + $4 + $5 + $6 + $7 + $8, $5 + $6 }' /proc/stat; }
row() { # name cmd...
  local name=$1; shift
  local t0 c0 i0 c1 i1; read -r c0 i0 < <(cpu); t0=$(date +%s%N)
  "$@" > "$out/$name.log" 2>&1; local rc=$?
  local t; t=$(ms "$t0"); read -r c1 i1 < <(cpu)
  local frames
  frames=$(grep -oE '^[0-9]+ frames (in|of)' "$out/$name.log" | head -1 | grep -oE '^[0-9]+')
  [ -n "$frames" ] || frames=$(sed -n 's/.*"frames_out":\([0-9]*\).*/\1/p' "$out/$name.log" | head -1)
  [ -n "$frames" ] || frames=${FRAMES:-}
  printf '%-40s %7s %8d %9s %8s %s\n' "$name" "${frames:-?}" "$t" \
    "$(awk -v f="${frames:-0}" -v t="$t" 'BEGIN { printf "%.1f", f * 1000 / t }')" \
    "$(awk -v t=$((c1 - c0)) -v i=$((i1 - i0)) 'BEGIN { printf "%.0f%%", t ? 100 * (t - i) / t : 0 }')" \
    "$([ $rc = 0 ] || echo "FAILED rc=$rc: $(tail -2 "$out/$name.log" | tr '\n' ' ')")"
}
# NVIDIA's decoder alone on N GPUs at once, the file's frames shared out
# (each process decodes the first 1/N of them into CUDA memory): the pace
# the split job's decoders allow, process start included.
decoders() { # n frames
  local n=$1 each=$(( $2 / $1 )) pids=() i
  for i in $(seq 0 $(( n - 1 ))); do
    CUDA_VISIBLE_DEVICES=$i gst-launch-1.0 -q filesrc location="$clip" ! qtdemux ! h264parse \
      ! nvh264dec ! "video/x-raw(memory:CUDAMemory)" ! identity eos-after="$each" \
      ! fakesink sync=false & pids+=($!)
  done
  local rc=0; for i in "${pids[@]}"; do wait "$i" || rc=1; done
  return $rc
}
nvidia-smi dmon -s u -d 1 > "$out/dmon.txt" 2>&1 & dmon=$!
frames=$(cat "$clip.frames" 2>/dev/null || echo 18207)
echo
echo "(CPU: the host's cores busy over the row; see $out/dmon.txt for each GPU's SM and decoder use)"
printf '%-40s %7s %8s %9s %8s\n' "run (into null unless said)" frames "wall ms" "fps" "CPU"
# The GPU counts: 1, 2, 4, … up to the host's (COUNTS="1 4" narrows them).
counts=${COUNTS:-}
if [ -z "$counts" ]; then
  g=1
  while [ "$g" -le "$gpus" ]; do
    counts="$counts $g"
    g=$(( g * 2 ))
    [ "$g" -gt "$gpus" ] && [ "$(( g / 2 ))" -lt "$gpus" ] && g=$gpus
  done
fi
if [ "${DECODERS:-1}" != 0 ]; then
  for g in $counts; do
    FRAMES=$(( frames / g * g )) row "decoder-alone-$g-gpus" decoders "$g" "$frames"
  done
fi
for op in ${OPS:-retarget:width=75% gaussian:sigma=2}; do
  n=${op%%:*}
  for g in $counts; do
    for bin in ${SEAMSTREAM:-seamstream}; do
      row "gpus-$g-$n-$(basename "$bin")" "$bin" run "$clip" null --gpus "$g" --op "$op" --keep-parts
      # null keeps its workers' logs in $TMPDIR/seamstream-null-PID.parts.
      grep -h "^segment" "${TMPDIR:-/tmp}"/seamstream-null-*.parts/part-*.log 2>/dev/null \
        | sed 's/^/    /' | head -16
      rm -rf "${TMPDIR:-/tmp}"/seamstream-null-*.parts
    done
  done
done
# Into x264: the CPU column says how near the job is to the encoders'
# limit; more workers than GPUs run more encoders at once.
for g in ${X264_GPUS:-1 $gpus}; do
  for w in $g $(( 2 * g )); do
    row "gpus-$g-workers-$w-retarget-x264-mp4" seamstream run "$clip" "$out/long-out.mp4" --gpus "$g" \
      --workers "$w" --op retarget:width=75% --preset veryfast
    tail -3 "$out/gpus-$g-workers-$w-retarget-x264-mp4.log" | sed 's/^/    /'
    rm -f "$out/long-out.mp4"
  done
done
kill "$dmon" 2>/dev/null
