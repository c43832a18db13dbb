#!/usr/bin/env python3
"""How far a job split in time (`run --segment K/N`, then `join`) strays
from one run of the same job, for an operation with memory (fast
retargeting), as a function of the warm-up.

For each clip: one run, then N segments for each warm-up W, all encoded
losslessly (--crf 0), decoded with ffmpeg and compared frame by frame. Prints
a Markdown table: the mean absolute difference (levels, RGB) over all frames,
over the first 30 frames of each part after the first, and over the rest,
and the share of frames that are identical.

    python3 bench/segments_mad.py CLIP... [--op retarget:width=75%] [--parts 3]
        [--warmups 0,30,90] [--device cpu] [--bin target/release/seamstream]
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return r.stderr


def frames(path):
    info = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v", "-show_entries",
         "stream=width,height", "-of", "csv=p=0", path],
        capture_output=True, text=True, check=True).stdout.split(",")
    w, h = int(info[0]), int(info[1])
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo",
                          "-pix_fmt", "rgb24", "-"], capture_output=True, check=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("clips", nargs="+")
    ap.add_argument("--op", default="retarget:width=75%")
    ap.add_argument("--parts", type=int, default=3)
    ap.add_argument("--warmups", default="0,30,90")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--bin", default="target/release/seamstream")
    a = ap.parse_args()
    lossless = ["--device", a.device, "--crf", "0", "--preset", "ultrafast", "--op", a.op]
    print(f"`{a.op}`, {a.parts} parts, device {a.device}\n")
    print("| clip | warm-up | MAD all | MAD first 30 of a part | MAD after | identical frames |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for clip in a.clips:
            name = os.path.basename(clip).rsplit(".", 1)[0]
            single = os.path.join(d, f"{name}-single.mp4")
            run([a.bin, "run", clip, single, "--no-audio"] + lossless)
            ref = frames(single).astype(np.int16)
            for w in [int(x) for x in a.warmups.split(",")]:
                parts, starts = [], []
                for k in range(a.parts):
                    p = os.path.join(d, f"{name}-w{w}-{k}.mp4")
                    said = run([a.bin, "run", clip, p, "--segment", f"{k}/{a.parts}",
                                "--warmup", str(w)] + lossless)
                    line = next(l for l in said.splitlines() if l.startswith("segment "))
                    starts.append(int(line.split("frames ")[1].split("..")[0]))
                    parts.append(p)
                joined = os.path.join(d, f"{name}-w{w}.mp4")
                run([a.bin, "join", joined] + parts)
                got = frames(joined).astype(np.int16)
                assert got.shape == ref.shape, (got.shape, ref.shape)
                mad = np.abs(got - ref).mean(axis=(1, 2, 3))
                near = np.zeros(len(mad), bool)
                for s in starts[1:]:
                    near[s:s + 30] = True
                after = mad[~near & (np.arange(len(mad)) >= starts[1])]
                print(f"| {name} | {w} | {mad.mean():.3f} | {mad[near].mean():.3f} | "
                      f"{after.mean() if len(after) else 0:.3f} | {(mad == 0).mean() * 100:.0f}% |",
                      flush=True)


if __name__ == "__main__":
    main()
