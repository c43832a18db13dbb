#!/usr/bin/env bash
# A split job's worker start, two builds side by side (issue 27: each
# worker's fixed cost keeps N GPUs from N times one). For each op, each
# build runs one worker alone (`--segment 0/N` on GPU 0) and N at once, one
# per GPU (`--segment K/N`), into null, alternating builds, REPS times.
# Prints each process's wall time and its own "segment timing" line.
#   here:  bench/gpu-bundle.sh, with the second build copied beside it
#   there: bench/start-time.sh BIN_A BIN_B [CLIP]   (REPS=3, OPS="gaussian:sigma=2 ...")
set -u
. .gpu/b/env.sh
export SEAMSTREAM_CACHE=${SEAMSTREAM_CACHE:-/tmp/seamstream-cache}
a=$1 b=$2 clip=${3:-.gpu/clips/dog-walk-720p.mp4}
gpus=$(nvidia-smi -L | wc -l)
reps=${REPS:-3}
out=${OUT:-start-out}; mkdir -p "$out"
# The kernels in the cache and the registry written, once, before timing.
for bin in "$a" "$b"; do
  for op in gaussian:sigma=2 retarget:width=75%; do
    "$bin" run "$clip" null --device cuda --op "$op" > /dev/null 2>&1
  done
done
now() { date +%s%N; }
workers() { # bin op n: n workers at once, one per GPU; prints wall ms and each worker's fixed cost
  local bin=$1 op=$2 n=$3 pids=() i t0
  t0=$(now)
  for i in $(seq 0 $(( n - 1 ))); do
    CUDA_VISIBLE_DEVICES=$i "$bin" run "$clip" null --device cuda --op "$op" --segment "$i/$n" \
      > "$out/w$i.log" 2>&1 & pids+=($!)
  done
  local rc=0; for i in "${pids[@]}"; do wait "$i" || rc=1; done
  local ms=$(( ($(now) - t0) / 1000000 ))
  local fixed
  fixed=$(sed -n 's/.*s from the source.s start to its end, \([0-9.]*\) s before and after.*/\1/p' \
    "$out"/w*.log | tr '\n' ' ')
  printf '%-10s %-20s %d at once  wall %6d ms  before+after per worker: %s%s\n' \
    "$(basename "$bin")" "$op" "$n" "$ms" "$fixed" "$([ $rc = 0 ] || echo " FAILED")"
  rm -f "$out"/w*.log
}
for op in ${OPS:-gaussian:sigma=2 retarget:width=75%}; do
  for r in $(seq "$reps"); do
    for n in 1 "$gpus"; do
      workers "$a" "$op" "$n"
      workers "$b" "$op" "$n"
    done
  done
done
