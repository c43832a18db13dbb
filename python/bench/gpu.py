"""The GPU path's cost per call from Python: `Chain.apply` on a 1080p RGBA
torch CUDA tensor, `gaussian:sigma=2.5` (what `seamstream bench` calls
"gaussian 17 taps RGBA"), beside the parts of a call:

- µs a call: 200 calls, then `torch.cuda.synchronize()`, best of 7;
- host µs a call: the same 200 calls timed before the synchronize (what the
  host spends enqueuing; the GPU hides it when it is the smaller);
- the tensor's `__cuda_array_interface__` alone (torch builds it in Python);
- the same tensor through DLPack only (as a JAX array comes).

    python python/bench/gpu.py          # on the GPU host, with torch
"""

import time

import numpy as np
import torch

import seamstream


class DlpackOnly:
    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack__(self, stream=None, **kwargs):
        return self.tensor.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


def per_call(f, calls=200, repeats=7):
    for _ in range(20):
        f()
    torch.cuda.synchronize()
    best, best_host = float("inf"), float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            f()
        host = time.perf_counter() - start
        torch.cuda.synchronize()
        total = time.perf_counter() - start
        best = min(best, total / calls * 1e6)
        best_host = min(best_host, host / calls * 1e6)
    return best, best_host


rng = np.random.default_rng(3)
host = rng.integers(0, 256, (1080, 1920, 4), dtype=np.uint8)
x = torch.from_numpy(host).cuda()
chain = seamstream.Chain("gaussian:sigma=2.5", device="cuda")
print(f"seamstream from {seamstream.__file__}")
total, enq = per_call(lambda: chain.apply(x))
print(f"Chain.apply, torch tensor:        {total:6.1f} µs a call, host {enq:6.1f}")
wrapped = DlpackOnly(x)
try:
    total, enq = per_call(lambda: chain.apply(wrapped))
    print(f"Chain.apply, DLPack only:         {total:6.1f} µs a call, host {enq:6.1f}")
except Exception as e:  # the build before DLPack inputs
    print(f"Chain.apply, DLPack only:         not taken ({type(e).__name__}: {e})")
_, cai = per_call(lambda: x.__cuda_array_interface__)
print(f"x.__cuda_array_interface__ alone: {cai:6.1f} µs")
empty = seamstream.Chain(device="cuda")
total, enq = per_call(lambda: empty.apply(x))
print(f"Chain() (no op, a device copy):   {total:6.1f} µs a call, host {enq:6.1f}")
