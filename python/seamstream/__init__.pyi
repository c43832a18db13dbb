"""Type stubs for seamstream (the extension module ``seamstream._seamstream``)."""

from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, TypedDict, Union, overload

import numpy as np
import numpy.typing as npt

__version__: str

Frame = npt.NDArray[np.uint8]
"""An ``H×W×4`` RGBA or ``H×W`` gray ``uint8`` array."""

class Chain:
    """A chain of operations, built once from the text of ``--op``
    (``"gaussian:sigma=2"``, ``"retarget:width=75%"``), applied to frames one
    after another. It keeps what video needs between calls: fast
    retargeting's seams, the reframe window's path. Each call gives that
    frame's own result, so a reframe here looks at no frame ahead
    (``seamstream.run`` and the elements look 0.4 s ahead), and an explicit
    ``lookahead=`` above 0 is refused.

    ``device`` is ``"auto"`` (a GPU when one works, else the CPU), ``"cpu"``,
    ``"cuda"`` or ``"cuda:N"``.
    """

    def __init__(self, *ops: Union[str, List[str]], device: str = "auto") -> None: ...
    @overload
    def apply(self, frame: Frame, *, stream: Any = None) -> Frame: ...
    @overload
    def apply(self, frame: Any, *, stream: Any = None) -> "DeviceFrame": ...
    def apply(self, frame: Any, *, stream: Any = None) -> Any:
        """Runs the chain on one frame: a NumPy array gives a new array of the
        same kind at the chain's output size; on a GPU, a CUDA array
        (``__cuda_array_interface__`` or ``__dlpack__``: torch, CuPy, JAX)
        gives a ``DeviceFrame`` on the same GPU, nothing copied through the
        host. Raises ``ValueError`` for an array that is not ``uint8``
        ``H×W×4`` or ``H×W``.

        On a GPU the call returns before the work is done: it is ordered
        after ``stream`` (an int handle, a ``torch.cuda.Stream`` or a CuPy
        stream; default: the array's own, else the legacy default stream
        torch and CuPy use), and that stream after the chain's reads."""
    def output_size(self, height: int, width: int) -> Tuple[int, int]:
        """The ``(height, width)`` a ``height×width`` input comes out at."""
    @property
    def device(self) -> str:
        """Where the chain runs: ``"cpu"``, or the GPU."""
    @property
    def ops(self) -> List[str]:
        """The operations, as written."""

class DeviceFrame:
    """A frame on the GPU, what ``Chain.apply`` gives for a CUDA array:
    ``torch.from_dlpack(frame)`` and ``cupy.asarray(frame)`` take it without a
    copy."""

    @property
    def shape(self) -> List[int]: ...
    @property
    def device(self) -> int:
        """The GPU's ordinal."""
    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]: ...
    def __dlpack__(
        self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None, copy: Optional[bool] = None
    ) -> Any: ...
    def __dlpack_device__(self) -> Tuple[int, int]: ...
    def to_numpy(self) -> Frame:
        """The frame copied to the host."""

class Reader:
    """Decoded frames of a video: iterate for ``(frame, seconds)`` pairs."""

    def __iter__(self) -> Iterator[Tuple[Frame, Optional[float]]]: ...
    def __next__(self) -> Tuple[Frame, Optional[float]]: ...
    @property
    def fps(self) -> Optional[float]:
        """The frame rate the file gives, after the first frame (``None`` for
        a variable rate)."""

def read(path: str) -> Reader:
    """The decoded frames of the video at ``path`` (a file or a URI), each an
    ``H×W×4`` RGBA array with its presentation time in seconds."""

def run(
    input: str,
    output: str = "out.mp4",
    ops: List[str] = ...,
    *,
    device: str = "auto",
    progress: Optional[Callable[[int, Optional[int]], object]] = None,
    codec: Optional[str] = None,
    crf: Optional[int] = None,
    bitrate: Optional[int] = None,
    preset: Optional[str] = None,
    audio: bool = True,
    size: Optional[Tuple[int, int]] = None,
    fps: Union[None, int, float, str] = None,
    frames: Optional[int] = None,
    live: bool = False,
) -> Dict[str, Any]:
    """Runs a whole job as ``seamstream run INPUT OUTPUT --op …`` does: audio
    kept unless ``audio=False``, the encoder as ``codec``/``crf``/
    ``bitrate``/``preset`` say, test sources sized by ``size`` (width,
    height), ``fps`` and ``frames`` (0: until stopped); from a file, a
    stream or a camera, ``frames`` is the most frames to take, as ffmpeg's
    ``-frames:v``, the audio cut with them. ``progress`` is
    called with (frames done, frames expected or None) up to ten times a
    second; an exception it raises, or Ctrl-C, finishes the output so that it
    plays and is raised then. Returns the summary ``run --json`` prints."""

def quality(
    original: str, result: str, *, every: int = 15, frames: Optional[int] = None, crops: int = 9
) -> Dict[str, Any]:
    """The retargeting figures of ``result`` against ``original`` (clips of the
    same frames), as ``seamstream quality ORIGINAL RESULT --json`` gives them:
    similarity and flicker beside the original scaled to the result's size,
    and with ``crops`` fixed windows, the best of them."""

class Param(TypedDict):
    name: str
    kind: str
    default: Optional[str]
    required: bool
    help: str

class Op(TypedDict):
    name: str
    summary: str
    example: str
    params: List[Param]

def ops() -> List[Op]:
    """Every operation with its parameters, as ``seamstream ops`` lists them."""
