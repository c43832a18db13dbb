#!/usr/bin/env python3
"""Time the seam-carving package (1.1, numba) on the same kind of work as the
`retarget` benchmark: a 1920x1080 RGB frame narrowed by N seams, backward and
forward energy. Prints ms per seam (median of a few runs after a warm-up
that compiles numba's code).

    pip install seam-carving==1.1.0
    python3 bench/seam_carving_py.py --seams 20
"""
import argparse
import statistics
import time

import numpy as np
import seam_carving

from testframe import H, W, rgb_channels


def frame():
    return np.dstack(rgb_channels()).copy()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seams", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    img = frame()
    print(f"# seam-carving {getattr(seam_carving, '__version__', '1.1.0')}, {W}x{H} -> {W - args.seams}x{H}")
    for mode in ["backward", "forward"]:
        seam_carving.resize(img[:64, :64], (60, 64), energy_mode=mode)  # compile
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            seam_carving.resize(img, (W - args.seams, H), energy_mode=mode, order="width-first")
            times.append((time.perf_counter() - t) * 1e3)
        ms = statistics.median(times)
        print(f"{mode:9s} {ms:9.1f} ms for {args.seams} seams, {ms / args.seams:7.2f} ms a seam")


if __name__ == "__main__":
    main()
