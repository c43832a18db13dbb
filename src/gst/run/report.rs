//! A run's summary as one JSON object: what `run --json` prints and the
//! Python package's `run` returns as a dict.

use super::Summary;
use crate::gst::reframe::Planned;

/// `x` to `places` decimals, as the summaries show figures (a NaN stays
/// one: serde_json writes it as null).
pub fn rounded(x: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (x * scale).round() / scale
}

/// The CUDA kernels' preparation before a run: its time, and how many
/// kernel files NVRTC compiled (the others came from the cache).
pub struct Kernels {
    pub seconds: f64,
    pub compiled: usize,
}

impl Kernels {
    /// Compiles (or reads from the cache) the kernels of `chain` on the GPU
    /// of `backend`, before a run's source starts; `None` on the CPU.
    #[cfg_attr(not(feature = "cuda"), allow(unused_variables))]
    pub fn prepare(backend: &super::Backend, chain: &crate::ops::Chain) -> Option<Kernels> {
        match backend {
            #[cfg(feature = "cuda")]
            super::Backend::Cuda(gpu) => {
                use std::sync::atomic::Ordering::Relaxed;
                let compiled = crate::cuda::module::COMPILES.load(Relaxed);
                let start = std::time::Instant::now();
                crate::cuda::stage::warm_up(gpu, chain);
                Some(Kernels {
                    seconds: start.elapsed().as_secs_f64(),
                    compiled: crate::cuda::module::COMPILES.load(Relaxed) - compiled,
                })
            }
            #[cfg(not(feature = "cuda"))]
            super::Backend::Cuda(gpu) => match *gpu {},
            super::Backend::Cpu => None,
        }
    }
}

/// The run's summary as one JSON object.
pub fn summary_json(s: &Summary, kernels: Option<&Kernels>, reframe: Option<&Planned>) -> String {
    use crate::gst::outfile::Kept;
    use serde_json::json;
    let streams: Vec<serde_json::Value> = s
        .streams
        .iter()
        .map(|st| json!({"type": st.kind, "stream": st.what, "action": st.action}))
        .collect();
    let (output, partial) = match &s.kept {
        Some(Kept::Target(p)) => (Some(p.to_string_lossy()), false),
        Some(Kept::Partial(p)) => (Some(p.to_string_lossy()), true),
        _ => (None, false),
    };
    let reframe = reframe.map(|r| {
        use crate::gst::reframe::Source;
        let shots: Vec<serde_json::Value> = r
            .shots
            .iter()
            .map(|s| {
                json!({"first": s.first, "last": s.last,
                    "mode": s.fit.name(), "camera": s.camera.name()})
            })
            .collect();
        let (source, file) = match &r.source {
            Source::Planned { .. } => ("planned", r.written.as_ref()),
            Source::Replayed(p) => ("replayed", Some(p)),
            Source::Live { .. } => ("live", r.written.as_ref()),
        };
        let ahead = match r.source {
            Source::Live { ahead } => ahead,
            _ => 0.0,
        };
        json!({"plan": source, "path": file.map(|p| p.to_string_lossy()), "shots": shots,
            "lookahead_s": ahead})
    });
    json!({
        "frames_in": s.frames_in,
        "frames_out": s.frames_out,
        "dropped": s.dropped,
        "seconds": rounded(s.seconds, 3),
        "fps": rounded(s.fps(), 2),
        "ms_copy_in": rounded(s.ms_copy_in, 3),
        "ms_chain": rounded(s.ms_chain, 3),
        "ms_copy_out": rounded(s.ms_copy_out, 3),
        "memory_in": s.memory_in,
        "memory_out": s.memory_out,
        "size_in": [s.width_in, s.height_in],
        "size_out": [s.width_out, s.height_out],
        "interrupted": s.interrupted,
        "live": s.live,
        "output": output,
        "partial": partial,
        "kernel_seconds": kernels.map(|k| rounded(k.seconds, 3)),
        "kernels_compiled": kernels.map(|k| k.compiled),
        "streams": streams,
        "reframe": reframe,
        "ended_early": s.ended_early.map(|e| json!({
            "end": rounded(e.end, 3),
            "stated": rounded(e.stated, 3),
        })),
    })
    .to_string()
}
