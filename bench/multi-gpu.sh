#!/usr/bin/env bash
# One job split over the host's GPUs (`run --gpus N`) against one GPU, on a
# long 1080p file, on a GPU host with several GPUs (issue 27):
#   here:  cargo build --release && bench/gpu-bundle.sh
#   there: bench/multi-gpu.sh [MINUTES]     (default 10)
# Makes the file there if absent ($tp/long-1080p.mp4: the shared
# dog-walk clip scaled to 1080p and repeated to MINUTES, x264 veryfast),
# then times, by wall clock, into null: one plain run, and --gpus 1, 2, …
# up to the host's GPUs, for fast retargeting to 75% width and for
# gaussian sigma=2; then the whole split job into an mp4 (x264 veryfast,
# joined) on one GPU and on every GPU. Each worker's start (frames counted,
# cuts looked for) is taken from its log. OPS="retarget:width=75%" and
# X264_GPUS="2" narrow the runs (device time is short). Logs go to $OUT.
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
  echo "made $clip ($loops loops) in $(( $(date +%s) - t0 )) s"
fi
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
row() { # name frames-source-log cmd...
  local name=$1; shift
  local t0; t0=$(date +%s%N)
  "$@" > "$out/$name.log" 2>&1; local rc=$?
  local t; t=$(ms "$t0")
  local frames
  frames=$(grep -oE '^[0-9]+ frames (in|of)' "$out/$name.log" | head -1 | grep -oE '^[0-9]+')
  [ -n "$frames" ] || frames=$(sed -n 's/.*"frames_out":\([0-9]*\).*/\1/p' "$out/$name.log" | head -1)
  printf '%-40s %7s %8d %9s %s\n' "$name" "${frames:-?}" "$t" \
    "$(awk -v f="${frames:-0}" -v t="$t" 'BEGIN { printf "%.1f", f * 1000 / t }')" \
    "$([ $rc = 0 ] || echo "FAILED rc=$rc: $(tail -2 "$out/$name.log" | tr '\n' ' ')")"
}
echo
printf '%-40s %7s %8s %9s\n' "run (into null unless said)" frames "wall ms" "fps"
row "one-run-retarget" seamstream run "$clip" null --device cuda --op retarget:width=75% --json
for op in ${OPS:-retarget:width=75% gaussian:sigma=2}; do
  n=${op%%:*}
  g=1
  while [ "$g" -le "$gpus" ]; do
    row "gpus-$g-$n" seamstream run "$clip" null --gpus "$g" --op "$op" --keep-parts
    # null keeps its workers' logs in $TMPDIR/seamstream-null-PID.parts.
    grep -h "^segment" "${TMPDIR:-/tmp}"/seamstream-null-*.parts/part-*.log 2>/dev/null \
      | sed 's/^/    /' | head -8
    rm -rf "${TMPDIR:-/tmp}"/seamstream-null-*.parts
    g=$(( g * 2 ))
    [ "$g" -gt "$gpus" ] && [ "$(( g / 2 ))" -lt "$gpus" ] && g=$gpus
  done
done
# Into x264: the encoders' share of the host's CPUs (from /proc/stat over
# the run) says how near the job is to the encoder's limit.
cpu() { awk '/^cpu / { print $2 + $3 + $4 + $5 + $6 + $7 + $8, $5 + $6 }' /proc/stat; }
for g in ${X264_GPUS:-1 $gpus}; do
  read -r t0 i0 < <(cpu)
  row "gpus-$g-retarget-x264-mp4" seamstream run "$clip" "$out/long-out.mp4" --gpus "$g" \
    --op retarget:width=75% --preset veryfast
  read -r t1 i1 < <(cpu)
  awk -v t=$((t1 - t0)) -v i=$((i1 - i0)) -v n="$(nproc)" \
    'BEGIN { printf "    CPU busy %.0f%% of %d cores over the run\n", 100 * (t - i) / t, n }'
  tail -3 "$out/gpus-$g-retarget-x264-mp4.log" | sed 's/^/    /'
  rm -f "$out/long-out.mp4"
done
