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
    ap.add_argument("--only", help="run only the cases whose name contains this")
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
    gst = lambda tail: ["gst-launch-1.0", "-q", *f"{src} ! {tail}".split()]
    # The stage runs on threads of its own, so the reference is given both
    # as written (identity in the source's thread) and with queues around
    # identity (the same threads as ours).
    cases = [
        ("to null, no op", gst("identity ! fakesink sync=false"),
         gst("queue ! identity ! queue ! fakesink sync=false"), ours + ["-o", "null"]),
        ("to null, gaussian sigma=2", None, None, ours + ["-o", "null", "--op", "gaussian:sigma=2"]),
        ("to x264 mp4, no op", gst(f"identity ! {enc}"), gst(f"queue ! identity ! queue ! {enc}"),
         ours + ["-o", mp4]),
        # Retargeting to 75% width against scaling to it (videoscale; the
        # bundle has no videocrop): frames of the same size reach the
        # encoder, so the difference is what the carving costs.
        (f"to x264 mp4, retarget:width=75% (reference: videoscale to {int(w) * 3 // 4}x{h})",
         gst(f"videoscale ! video/x-raw,width={int(w) * 3 // 4},height={h} ! {enc}"),
         gst(f"queue ! videoscale ! video/x-raw,width={int(w) * 3 // 4},height={h} ! queue ! {enc}"),
         ours + ["-o", mp4, "--op", "retarget:width=75%"]),
    ]
    print(f"{a.frames} frames of {a.size}, videotestsrc pattern=ball, median of {a.repeat} runs, "
          f"seamstream --device {a.device}; {os.cpu_count()} CPUs\n")
    print("| case | GStreamer + identity: s (fps) | GStreamer + queue ! identity ! queue: s (fps) "
          "| seamstream run: s (fps) | throughput lost vs the faster reference |")
    print("|---|---|---|---|---|")
    cell = lambda t: f"{t:.2f} ({a.frames / t:.0f})" if t else "—"
    for name, plain, queued, mine in cases:
        if a.only and a.only not in name:
            continue
        g = statistics.median(timed(plain) for _ in range(a.repeat)) if plain else None
        q = statistics.median(timed(queued) for _ in range(a.repeat)) if queued else None
        m = statistics.median(timed(mine) for _ in range(a.repeat))
        best = min(t for t in (g, q) if t) if g or q else None
        lost = f"{(1 - best / m) * 100:.0f}%" if best else "—"
        print(f"| {name} | {cell(g)} | {cell(q)} | {cell(m)} | {lost} |")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
