"""The cost of a call from Python: `Chain.apply` on a 64×64 RGBA frame with
no operation (the binding alone: the array in, the GIL released, the array
out), and with one, beside the same operation timed by `seamstream bench`.

    python python/bench/overhead.py
"""

import time

import numpy as np

import seamstream


def per_call_us(chain, frame, calls=3000, repeats=7):
    for _ in range(300):
        chain.apply(frame)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            chain.apply(frame)
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    return best


frame = np.zeros((64, 64, 4), np.uint8)
for ops in [(), ("threshold:t=100",), ("gaussian:sigma=2",)]:
    chain = seamstream.Chain(*ops, device="cpu")
    print(f"{' '.join(ops) or '(no operation)':20s} {per_call_us(chain, frame):8.2f} µs a call (best of 7)")
