"""CV-CUDA timed the way `seamstream bench` times our operations, on the same
cases with the same parameters, for the three-way table of
bench/results/peers-h100.md.

Method (src/cuda/timing.rs): random inputs; 20 warm-up calls; then RUNS
batches of 8 calls, each batch captured once into a CUDA graph
(torch.cuda.CUDAGraph) and replayed between two CUDA events, the calls
rotating over 4 input/output sets. The figure is per call: median, 10th and
90th percentile over the batches. A call that cannot be captured is timed
as 8 direct calls between events instead ("method": "direct"; Python's
launch cost then counts).

Beside it, as ../shared/peers/cvcuda_bench.py measured it, the sum of the
kernels a call launches (CUPTI through torch.profiler) divided by the calls:
"cupti_us", which leaves out the gaps between kernels that a graph replay
still has.

usage (GPU host, CV-CUDA 0.19 unpacked in PYTHONPATH):
    python3 cvcuda_side.py [--runs 200] [--json FILE]
"""
import argparse
import json
import math

import numpy as np
import torch
import cvcuda
from torch.profiler import ProfilerActivity, profile

SETS, BATCH, WARMUP = 4, 8, 20

ap = argparse.ArgumentParser()
ap.add_argument("--runs", type=int, default=200)
ap.add_argument("--json")
args = ap.parse_args()
dev = torch.device("cuda")


def nhwc(h, w, c, fill=True):
    t = (
        torch.randint(0, 256, (1, h, w, c), dtype=torch.uint8, device=dev)
        if fill
        else torch.empty((1, h, w, c), dtype=torch.uint8, device=dev)
    )
    return t, cvcuda.as_tensor(t, "NHWC")


def percentiles(us):
    us = sorted(us)
    n = len(us)
    return us[n // 10], us[n // 2], us[n * 9 // 10]


def time_graph(call):
    """call(k, stream) enqueues one call on set k. Returns (p10, median, p90, method)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        st = cvcuda.as_stream(side)
        for i in range(WARMUP):
            call(i % SETS, st)
    torch.cuda.synchronize()
    graph, method = torch.cuda.CUDAGraph(), "graph"
    try:
        # Relaxed, as ours (src/cuda/timing.rs): CV-CUDA's calls may query
        # the stream, which the global mode forbids while capturing.
        with torch.cuda.graph(graph, capture_error_mode="relaxed"):
            st = cvcuda.as_stream(torch.cuda.current_stream())
            for i in range(BATCH):
                call(i % SETS, st)
        replay = graph.replay
    except Exception as ex:  # CV-CUDA refused capture: direct calls
        torch.cuda.synchronize()
        method = "direct: " + str(ex).splitlines()[0][:120]
        st = cvcuda.as_stream(torch.cuda.current_stream())

        def replay():
            for i in range(BATCH):
                call(i % SETS, st)

    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    us = []
    for _ in range(args.runs):
        a.record()
        replay()
        b.record()
        b.synchronize()
        us.append(a.elapsed_time(b) * 1000 / BATCH)
    return (*percentiles(us), method)


def time_cupti(call, runs=100):
    st = cvcuda.as_stream(torch.cuda.current_stream())
    for i in range(10):
        call(i % SETS, st)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(runs):
            call(i % SETS, st)
        torch.cuda.synchronize()
    total, names = 0.0, set()
    for e in prof.key_averages():
        t = getattr(e, "self_device_time_total", None)
        if t is None:
            t = getattr(e, "self_cuda_time_total", 0.0)
        if t and t > 0 and not e.key.startswith("Memcpy") and not e.key.startswith("Memset"):
            total += t
            names.add(e.key)
    return total / runs, sorted(names)


# Our matrices (src/bench/mod.rs), source to destination; CV-CUDA inverts
# them itself without WARP_INVERSE_MAP, as we do.
AFFINE = np.array([[0.96, -0.17, 40], [0.17, 0.96, -60]], np.float32)
PERSPECTIVE = np.array([[0.9, -0.1, 30], [0.05, 0.95, -20], [0.00002, 0.00001, 1]], np.float32)

# Every tensor is made before any capture: a refused capture leaves
# torch's random generator unusable.
tensors = {}
for W, H in [(1920, 1080), (3840, 2160)]:
    tensors[W, H] = (
        [nhwc(H, W, 4) for _ in range(SETS)],
        [nhwc(H, W, 1) for _ in range(SETS)],
        [nhwc(H, W, 4, False) for _ in range(SETS)],
        [nhwc(H, W, 1, False) for _ in range(SETS)],
    )
rows = []
for W, H in [(1920, 1080), (3840, 2160)]:
    rgba, gray, out4, out1 = tensors[W, H]
    thr = cvcuda.as_tensor(torch.tensor([128.0], dtype=torch.float64, device=dev), "N")
    mx = cvcuda.as_tensor(torch.tensor([255.0], dtype=torch.float64, device=dev), "N")
    border = [0, 0, 0, 255]
    B = cvcuda.Border
    cases = [
        ("gaussian 17 taps RGBA", "gaussian 17x17 sigma 2.5 (2-D kernel)",
         lambda k, s: cvcuda.gaussian_into(out4[k][1], rgba[k][1], (17, 17), (2.5, 2.5), B.REPLICATE, stream=s)),
        ("gaussian 17 taps gray", "gaussian 17x17 sigma 2.5 (2-D kernel)",
         lambda k, s: cvcuda.gaussian_into(out1[k][1], gray[k][1], (17, 17), (2.5, 2.5), B.REPLICATE, stream=s)),
        ("box r=8 gray", "averageblur 17x17",
         lambda k, s: cvcuda.averageblur_into(out1[k][1], gray[k][1], (17, 17), (-1, -1), B.REPLICATE, stream=s)),
        ("box r=8 RGBA", "averageblur 17x17",
         lambda k, s: cvcuda.averageblur_into(out4[k][1], rgba[k][1], (17, 17), (-1, -1), B.REPLICATE, stream=s)),
        ("warp affine bilinear RGBA", "warp_affine linear, constant border",
         lambda k, s: cvcuda.warp_affine_into(out4[k][1], rgba[k][1], AFFINE, cvcuda.Interp.LINEAR,
                                              border_mode=B.CONSTANT, border_value=border, stream=s)),
        ("warp perspective bilinear RGBA", "warp_perspective linear, constant border",
         lambda k, s: cvcuda.warp_perspective_into(out4[k][1], rgba[k][1], PERSPECTIVE, cvcuda.Interp.LINEAR,
                                                   border_mode=B.CONSTANT, border_value=border, stream=s)),
        ("threshold gray", "threshold BINARY 128",
         lambda k, s: cvcuda.threshold_into(out1[k][1], gray[k][1], thr, mx, cvcuda.ThresholdType.BINARY, stream=s)),
        ("threshold otsu gray", "threshold BINARY|OTSU",
         lambda k, s: cvcuda.threshold_into(out1[k][1], gray[k][1], thr, mx,
                                            int(cvcuda.ThresholdType.BINARY) | int(cvcuda.ThresholdType.OTSU), stream=s)),
        ("RGBA to gray", "cvtcolor RGBA2GRAY (BT.601 weights)",
         lambda k, s: cvcuda.cvtcolor_into(out1[k][1], rgba[k][1], cvcuda.ColorConversion.RGBA2GRAY, stream=s)),
        ("equalize gray", "histogrameq",
         lambda k, s: cvcuda.histogrameq_into(out1[k][1], gray[k][1], stream=s)),
        ("equalize RGBA", "histogrameq (per channel; ours equalises luma)",
         lambda k, s: cvcuda.histogrameq_into(out4[k][1], rgba[k][1], stream=s)),
    ]
    for op, what, call in cases:
        row = {"op": op, "width": W, "height": H, "call": what}
        try:
            p10, med, p90, method = time_graph(call)
            row.update(median_us=round(med, 3), p10_us=round(p10, 3), p90_us=round(p90, 3), method=method)
        except Exception as ex:
            row["error"] = str(ex)[:200]
        try:
            cu, names = time_cupti(call)
            row.update(cupti_us=round(cu, 3), kernels=names[:4])
        except Exception as ex:
            row.setdefault("error", str(ex)[:200])
        rows.append(row)
        print(f"{op:32s} {W}x{H}  {row.get('median_us', float('nan')):8.2f} us ({row.get('method', '-')})"
              f"  cupti {row.get('cupti_us', float('nan')):8.2f} us  {row.get('error', '')}", flush=True)
        torch.cuda.synchronize()
info = {"peer": f"CV-CUDA {getattr(cvcuda, '__version__', '?')}", "torch": torch.__version__,
        "device": torch.cuda.get_device_name(), "runs": args.runs, "rows": rows}
print(info["peer"], info["torch"], info["device"])
if args.json:
    with open(args.json, "w") as f:
        json.dump(info, f, indent=1)
