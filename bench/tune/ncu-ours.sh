#!/usr/bin/env bash
# Our kernels' own durations (gpu__time_duration, what CUPTI reports for
# CV-CUDA in bench/peers/cvcuda_side.py), for the cases given, from the
# bench's graph replays: ncu without clock or cache control.
#   bench/tune/ncu-ours.sh "warp affine" "equalize gray" ...
for f in "$@"; do
  for s in 1920x1080 3840x2160; do
    ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
      --launch-skip 40 --launch-count 32 \
      seamstream bench ops --runs 5 --sizes $s --filter "$f" 2>/dev/null | python3 -c "
import sys, csv, collections
d = collections.defaultdict(list)
unit = ''
for r in csv.reader(sys.stdin):
    if len(r) > 5 and r[-3] == 'gpu__time_duration.sum':
        d[r[4].split('(')[0]].append(float(r[-1].replace(',', '')))
        unit = r[-2]
tot = sum(sorted(v)[len(v) // 2] for v in d.values())
print('%-32s %s  kernels: %s  sum of medians %.2f %s' % ('$f', '$s', ', '.join('%s %.2f' % (k, sorted(v)[len(v) // 2]) for k, v in d.items()), tot, unit))
"
  done
done
