"""seamstream: seam carving, reframing and image operations on video frames,
on the CPU or a CUDA GPU.

The operations are seamstream's own (the Rust library behind the
``seamstream`` command), written as on its command line::

    import numpy as np
    import seamstream

    chain = seamstream.Chain("gaussian:sigma=2", "retarget:width=75%")
    frame = np.zeros((720, 1280, 4), np.uint8)        # H×W×4 RGBA, or H×W gray
    out = chain.apply(frame)                           # (720, 960, 4)

    for frame, seconds in seamstream.read("clip.mp4"):
        out = chain.apply(frame)

``seamstream.run(input, output, ops)`` runs a whole job as the command line
does (audio kept, the encoder's options, a summary dict back), and
``seamstream.ops()`` lists every operation and its parameters.

Errors are ``ValueError`` (a bad parameter or frame), ``FileNotFoundError``
and ``RuntimeError`` (the GPU or the pipeline failed), with the library's
message. Every call releases the GIL while it works.
"""

import os as _os

from ._seamstream import Chain, Reader, __version__, _after_fork_in_child, ops, quality, read, run

# A child forked after seamstream's threads started has none of them: its
# calls raise a RuntimeError that says to spawn instead of hanging or
# crashing.
if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(after_in_child=_after_fork_in_child)

__all__ = ["Chain", "Reader", "ops", "quality", "read", "run", "__version__"]

try:  # a build with the CUDA backend (the default)
    from ._seamstream import DeviceFrame

    __all__.append("DeviceFrame")
except ImportError:  # pragma: no cover
    pass
