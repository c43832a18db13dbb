"""How far CV-CUDA's bilinear affine warp is from ours (and so from our CPU
reference, which our GPU kernel equals byte for byte): a real frame warped
by both, the bytes compared.
usage (GPU host, CV-CUDA in PYTHONPATH): python3 warp_agreement.py in.png ours.png
where ours.png is `warp:affine=[0.96,-0.17,40,0.17,0.96,-60]` of in.png by
seamstream (RGBA, constant black border, opaque).
"""
import sys

import numpy as np
import torch
import cvcuda
from PIL import Image

src = np.array(Image.open(sys.argv[1]).convert("RGBA"))
ours = np.array(Image.open(sys.argv[2]).convert("RGBA"))
M = np.array([[0.96, -0.17, 40], [0.17, 0.96, -60]], np.float32)
t = torch.from_numpy(src).cuda().unsqueeze(0).contiguous()
out = torch.empty_like(t)
cvcuda.warp_affine_into(cvcuda.as_tensor(out, "NHWC"), cvcuda.as_tensor(t, "NHWC"), M,
                        cvcuda.Interp.LINEAR, border_mode=cvcuda.Border.CONSTANT,
                        border_value=[0, 0, 0, 255])
torch.cuda.synchronize()
theirs = out[0].cpu().numpy()
d = np.abs(theirs.astype(int) - ours.astype(int))
print(f"{src.shape[1]}x{src.shape[0]}: bytes differing {np.count_nonzero(d)} of {d.size} "
      f"({100 * np.count_nonzero(d) / d.size:.2f}%), by 1: {np.count_nonzero(d == 1)}, "
      f"largest difference {d.max()}")
