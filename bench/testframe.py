"""The deterministic 1920x1080 test frame of benches/cpu_ops.rs, in numpy."""
import numpy as np

W, H = 1920, 1080


def rgb_channels():
    """R, G, B as (H, W) uint8 arrays, the same values as `test_rgba()` in benches/cpu_ops.rs."""
    x = np.arange(W, dtype=np.uint64)[None, :]
    y = np.arange(H, dtype=np.uint64)[:, None]
    n = (((x * 2654435761) ^ (y * 40503)) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(59)
    r = ((x // 7 + y // 5) % 256).astype(np.uint8)
    g = ((np.sin(x.astype(np.float32) * 0.01) * 100 + 128).astype(np.uint8) + n.astype(np.uint8)).astype(np.uint8)
    b = ((x ^ y) % 256).astype(np.uint8)
    return [np.broadcast_to(c, (H, W)) for c in (r, g, b)]
