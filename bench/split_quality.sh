#!/usr/bin/env bash
# Retargeting quality of a job split in time against one run, on real clips:
# one run, `--workers 3` (the default warm-up) and `--workers 3 --warmup 0`
# (each part's seams placed afresh), each judged by `seamstream quality`
# against the original (similarity and flicker as ratios to plain scaling).
#   bench/split_quality.sh CLIP...    (CPU; lossless output, so only the split differs)
set -euo pipefail
bin=${SEAMSTREAM:-target/release/seamstream}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
common=(--device cpu --op retarget:width=75% --crf 0 --preset ultrafast --no-audio)
echo "| clip | job | similarity ÷ scaling | flicker ÷ scaling |"
echo "|---|---|---|---|"
for clip in "$@"; do
  name=$(basename "$clip"); name=${name%.*}
  for job in "one run" "3 workers" "3 workers, --warmup 0"; do
    case $job in
      "one run") extra=() ;;
      "3 workers") extra=(--workers 3) ;;
      *) extra=(--workers 3 --warmup 0) ;;
    esac
    out="$tmp/$name.mp4"; rm -f "$out"
    "$bin" run "$clip" "$out" "${common[@]}" "${extra[@]}" > /dev/null 2>&1
    q=$("$bin" quality "$clip" "$out" --every 15 --json)
    python3 -c 'import json,sys; q=json.loads(sys.argv[1]); print("| %s | %s | %.3f | %.3f |" % (sys.argv[2], sys.argv[3], q["similarity"]["ratio"], q["flicker"]["ratio"]))' "$q" "$name" "$job"
  done
done
