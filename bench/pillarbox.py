#!/usr/bin/env python3
"""A shared clip set inside a 16:9 frame, as vertical video posted at 16:9
is: a column of the clip (`x0`, `cw` pixels wide, at the size given) centred
in the frame beside a blurred, enlarged copy of itself (`blur`) or black
bars (`black`), encoded with x264 (4:2:0). The box file beside a shared
clip, moved to the column (boxes wholly inside it kept), is written next
to the output as OUT.json. Needs numpy and Pillow.

  bench/pillarbox.py SRC OUT W H FPS X0 CW blur|black [BOXES]
  e.g. bench/pillarbox.py ../shared/data/video/juggler-720p.mp4 jpill.mp4 \\
       1280 720 24/1 530 406 blur bench/reframe/juggler-720p.json
"""
import json
import subprocess
import sys

import numpy as np
from PIL import Image, ImageFilter

src, out, W, H, fps, x0, cw, fill = sys.argv[1:9]
W, H, x0, cw = int(W), int(H), int(x0), int(cw)
px = (W - cw) // 2
dec = ["gst-launch-1.0", "-q", "filesrc", f"location={src}", "!", "decodebin", "!",
       "videoconvert", "!", "videoscale", "!",
       f"video/x-raw,format=RGBx,width={W},height={H}", "!", "fdsink", "fd=1"]
enc = ["gst-launch-1.0", "-q", "fdsrc", "fd=0", "!", "rawvideoparse", f"width={W}",
       f"height={H}", "format=rgbx", f"framerate={fps}", "!", "videoconvert", "!",
       "video/x-raw,format=I420", "!", "x264enc", "speed-preset=veryfast", "qp-max=20", "!",
       "mp4mux", "!", "filesink", f"location={out}"]
p = subprocess.Popen(dec, stdout=subprocess.PIPE)
q = subprocess.Popen(enc, stdin=subprocess.PIPE)
n = 0
while True:
    b = p.stdout.read(W * H * 4)
    if len(b) < W * H * 4:
        break
    f = np.frombuffer(b, np.uint8).reshape(H, W, 4)[:, :, :3]
    col = np.ascontiguousarray(f[:, x0:x0 + cw])
    if fill == "blur":
        bh = int(H * W / cw)
        bg = Image.fromarray(col).resize((W, bh))
        bg = bg.crop((0, (bh - H) // 2, W, (bh - H) // 2 + H)).filter(ImageFilter.GaussianBlur(25))
        frame = np.array(bg)
    else:
        frame = np.zeros((H, W, 3), np.uint8)
    frame[:, px:px + cw] = col
    q.stdin.write(np.dstack([frame, np.zeros((H, W, 1), np.uint8)]).tobytes())
    n += 1
q.stdin.close()
q.wait()
print(f"{out}: {n} frames, the picture at {px}..{px + cw}")
if len(sys.argv) > 9:
    boxes = json.load(open(sys.argv[9]))
    sx = W / boxes["size"][0]
    kept = []
    for b in boxes["boxes"]:
        x, y, w, h = b["box"]
        x, w = round(x * sx), round(w * sx)
        if x >= x0 and x + w <= x0 + cw:
            kept.append(dict(b, box=[x - x0 + px, y, w, h]))
    json.dump({"clip": out.rsplit("/", 1)[-1], "size": [W, H], "boxes": kept},
              open(out.rsplit(".", 1)[0] + ".json", "w"))
    print(f"{len(kept)} of {len(boxes['boxes'])} boxes inside the picture")
