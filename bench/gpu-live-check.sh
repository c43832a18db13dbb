#!/usr/bin/env bash
# On the GPU host, after bench/gpu-bundle.sh (carry .gpu.tar.xz): the GPU
# tests (bench/gpu-check.sh tests), then three shared clips planned live
# (read through a FIFO) and reframed to 1:1 on the GPU and on the CPU, whose
# y4m frames and path files must be identical. Logs and a summary in $OUT.
set -u
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"
OUT="$OUT" bench/gpu-check.sh tests > "$OUT/tests-summary.txt" 2>&1
tail -20 "$OUT/tests-summary.txt"
. .gpu/b/env.sh
for spec in "dog-walk-720p 1:1" "cockatoo-handheld-720p 1:1" "film-dialogue-480p 1:1"; do
  set -- $spec; c=$1; a=$2
  for d in cuda cpu; do
    rm -f /tmp/ff; mkfifo /tmp/ff; cat .gpu/clips/$c.mp4 > /tmp/ff &
    seamstream run /tmp/ff /tmp/$c-$d.y4m --device $d --op reframe:aspect=$a --reframe-path /tmp/$c-$d.json > /tmp/$c-$d.log 2>&1; echo "$c $d rc=$?"
    wait
  done
  echo "$c frames: $(md5sum < /tmp/$c-cuda.y4m | cut -c1-12) cuda, $(md5sum < /tmp/$c-cpu.y4m | cut -c1-12) cpu; size $(stat -c %s /tmp/$c-cuda.y4m)"
  cmp -s /tmp/$c-cuda.json /tmp/$c-cpu.json && echo "$c paths equal" || echo "$c paths DIFFER"
  grep -i "running on\|device\|reframe:" /tmp/$c-cuda.log | head -3
done
