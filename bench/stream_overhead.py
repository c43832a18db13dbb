#!/usr/bin/env python3
"""What `seamstream run` costs over plain GStreamer.

Runs `seamstream run` on a test source (empty chain, then a gaussian) and the
same GStreamer pipeline with `identity` where our stage is, each several
times, and prints a markdown table of median wall time and frames per second.

    python3 bench/stream_overhead.py [--seamstream PATH] [--frames N] [--size WxH]
                                     [--repeat N] [--device cpu|cuda]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time


def timed(cmd):
    start = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return elapsed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seamstream", default="target/release/seamstream")
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    w, h = a.size.split("x")
    tmp = tempfile.mkdtemp()
    mp4 = os.path.join(tmp, "o.mp4")
    src = (f"videotestsrc pattern=ball num-buffers={a.frames} ! "
           f"video/x-raw,width={w},height={h},framerate=30/1 ! videoconvert ! video/x-raw,format=RGBA")
    enc = ("videoconvert ! video/x-raw,format=I420 ! x264enc speed-preset=veryfast bframes=0 ! "
           f"h264parse ! mp4mux ! filesink location={mp4}")
    ours = [a.seamstream, "run", "test:ball", "--size", a.size, "--frames", str(a.frames),
            "--device", a.device]
    cases = [
        ("to null, no op", ["gst-launch-1.0", "-q", *f"{src} ! identity ! fakesink sync=false".split()],
         ours + ["-o", "null"]),
        ("to null, gaussian sigma=2", None, ours + ["-o", "null", "--op", "gaussian:sigma=2"]),
        ("to x264 mp4, no op", ["gst-launch-1.0", "-q", *f"{src} ! identity ! {enc}".split()],
         ours + ["-o", mp4]),
    ]
    print(f"{a.frames} frames of {a.size}, videotestsrc pattern=ball, median of {a.repeat} runs, "
          f"seamstream --device {a.device}; {os.cpu_count()} CPUs\n")
    print("| case | GStreamer + identity: s (fps) | seamstream run: s (fps) | overhead |")
    print("|---|---|---|---|")
    for name, gst, mine in cases:
        g = statistics.median(timed(gst) for _ in range(a.repeat)) if gst else None
        m = statistics.median(timed(mine) for _ in range(a.repeat))
        gs = f"{g:.2f} ({a.frames / g:.0f})" if g else "—"
        ov = f"{(m / g - 1) * 100:+.0f}%" if g else "—"
        print(f"| {name} | {gs} | {m:.2f} ({a.frames / m:.0f}) | {ov} |")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
