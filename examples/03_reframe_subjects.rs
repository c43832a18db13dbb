//! What a reframe sees in a video: the subjects the analysis finds on each
//! frame (faces, text, what moves), the camera's shift from the frame before
//! (thumbnail pixels) and the shots, as JSON lines on standard output:
//! `{"frame": 12, "cut": false, "shift": [0, 0], "subjects": [{"kind":
//! "moving", "required": true, "box": [x, y, w, h]}, ...]}`. With `--live`,
//! what the live analysis (a camera, `--live`, the elements) sees, frame by
//! frame as it comes.
//!
//!     cargo run --release --example 03_reframe_subjects -- clip.mp4 > subjects.jsonl
//!     cargo run --release --example 03_reframe_subjects -- clip.mp4 --live

use seamstream::frame::Frame;
use seamstream::gst::decode::FrameReader;
use seamstream::ops::reframe::analyze::{Analyzer, Observation, Thumbs};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let live = args.iter().any(|a| a == "--live");
    let input = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .ok_or("give a video file: 03_reframe_subjects CLIP.mp4 [--live]")?;
    let mut reader = FrameReader::open(input)?;
    let mut analyzer: Option<Analyzer> = None;
    let mut seen: Vec<Observation> = Vec::new();
    let mut n = 0;
    while let Some(frame) = reader.next_frame()? {
        let a =
            analyzer.get_or_insert_with(|| Analyzer::new(frame.width(), frame.height(), 30, live));
        seen.extend(a.push(&Thumbs::of(&Frame::Rgba(frame), n)));
        n += 1;
    }
    let Some(analyzer) = analyzer else {
        return Err("the video has no frames".into());
    };
    if !live {
        seen = analyzer.finish();
    }
    for (i, o) in seen.iter().enumerate() {
        let subjects: Vec<serde_json::Value> = o
            .subjects
            .iter()
            .map(|s| {
                serde_json::json!({"kind": s.kind, "required": s.required,
                    "box": <[usize; 4]>::from(s.rect)})
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({"frame": i, "cut": o.cut, "shift": [o.shift.0, o.shift.1], "subjects": subjects})
        );
    }
    Ok(())
}
