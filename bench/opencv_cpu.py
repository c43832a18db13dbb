#!/usr/bin/env python3
"""OpenCV's CPU time for the same work as benches/cpu_ops.rs, at 1920x1080.

    pip install opencv-python-headless numpy
    python3 bench/opencv_cpu.py --threads 2

Prints one line per operation: name, median ms over many runs after warm-up.
"""
import argparse
import statistics
import time

import cv2
import numpy as np

from testframe import H, W, rgb_channels


def frames():
    rgba = np.dstack(rgb_channels() + [np.full((H, W), 255, np.uint8)]).copy()
    gray = cv2.cvtColor(rgba, cv2.COLOR_RGBA2GRAY)
    return rgba, gray


def median_ms(fn, runs=40, warm=5):
    for _ in range(warm):
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    cv2.setNumThreads(args.threads)
    rgba, gray = frames()
    affine = np.array([[0.98, -0.17, 40], [0.17, 0.98, -30]], np.float64)
    persp = np.array([[1.02, 0.05, -20], [0.01, 1.01, 5], [0.00001, 0.00002, 1]], np.float64)
    k5 = np.outer([1, 4, 6, 4, 1], [1, 4, 6, 4, 1]).astype(np.float32)
    rep = cv2.BORDER_REPLICATE
    cases = {
        "gray rgba->gray": lambda: cv2.cvtColor(rgba, cv2.COLOR_RGBA2GRAY),
        "gaussian s2.5 17tap rgba": lambda: cv2.GaussianBlur(rgba, (17, 17), 2.5, borderType=rep),
        "gaussian s2.5 17tap gray": lambda: cv2.GaussianBlur(gray, (17, 17), 2.5, borderType=rep),
        "box r8 gray": lambda: cv2.blur(gray, (17, 17), borderType=rep),
        "convolve 5x5 gray": lambda: cv2.filter2D(gray, -1, k5, borderType=rep),
        "sobel3 magnitude gray": lambda: cv2.magnitude(
            cv2.Sobel(gray, cv2.CV_32F, 1, 0, borderType=rep), cv2.Sobel(gray, cv2.CV_32F, 0, 1, borderType=rep)),
        "warp affine bilinear rgba": lambda: cv2.warpAffine(rgba, affine, (W, H), flags=cv2.INTER_LINEAR),
        "warp perspective bilinear rgba": lambda: cv2.warpPerspective(rgba, persp, (W, H), flags=cv2.INTER_LINEAR),
        "threshold t128 gray": lambda: cv2.threshold(gray, 128, 255, cv2.THRESH_BINARY),
        "threshold otsu gray": lambda: cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU),
        "integral u32 gray": lambda: cv2.integral(gray, sdepth=cv2.CV_32S),
        "integral u32+u64 gray": lambda: cv2.integral2(gray, sdepth=cv2.CV_32S, sqdepth=cv2.CV_64F),
        "equalize gray": lambda: cv2.equalizeHist(gray),
    }
    print(f"# OpenCV {cv2.__version__}, {args.threads} threads, {W}x{H}, median ms")
    for name, fn in cases.items():
        print(f"{name:34s} {median_ms(fn):9.3f}")


if __name__ == "__main__":
    main()
