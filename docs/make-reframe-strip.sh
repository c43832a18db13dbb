#!/usr/bin/env bash
# Makes the README's 9:16 strip: four consecutive frames of a real clip,
# in rows: the original, plain scaling to 9:16 (area), the centre crop, and
# `reframe:aspect=9:16` (the program's own output). GStreamer decodes, PIL
# (python3-pil) tiles.
#   docs/make-reframe-strip.sh [CLIP] [FIRST] [ASPECT]   (after cargo build --release)
# CLIP defaults to the shared dog-walk clip, FIRST to 150, ASPECT to 9:16.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release/seamstream
clip=$(realpath "${1:-../shared/data/video/dog-walk-720p.mp4}")
first=${2:-150}
aspect=${3:-9:16}
out=docs/tour/reframe-${aspect/:/x}.jpg
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" run "$clip" "$tmp/reframed.mp4" --device cpu --op "reframe:aspect=$aspect" \
  --reframe-path "$tmp/path.json" > "$tmp/run.log" 2>&1 || { cat "$tmp/run.log"; exit 1; }
frames() { # clip, folder
  mkdir -p "$2"
  gst-launch-1.0 -q filesrc location="$1" ! decodebin ! videoconvert ! video/x-raw,format=RGB \
    ! pngenc ! multifilesink location="$2/%05d.png"
}
frames "$clip" "$tmp/in"
frames "$tmp/reframed.mp4" "$tmp/out"
python3 - "$tmp" "$first" "$out" <<'PY'
import sys
from PIL import Image, ImageDraw
tmp, first, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
H = 240
def get(folder, i):
    return Image.open(f"{tmp}/{folder}/{i:05d}.png").convert("RGB")
res = get("out", first)
ow, oh = res.size
H, GAP, LABEL = 240, 6, 18
def fit(im, h):
    return im.resize((max(1, im.width * h // im.height), h), Image.BOX)
groups = []
for label, make in [
    ("original", lambda im: im),
    ("scaled", lambda im: im.resize((ow, oh), Image.BOX)),
    ("centre crop", lambda im: im.crop(((im.width - ow * im.height // oh) // 2, 0,
                                        (im.width + ow * im.height // oh) // 2, im.height))),
    ("reframe", None),
]:
    h = H * 3 // 4 if make is not None and label == "original" else H
    tiles = [fit(get("out", i) if make is None else make(get("in", i)), h)
             for i in range(first, first + 4)]
    groups.append((label, tiles))
# The original's four frames on top; below, the three results side by side.
top_w = sum(t.width for t in groups[0][1]) + GAP * 3
low = groups[1:]
low_w = sum(sum(t.width for t in ts) + GAP * 3 for _, ts in low) + 4 * GAP * (len(low) - 1)
width = max(top_w, low_w)
top_h = groups[0][1][0].height
sheet = Image.new("RGB", (width, LABEL + top_h + GAP + LABEL + H), "white")
d = ImageDraw.Draw(sheet)
def place(x, y, label, tiles):
    d.text((x, y + 3), f"{label} (frames {first}-{first + 3})", fill="black")
    for t in tiles:
        sheet.paste(t, (x, y + LABEL))
        x += t.width + GAP
    return x
place(0, 0, *groups[0])
x = 0
for label, ts in low:
    x = place(x, LABEL + top_h + GAP, label, ts) + 3 * GAP
sheet.save(out, quality=82)
print(out, sheet.size)
PY
grep -A3 "^reframe" "$tmp/run.log" || true
