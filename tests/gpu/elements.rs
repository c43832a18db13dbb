//! The elements on the GPU (the GPU host; each test skips visibly where
//! there is no GPU, or no NVIDIA GStreamer plugin for CUDA memory):
//! `device=cuda` gives the CPU's frames, every frame comes out at EOS from
//! the ring, the latency query reports the one frame the ring holds, and
//! CUDA memory (`cudaupload ! seamcarve ! cudadownload`) is negotiated and
//! gives the same frames as system memory.

use gstreamer as gst;
use gstreamer::prelude::*;
use seamstream::cuda::testing;

fn init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        gst::init().unwrap();
        seamstream::plugin::register_static().unwrap();
    });
}

/// The frames a pipeline ending in `appsink name=out` gives, and the caps
/// `seamcarve`/`seamstream` (named `e`) put on its output.
fn frames(line: &str) -> (Vec<Vec<u8>>, String) {
    init();
    let (pipe, sink) = crate::common::video::pipeline_with_sink(line, "out");
    pipe.set_state(gst::State::Playing).unwrap();
    let mut out = Vec::new();
    let mut caps = String::new();
    while let Ok(sample) = sink.pull_sample() {
        if caps.is_empty() {
            let e = pipe.by_name("e").unwrap();
            caps = e
                .static_pad("src")
                .unwrap()
                .current_caps()
                .unwrap()
                .to_string();
        }
        out.push(sample.buffer().unwrap().map_readable().unwrap().to_vec());
    }
    let bus = pipe.bus().unwrap();
    let error = bus
        .pop_filtered(&[gst::MessageType::Error])
        .map(|m| format!("{m:?}"));
    pipe.set_state(gst::State::Null).unwrap();
    assert!(error.is_none(), "{line}: {error:?}");
    (out, caps)
}

const SOURCE: &str =
    "videotestsrc num-buffers=24 pattern=ball ! video/x-raw,width=320,height=180,framerate=30/1";

#[test]
fn on_the_gpu_every_frame_comes_out_as_on_the_cpu() {
    if testing::gpu("elements on the GPU").is_none() || !testing::nvrtc("elements on the GPU") {
        return;
    }
    for format in ["RGBA", "NV12", "I420"] {
        for element in [
            "seamcarve width=240",
            "seamstream ops=gaussian:sigma=2,retarget:width=75%",
        ] {
            let line = |device: &str| {
                format!(
                    "{SOURCE},format={format} ! {element} device={device} name=e ! appsink name=out sync=false"
                )
            };
            let (cpu, _) = frames(&line("cpu"));
            let (gpu, _) = frames(&line("cuda"));
            assert_eq!(cpu.len(), 24, "{format} {element}: frames on the CPU");
            assert_eq!(
                gpu.len(),
                24,
                "{format} {element}: frames on the GPU (the ring drained at EOS)"
            );
            for (i, (a, b)) in cpu.iter().zip(&gpu).enumerate() {
                assert!(
                    a == b,
                    "{format} {element}: frame {i} differs between the CPU and the GPU"
                );
            }
        }
    }
}

#[test]
fn the_latency_query_counts_the_frame_the_ring_holds() {
    if testing::gpu("element latency").is_none() || !testing::nvrtc("element latency") {
        return;
    }
    init();
    let latency = |device: &str| {
        let (pipe, sink) = crate::common::video::pipeline_with_sink(
            &format!(
                "videotestsrc is-live=true ! video/x-raw,format=RGBA,width=64,height=36,framerate=25/1 ! seamcarve width=48 device={device} ! appsink name=out"
            ),
            "out",
        );
        pipe.set_state(gst::State::Playing).unwrap();
        // A live source negotiates after PLAYING: once a frame is out, the
        // element knows its caps and device.
        sink.pull_sample().unwrap();
        let mut q = gst::query::Latency::new();
        assert!(pipe.query(&mut q));
        pipe.set_state(gst::State::Null).unwrap();
        q.result().1
    };
    let (cpu, gpu) = (latency("cpu"), latency("cuda"));
    assert_eq!(
        gpu,
        cpu + gst::ClockTime::from_mseconds(40),
        "one frame at 25 fps"
    );
}

#[test]
fn cuda_memory_goes_through_without_a_host_copy_and_gives_the_same_frames() {
    if testing::gpu("CUDA memory").is_none() || !testing::nvrtc("CUDA memory") {
        return;
    }
    init();
    if gst::ElementFactory::find("cudaupload").is_none() {
        testing::skip(
            "CUDA memory",
            "GStreamer's nvcodec plugin (cudaupload) is missing",
        );
        return;
    }
    for format in ["NV12", "I420", "RGBA"] {
        let system = format!(
            "{SOURCE},format={format} ! seamcarve width=240 device=cuda name=e ! appsink name=out sync=false"
        );
        let device = format!(
            "{SOURCE},format={format} ! cudaupload ! video/x-raw(memory:CUDAMemory) ! seamcarve width=240 device=cuda name=e ! cudadownload ! video/x-raw,format={format} ! appsink name=out sync=false"
        );
        let (a, caps_a) = frames(&system);
        let (b, caps_b) = frames(&device);
        assert!(!caps_a.contains("CUDAMemory"), "{caps_a}");
        assert!(
            caps_b.contains("memory:CUDAMemory"),
            "{format}: CUDA memory was not negotiated: {caps_b}"
        );
        assert_eq!(a.len(), 24);
        assert_eq!(b.len(), 24, "{format}: frames through CUDA memory");
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            assert!(
                x == y,
                "{format}: frame {i} differs between system and CUDA memory"
            );
        }
        // CUDA memory in, system memory out (a peer without CUDA memory).
        // (cudaupload passes system memory through unless told otherwise.)
        let mixed = format!(
            "{SOURCE},format={format} ! cudaupload ! video/x-raw(memory:CUDAMemory) ! seamcarve width=240 device=cuda name=e ! video/x-raw,format={format} ! appsink name=out sync=false"
        );
        let (c, caps_c) = frames(&mixed);
        assert!(!caps_c.contains("CUDAMemory"), "{caps_c}");
        assert!(c == a, "{format}: CUDA memory in, system memory out");
    }
}
