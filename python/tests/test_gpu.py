"""The GPU path with torch: CUDA tensors in, DLPack out, nothing through the
host. Skips where torch or a GPU is missing; with SEAMSTREAM_REQUIRE_GPU=1
(the GPU host's check) a missing one fails instead. Runs under pytest, or
alone: `python python/tests/test_gpu.py`."""

import inspect
import os
import pathlib
import shutil
import subprocess
import sys
import time

import numpy as np

import seamstream

try:
    import torch
except ImportError:  # pragma: no cover - the GPU host has torch
    torch = None


def gpu_or_skip():
    why = None
    if torch is None:
        why = "torch is not installed"
    elif not torch.cuda.is_available():
        why = "torch sees no GPU"
    if why is None:
        return
    if os.environ.get("SEAMSTREAM_REQUIRE_GPU") == "1":
        raise AssertionError(f"GPU test: {why}")
    import pytest

    pytest.skip(why)


def frame(h, w, seed):
    f = np.random.default_rng(seed).integers(0, 256, (h, w, 4), dtype=np.uint8)
    f[..., 3] = 255
    return f


def test_a_cuda_tensor_comes_back_on_the_gpu_with_the_cpus_bytes():
    gpu_or_skip()
    for ops in [(), ("gaussian:sigma=2",), ("sobel", "threshold:t=40"), ("retarget:width=75%",), ("gray",)]:
        host = frame(90, 160, 1)
        chain = seamstream.Chain(*ops, device="cuda")
        out = chain.apply(torch.from_numpy(host).cuda())
        assert isinstance(out, seamstream.DeviceFrame), type(out)
        got = torch.from_dlpack(out)
        assert got.is_cuda and got.dtype == torch.uint8
        want = seamstream.Chain(*ops, device="cpu").apply(host)
        assert tuple(got.shape) == want.shape, (ops, got.shape, want.shape)
        assert np.array_equal(got.cpu().numpy(), want), ops
        assert np.array_equal(out.to_numpy(), want), ops


def test_the_result_is_shared_not_copied():
    gpu_or_skip()
    out = seamstream.Chain("gaussian:sigma=2", device="cuda").apply(torch.zeros((64, 64, 4), dtype=torch.uint8, device="cuda"))
    tensor = torch.from_dlpack(out)
    assert tensor.data_ptr() == out.__cuda_array_interface__["data"][0]
    # Rows with padding (a slice of a wider tensor) are read at their pitch.
    wide = torch.from_numpy(frame(48, 100, 2)).cuda()
    view = wide[:, 10:74]
    got = seamstream.Chain("sobel", device="cuda").apply(view)
    want = seamstream.Chain("sobel", device="cpu").apply(np.ascontiguousarray(view.cpu().numpy()))
    assert np.array_equal(torch.from_dlpack(got).cpu().numpy(), want)


def test_frames_in_flight_stay_in_order_and_each_keeps_its_own_memory():
    # Many calls without waiting in between: every result is the CPU's.
    gpu_or_skip()
    chain = seamstream.Chain("gaussian:sigma=2", device="cuda")
    hosts = [frame(72, 128, 10 + i) for i in range(8)]
    outs = [chain.apply(torch.from_numpy(h).cuda()) for h in hosts]
    cpu = seamstream.Chain("gaussian:sigma=2", device="cpu")
    for h, o in zip(hosts, outs):
        assert np.array_equal(torch.from_dlpack(o).cpu().numpy(), cpu.apply(h))


class DlpackOnly:
    """A CUDA tensor seen only through DLPack (as JAX's arrays are): no
    ``__cuda_array_interface__``."""

    def __init__(self, tensor):
        self.tensor = tensor
        self.streams = []

    def __dlpack__(self, stream=None, **kwargs):
        self.streams.append(stream)
        return self.tensor.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


def test_a_dlpack_only_tensor_is_read_in_place_and_held_until_read():
    gpu_or_skip()
    chain = seamstream.Chain("gaussian:sigma=2", device="cuda")
    cpu = seamstream.Chain("gaussian:sigma=2", device="cpu")
    hosts = [frame(72, 128, 20 + i) for i in range(6)]
    outs = []
    for h in hosts:
        wrapped = DlpackOnly(torch.from_numpy(h).cuda())
        outs.append(chain.apply(wrapped))
        # The producer was asked to order itself before the chain's stream.
        assert wrapped.streams and wrapped.streams[0] not in (None, -1), wrapped.streams
        # The wrapper and its tensor go at once; the chain holds the
        # DLPack tensor until it has read it.
        del wrapped
    for h, o in zip(hosts, outs):
        assert np.array_equal(torch.from_dlpack(o).cpu().numpy(), cpu.apply(h))
    # A padded view through DLPack is read at its pitch.
    wide = torch.from_numpy(frame(48, 100, 2)).cuda()
    got = seamstream.Chain("sobel", device="cuda").apply(DlpackOnly(wide[:, 10:74]))
    want = seamstream.Chain("sobel", device="cpu").apply(np.ascontiguousarray(wide[:, 10:74].cpu().numpy()))
    assert np.array_equal(torch.from_dlpack(got).cpu().numpy(), want)
    # A float tensor is refused by name.
    try:
        chain.apply(DlpackOnly(torch.zeros((8, 8, 4), device="cuda")))
    except ValueError as e:
        assert "DLPack dtype" in str(e), e
    else:
        raise AssertionError("no error")


def test_a_tensor_made_on_a_side_stream_is_read_after_it_is_made():
    # The tensor is written on a side stream by a long chain of torch work;
    # the chain, told that stream, must see the finished values.
    gpu_or_skip()
    side = torch.cuda.Stream()
    chain = seamstream.Chain("gray", device="cuda")
    with torch.cuda.stream(side):
        x = torch.zeros((720, 1280, 4), dtype=torch.uint8, device="cuda")
        for _ in range(50):
            x.add_(1)
    got = chain.apply(x, stream=side)
    side.synchronize()
    torch.cuda.synchronize()
    want = seamstream.Chain("gray", device="cpu").apply(np.full((720, 1280, 4), 50, np.uint8))
    assert np.array_equal(torch.from_dlpack(got).cpu().numpy(), want)
    try:
        chain.apply(x, stream="side")
    except ValueError as e:
        assert "stream=" in str(e)
    else:
        raise AssertionError("no error")


def test_a_cuda_tensor_on_a_cpu_chain_is_a_value_error():
    gpu_or_skip()
    try:
        seamstream.Chain("sobel", device="cpu").apply(torch.zeros((8, 8, 4), dtype=torch.uint8, device="cuda"))
    except ValueError as e:
        assert "device=" in str(e)
    else:
        raise AssertionError("no error")


def readme():
    """The README: $SEAMSTREAM_README, else the checkout's (this file's, or
    the working directory's on the GPU host, where the tests run from a
    bundle)."""
    here = pathlib.Path(__file__).resolve()
    for path in [os.environ.get("SEAMSTREAM_README"), here.parents[2] / "README.md", pathlib.Path.cwd() / "README.md"]:
        if path and pathlib.Path(path).exists():
            return pathlib.Path(path).read_text()
    raise AssertionError("no README.md found: set SEAMSTREAM_README")


def test_the_readmes_torch_examples_run(tmp_path):
    gpu_or_skip()
    section = readme().split("## From Python", 1)[1].split("\n## ", 1)[0]
    blocks = [b.split("```", 1)[0] for b in section.split("```python\n")[1:]]
    examples = [b for b in blocks if "import torch" in b]
    assert len(examples) == 2, len(examples)
    cli = os.environ.get("SEAMSTREAM_BIN") or shutil.which("seamstream")
    assert cli, "no seamstream binary: put it on PATH or set SEAMSTREAM_BIN"
    subprocess.run(
        [cli, "run", "test:ball", str(tmp_path / "clip.mp4"), "--size", "160x90", "--frames", "8", "--device", "cpu"],
        check=True,
        capture_output=True,
    )
    # Each as the script a user would save and run (the loader's workers
    # are spawned, and a spawned worker imports the script again).
    printed = ""
    for k, code in enumerate(examples):
        script = tmp_path / f"example{k}.py"
        script.write_text(code)
        run = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True)
        assert run.returncode == 0, f"example {k} failed:\n{code}\n{run.stderr}"
        printed += run.stdout
    assert "torch.Size([720, 1280, 4]) cuda:0" in printed, printed
    assert printed.count("torch.Size([4, 90, 160, 4]) torch.uint8") == 2, printed


def time_1080p_gaussian():
    """µs a call of `gaussian:sigma=2.5` on a 1080p RGBA CUDA tensor (the
    case `seamstream bench` calls "gaussian 17 taps RGBA")."""
    chain = seamstream.Chain("gaussian:sigma=2.5", device="cuda")
    x = torch.from_numpy(frame(1080, 1920, 3)).cuda()
    for _ in range(20):
        chain.apply(x)
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(200):
            out = chain.apply(x)
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - start) / 200 * 1e6)
    del out
    return best


if __name__ == "__main__":
    for name, test in list(globals().items()):
        # (those that take pytest's fixtures run under pytest only)
        if name.startswith("test_") and not inspect.signature(test).parameters:
            test()
            print("ok", name)
    print(f"1080p gaussian:sigma=2.5 through Chain.apply on a torch CUDA tensor: {time_1080p_gaussian():.1f} µs a call")
