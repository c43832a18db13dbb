#!/usr/bin/env python3
"""Makes bench/results/cpu-1080p.md from criterion's estimates and OpenCV's times.

    cargo bench --bench cpu_ops -- --noplot
    python3 bench/opencv_cpu.py --threads 2 > /tmp/opencv.txt
    python3 bench/seam_carving_py.py --seams 20 > /tmp/seam_carving.txt
    python3 bench/cpu_table.py /tmp/opencv.txt /tmp/seam_carving.txt > bench/results/cpu-1080p.md
"""
import json
import os
import platform
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRIT = os.path.join(ROOT, "target", "criterion")

# (benchmark name, OpenCV line, goal): goal is the ratio ours/OpenCV to meet, or None.
ROWS = [
    ("gray rgba->gray", "gray rgba->gray", None),
    ("yuv rgba->i420->rgba", None, None),
    ("gaussian s2.5 17tap rgba", "gaussian s2.5 17tap rgba", 2.0),
    ("gaussian s2.5 17tap gray", "gaussian s2.5 17tap gray", 2.0),
    ("box r8 gray", "box r8 gray", None),
    ("convolve 5x5 gray", "convolve 5x5 gray", None),
    ("sobel3 magnitude gray", "sobel3 magnitude gray", None),
    ("warp affine bilinear rgba", "warp affine bilinear rgba", 2.0),
    ("warp perspective bilinear rgba", "warp perspective bilinear rgba", 2.0),
    ("threshold t128 gray", "threshold t128 gray", None),
    ("threshold otsu gray", "threshold otsu gray", None),
    ("adaptive sauvola w15 gray", None, None),
    ("integral u32 gray", "integral u32 gray", 2.0),
    ("integral u32+u64 gray", "integral u32+u64 gray", 2.0),
    ("equalize gray", "equalize gray", None),
]


def crit_dir(name):
    return os.path.join(CRIT, name.replace(">", "_").replace("/", "_"))


def median_ms(path):
    with open(os.path.join(path, "new", "estimates.json")) as f:
        return json.load(f)["median"]["point_estimate"] / 1e6


def main():
    opencv = {}
    header = ""
    with open(sys.argv[1]) as f:
        for line in f:
            if line.startswith("#"):
                header = line[1:].strip()
                continue
            name, ms = line.rsplit(None, 1)
            opencv[name.strip()] = float(ms)
    cpu = subprocess.run(["sh", "-c", "lscpu | sed -n 's/^Model name: *//p'"], capture_output=True, text=True).stdout.strip()
    print("# CPU reference at 1920×1080\n")
    print(f"Machine: {cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; "
          "built for x86-64-v3 (`.cargo/config.toml`).  ")
    print(f"OpenCV: {header}.\n")
    print("Commands:\n")
    print("```")
    print("cargo bench --bench cpu_ops -- --noplot")
    print("python3 bench/opencv_cpu.py --threads 2 > /tmp/opencv.txt")
    print("python3 bench/seam_carving_py.py --seams 20 > /tmp/seam_carving.txt")
    print("python3 bench/cpu_table.py /tmp/opencv.txt /tmp/seam_carving.txt > bench/results/cpu-1080p.md")
    print("```\n")
    print("Median ms per frame (criterion; OpenCV: median of 40 runs after warm-up, same threads).\n")
    print("| operation | seamstream ms | OpenCV ms | ratio | goal |")
    print("|---|---:|---:|---:|---|")
    for name, cv_name, goal in ROWS:
        ours = median_ms(crit_dir(name))
        cv = opencv.get(cv_name) if cv_name else None
        ratio = f"{ours / cv:.2f}×" if cv else ""
        g = ""
        if goal and cv:
            g = ("met" if ours <= goal * cv else "**missed**") + f" (≤ {goal:g}×)"
        print(f"| {name} | {ours:.3f} | {cv:.3f} | {ratio} | {g} |" if cv else f"| {name} | {ours:.3f} | | | |")
    print()
    py = {}
    py_header = ""
    if len(sys.argv) > 2:
        with open(sys.argv[2]) as f:
            for line in f:
                if line.startswith("#"):
                    py_header = line[1:].strip()
                elif line.strip():
                    parts = line.split()
                    py[parts[0]] = float(parts[-4])  # "... , X ms a seam"
    print("Exact seam carving, RGBA 1920×1080 → 1900×1080, 20 seams (energy map, DP, backtrack, removal, "
          "band update). Goal: ≤ 20 ms a seam. Python: " + (py_header or "not run") + ", same frame, 2 cores.\n")
    print("| energy | seamstream ms for 20 seams | seamstream ms a seam | seam-carving (Python) ms a seam | speed-up | goal |")
    print("|---|---:|---:|---:|---:|---|")
    for energy, py_name in [("basic", "backward"), ("forward", "forward")]:
        ms = median_ms(os.path.join(CRIT, "retarget", f"exact 20 seams rgba {energy}"))
        per = ms / 20
        p = py.get(py_name)
        ps = f"{p:.1f}" if p else ""
        up = f"{p / per:.1f}×" if p else ""
        print(f"| {energy} ({py_name} in Python) | {ms:.1f} | {per:.2f} | {ps} | {up} | {'met' if per <= 20 else '**missed**'} (≤ 20 ms) |")


if __name__ == "__main__":
    main()
