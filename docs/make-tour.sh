#!/usr/bin/env bash
# Makes the before/after pictures of the README's tour with the program itself.
#   docs/make-tour.sh        (after cargo build --release)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release/seamstream
out=docs/tour
mkdir -p "$out"
cat=examples/data/chelsea.png
cup=examples/data/coffee.png
run() { "$bin" image --device cpu "$@"; }
run "$cup" "$out/retarget-4x3.jpg" --op retarget:width=533
run "$cup" "$out/retarget-9x16.jpg" --op retarget:width=225,height=400
run "$cup" "$out/retarget-wider.jpg" --op retarget:width=800
run "$cat" "$out/retarget-cat-exact.jpg" --op retarget:width=75%,mode=exact
run "$cat" "$out/retarget-cat-fast.jpg" --op retarget:width=75%,mode=fast
run "$cat" "$out/gaussian.jpg" --op gaussian:sigma=3
run "$cat" "$out/sobel.jpg" --op sobel:ksize=3
run "$cat" "$out/warp.jpg" --op "warp:perspective=[0.9,0.1,20,-0.05,0.95,30,0.0002,0.0001,1],interpolation=bicubic"
run "$cat" "$out/threshold-otsu.jpg" --op threshold:t=otsu
run "$cat" "$out/adaptive-sauvola.jpg" --op adaptive:method=sauvola,window=25
run "$cat" "$out/equalize.jpg" --op equalize
run "$cat" "$out/integral.jpg" --op integral
run "$cat" "$out/segment.jpg" --op segment
run "$cat" "$out/segment-borders.jpg" --op segment:output=borders
du -sh "$out"
