"""The Python package against the library it binds: shapes and dtypes,
errors, state across calls, and the same bytes as the command line."""

import os
import pathlib
import subprocess
import threading

import numpy as np
import pytest

import seamstream

REPO = pathlib.Path(__file__).resolve().parents[2]
PHOTO = REPO / "examples" / "data" / "chelsea.png"


def cli():
    """The `seamstream` binary: $SEAMSTREAM_BIN, else the release build."""
    path = pathlib.Path(os.environ.get("SEAMSTREAM_BIN", REPO / "target" / "release" / "seamstream"))
    if not path.exists():
        pytest.fail(f"no seamstream binary at {path}: build it (cargo build --release) or set SEAMSTREAM_BIN")
    return str(path)


def noise(h, w, channels=4, seed=0):
    shape = (h, w, channels) if channels else (h, w)
    frame = np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)
    if channels == 4:
        frame[..., 3] = 255
    return frame


def load_png(path):
    from PIL import Image

    return np.asarray(Image.open(path).convert("RGBA"))


@pytest.mark.parametrize("channels", [4, 0])
def test_a_frame_comes_back_as_the_same_kind_at_the_chains_size(channels):
    chain = seamstream.Chain("gaussian:sigma=1.5", "retarget:width=75%", device="cpu")
    frame = noise(48, 64, channels)
    out = chain.apply(frame)
    assert out.dtype == np.uint8
    assert out.shape == ((48, 48, 4) if channels else (48, 48))
    assert chain.output_size(48, 64) == (48, 48)
    # The input is left as it was.
    assert np.array_equal(frame, noise(48, 64, channels))


def test_gray_makes_a_gray_frame_and_a_view_is_read_in_order():
    frame = noise(40, 60)
    view = frame[::2, ::3]  # not contiguous
    out = seamstream.Chain("gray", device="cpu").apply(view)
    assert out.shape == view.shape[:2]
    assert np.array_equal(out, seamstream.Chain("gray", device="cpu").apply(view.copy()))


def test_a_reframe_gives_each_frame_its_own_window_at_once():
    # Each call answers for its own frame: the first already shows the
    # picture, not the black a live reframe sends while it looks ahead.
    frame = noise(36, 64)
    out = seamstream.Chain("reframe:aspect=1:1", device="cpu").apply(frame)
    assert out.shape == (36, 36, 4)
    assert out[..., :3].mean() > 60
    with pytest.raises(ValueError, match="lookahead=0"):
        seamstream.Chain("reframe:aspect=1:1,lookahead=0.3", device="cpu")


def test_ops_may_be_given_as_one_list():
    a = seamstream.Chain(["sobel", "threshold:t=40"], device="cpu")
    b = seamstream.Chain("sobel", "threshold:t=40", device="cpu")
    frame = noise(30, 30, seed=3)
    assert a.ops == ["sobel", "threshold:t=40"]
    assert np.array_equal(a.apply(frame), b.apply(frame))


@pytest.mark.parametrize(
    "frame",
    [np.zeros((4, 4, 3), np.uint8), np.zeros((4, 4, 4), np.float32), np.zeros((0, 4), np.uint8), "a frame"],
)
def test_a_frame_that_is_not_rgba_or_gray_uint8_is_a_value_error(frame):
    with pytest.raises(ValueError, match="uint8 array"):
        seamstream.Chain("sobel", device="cpu").apply(frame)


def test_bad_operations_and_devices_are_value_errors_that_name_them():
    with pytest.raises(ValueError, match="unknown operation `blur`"):
        seamstream.Chain("blur:sigma=2")
    with pytest.raises(ValueError, match="sigma"):
        seamstream.Chain("gaussian:sigma=-1")
    with pytest.raises(ValueError, match='device="gpu"'):
        seamstream.Chain("sobel", device="gpu")
    with pytest.raises(ValueError, match="operation is text"):
        seamstream.Chain(3)
    # A size the input cannot take is named when a frame comes.
    with pytest.raises(ValueError, match="width"):
        seamstream.Chain("retarget:width=500", device="cpu").apply(noise(10, 10))


def test_a_stream_for_a_numpy_frame_is_a_value_error():
    # stream= orders a CUDA array's work; a NumPy frame has no stream, and
    # silently ignoring one would hide a caller's mistake.
    chain = seamstream.Chain("sobel", device="cpu")
    with pytest.raises(ValueError, match="stream="):
        chain.apply(noise(8, 8), stream=0)
    assert chain.apply(noise(8, 8)).shape == (8, 8, 4)


def _apply_in_child(queue):
    try:
        out = seamstream.Chain("gaussian:sigma=1", device="cpu").apply(noise(32, 32))
        queue.put(f"applied {out.shape}")
    except RuntimeError as e:
        queue.put(f"RuntimeError: {e}")


def test_a_forked_child_is_told_to_spawn_and_a_spawned_one_works():
    import multiprocessing

    # The parent starts seamstream's threads (rayon's pool) first.
    seamstream.Chain("gaussian:sigma=1", device="cpu").apply(noise(256, 256))
    results = {}
    for method in ["fork", "spawn"]:
        ctx = multiprocessing.get_context(method)
        queue = ctx.Queue()
        child = ctx.Process(target=_apply_in_child, args=(queue,))
        child.start()
        child.join(60)
        assert child.exitcode == 0, f"{method}: the child ended with {child.exitcode}"
        results[method] = queue.get(timeout=10)
    assert results["fork"].startswith("RuntimeError") and '"spawn"' in results["fork"], results
    assert results["spawn"] == "applied (32, 32, 4)", results


def test_a_missing_file_is_file_not_found():
    with pytest.raises(FileNotFoundError, match="no-such-clip.mp4"):
        seamstream.read("no-such-clip.mp4")


def test_a_chain_keeps_fast_retargetings_memory_between_calls():
    # The second frame is the first with a little noise: a chain that saw
    # the first keeps its seams; a fresh one places them anew.
    first = noise(60, 80, seed=1)
    second = np.clip(first.astype(int) + noise(60, 80, seed=2) // 32 - 4, 0, 255).astype(np.uint8)
    second[..., 3] = 255
    remembering = seamstream.Chain("retarget:width=60", device="cpu")
    remembering.apply(first)
    after_first = remembering.apply(second)
    fresh = seamstream.Chain("retarget:width=60", device="cpu").apply(second)
    assert after_first.shape == fresh.shape == (60, 60, 4)
    assert not np.array_equal(after_first, fresh)
    # And the same frames through another chain give the same bytes.
    again = seamstream.Chain("retarget:width=60", device="cpu")
    again.apply(first)
    assert np.array_equal(again.apply(second), after_first)


@pytest.mark.parametrize(
    "op",
    ["gaussian:sigma=2", "sobel", "retarget:width=75%,mode=exact", "threshold:t=otsu", "segment"],
)
def test_the_same_bytes_as_the_command_line(op, tmp_path):
    out = tmp_path / "out.png"
    subprocess.run(
        [cli(), "image", str(PHOTO), str(out), "--op", op, "--device", "cpu"],
        check=True,
        capture_output=True,
    )
    mine = seamstream.Chain(op, device="cpu").apply(load_png(PHOTO))
    theirs = load_png(out)
    if mine.ndim == 2:
        mine = np.dstack([mine, mine, mine, np.full_like(mine, 255)])
    assert mine.shape == theirs.shape
    assert np.array_equal(mine, theirs)


def test_read_gives_every_frame_with_its_time(tmp_path):
    clip = tmp_path / "clip.mkv"
    subprocess.run(
        [cli(), "run", "test:ball", str(clip), "--size", "64x48", "--fps", "10", "--frames", "12", "--device", "cpu"],
        check=True,
        capture_output=True,
    )
    frames = list(seamstream.read(str(clip)))
    assert len(frames) == 12
    assert all(f.shape == (48, 64, 4) and f.dtype == np.uint8 for f, _ in frames)
    times = [t for _, t in frames]
    assert times == pytest.approx([i / 10 for i in range(12)], abs=1e-3)


def test_ops_lists_every_operation_with_its_parameters():
    listed = seamstream.ops()
    names = [o["name"] for o in listed]
    assert "retarget" in names and "reframe" in names and len(names) == len(set(names))
    retarget = next(o for o in listed if o["name"] == "retarget")
    width = next(p for p in retarget["params"] if p["name"] == "width")
    assert width["help"] and set(width) == {"name", "kind", "default", "required", "help"}
    for o in listed:
        seamstream.Chain(o["example"], device="cpu")  # every example builds


def test_threads_run_chains_at_once():
    frames = [noise(120, 160, seed=s) for s in range(4)]
    chains = [seamstream.Chain("gaussian:sigma=3", device="cpu") for _ in frames]
    results = [None] * len(frames)

    def work(i):
        results[i] = chains[i].apply(frames[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(frames))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, frame in enumerate(frames):
        assert np.array_equal(results[i], seamstream.Chain("gaussian:sigma=3", device="cpu").apply(frame))


def readme_examples():
    """The Python blocks of the README's "From Python" section."""
    text = (REPO / "README.md").read_text()
    section = text.split("## From Python", 1)[1].split("\n## ", 1)[0]
    return [block.split("```", 1)[0] for block in section.split("```python\n")[1:]]


def test_the_readmes_examples_run(tmp_path, monkeypatch, capsys):
    # The ones with torch run on the GPU host (test_gpu.py).
    examples = [code for code in readme_examples() if "import torch" not in code]
    assert len(readme_examples()) == 4 and len(examples) == 2
    subprocess.run(
        [cli(), "run", "test:ball", str(tmp_path / "clip.mp4"), "--size", "160x90", "--frames", "8", "--device", "cpu"],
        check=True,
        capture_output=True,
    )
    monkeypatch.chdir(tmp_path)
    for code in examples:
        exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "[50, 90] 8 frames" in printed
    assert "(90, 50, 4) last frame at" in printed
    assert "retarget - " in printed


def test_the_type_stubs_name_what_the_module_has():
    import re

    stub = (REPO / "python" / "seamstream" / "__init__.pyi").read_text()
    stubbed = set(re.findall(r"^(?:class|def) (\w+)", stub, flags=re.M)) - {"Param", "Op"}
    assert stubbed == set(seamstream.__all__) - {"__version__"}
    for name in ["apply", "output_size", "device", "ops"]:
        assert hasattr(seamstream.Chain, name) and f" {name}(" in stub
    assert seamstream.Chain.apply.__doc__ and seamstream.read.__doc__


def test_run_gives_the_command_lines_bytes_and_summary(tmp_path):
    job = ["test:smpte", "--size", "96x64", "--frames", "12", "--op", "retarget:width=75%", "--device", "cpu"]
    theirs = tmp_path / "cli.y4m"
    subprocess.run([cli(), "run", job[0], str(theirs), *job[1:]], check=True, capture_output=True)
    mine = tmp_path / "py.y4m"
    told = []
    summary = seamstream.run(
        "test:smpte",
        str(mine),
        ["retarget:width=75%"],
        device="cpu",
        size=(96, 64),
        frames=12,
        progress=lambda done, total: told.append((done, total)),
    )
    assert mine.read_bytes() == theirs.read_bytes()
    assert summary["frames_out"] == 12 and summary["size_out"] == [72, 64]
    assert summary["output"] == str(mine) and not summary["partial"]
    assert told and told[-1] == (12, 12)


def test_a_progress_callback_that_raises_stops_the_run_and_keeps_the_output(tmp_path):
    out = tmp_path / "stopped.mkv"

    def stop_after_five(done, total):
        if done >= 5:
            raise ValueError("enough")

    with pytest.raises(ValueError, match="enough"):
        seamstream.run("test:ball", str(out), ["sobel"], device="cpu", size=(64, 48), frames=0, live=True,
                       progress=stop_after_five)
    frames = list(seamstream.read(str(out)))
    assert len(frames) >= 5


def test_run_refuses_what_the_command_line_refuses(tmp_path):
    with pytest.raises(ValueError, match="unknown operation"):
        seamstream.run("test:ball", str(tmp_path / "o.mp4"), ["blur"])
    with pytest.raises(FileNotFoundError):
        seamstream.run(str(tmp_path / "missing.mp4"), str(tmp_path / "o.mp4"))
    with pytest.raises(ValueError, match="codec"):
        seamstream.run("test:ball", str(tmp_path / "o.mp4"), codec="mpeg9")


def test_quality_gives_the_command_lines_figures(tmp_path):
    original = tmp_path / "original.mkv"
    result = tmp_path / "result.mkv"
    subprocess.run([cli(), "run", "test:smpte", str(original), "--size", "96x64", "--frames", "6", "--device", "cpu"],
                   check=True, capture_output=True)
    subprocess.run([cli(), "run", str(original), str(result), "--op", "retarget:width=75%", "--device", "cpu"],
                   check=True, capture_output=True)
    theirs = subprocess.run([cli(), "quality", str(original), str(result), "--every", "2", "--json"],
                            check=True, capture_output=True, text=True).stdout
    import json

    mine = seamstream.quality(str(original), str(result), every=2)
    assert mine == json.loads(theirs)
    assert mine["frames"] == 6 and mine["size"] == [72, 64]
    with pytest.raises(ValueError, match="every=0"):
        seamstream.quality(str(original), str(result), every=0)
    with pytest.raises(FileNotFoundError):
        seamstream.quality(str(tmp_path / "none.mkv"), str(result))
