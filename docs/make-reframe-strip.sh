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
rows = []
for label, make in [
    ("original", lambda im: im),
    ("scaled", lambda im: im.resize((ow, oh), Image.BOX)),
    ("centre crop", lambda im: im.crop(((im.width - ow * im.height // oh) // 2, 0,
                                        (im.width + ow * im.height // oh) // 2, im.height))),
    ("reframe", None),
]:
    tiles = []
    for i in range(first, first + 4):
        im = get("out", i) if make is None else make(get("in", i))
        tiles.append(im.resize((max(1, im.width * H // im.height), H), Image.BOX))
    rows.append((label, tiles))
width = max(sum(t.width for t in ts) + 6 * (len(ts) - 1) for _, ts in rows) + 110
sheet = Image.new("RGB", (width, len(rows) * (H + 6) - 6), "white")
d = ImageDraw.Draw(sheet)
for r, (label, ts) in enumerate(rows):
    y = r * (H + 6)
    d.text((6, y + H // 2 - 6), label, fill="black")
    x = 110
    for t in ts:
        sheet.paste(t, (x, y))
        x += t.width + 6
sheet.save(out, quality=82)
print(out, sheet.size)
PY
grep -A3 "^reframe" "$tmp/run.log" || true
