"""Which way CV-CUDA's warp_affine_into reads the matrix cvcuda_side.py gives
it (ours maps source to destination, as OpenCV's without WARP_INVERSE_MAP):
one white pixel at (400, 300) in a black frame, warped, and where it lands.
usage (GPU host, CV-CUDA in PYTHONPATH): python3 warp_direction.py
"""
import numpy as np
import torch
import cvcuda

M = np.array([[0.96, -0.17, 40], [0.17, 0.96, -60]], np.float32)
src = torch.zeros((1, 600, 800, 4), dtype=torch.uint8, device="cuda")
src[0, 300, 400] = 255
dst = torch.zeros_like(src)
cvcuda.warp_affine_into(cvcuda.as_tensor(dst, "NHWC"), cvcuda.as_tensor(src, "NHWC"), M,
                        cvcuda.Interp.LINEAR, border_mode=cvcuda.Border.CONSTANT,
                        border_value=[0, 0, 0, 0])
torch.cuda.synchronize()
ys, xs = torch.nonzero(dst[0, :, :, 0] > 0, as_tuple=True)
fwd = M @ np.array([400, 300, 1.0])
inv = np.linalg.inv(np.vstack([M, [0, 0, 1]]))[:2] @ np.array([400, 300, 1.0])
print(f"lit pixels around ({xs.float().mean():.1f}, {ys.float().mean():.1f}); "
      f"source→destination puts it at ({fwd[0]:.1f}, {fwd[1]:.1f}), "
      f"destination→source at ({inv[0]:.1f}, {inv[1]:.1f})")
