//! What a reframe sees in a video: the subjects the analysis finds on each
//! frame (faces, text, what moves), and the shots, as JSON lines on
//! standard output: `{"frame": 12, "cut": false, "subjects": [{"kind":
//! "moving", "required": true, "box": [x, y, w, h]}, ...]}`.
//!
//!     cargo run --release --example 03_reframe_subjects -- clip.mp4 > subjects.jsonl

use seamstream::frame::Frame;
use seamstream::gst::decode::FrameReader;
use seamstream::ops::reframe::analyze::{Analyzer, Thumbs};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let input = std::env::args()
        .nth(1)
        .ok_or("give a video file: 03_reframe_subjects CLIP.mp4")?;
    let mut reader = FrameReader::open(&input)?;
    let mut analyzer: Option<Analyzer> = None;
    let mut n = 0;
    while let Some(frame) = reader.next_frame()? {
        let a =
            analyzer.get_or_insert_with(|| Analyzer::new(frame.width(), frame.height(), 30, false));
        a.push(&Thumbs::of(&Frame::Rgba(frame), n));
        n += 1;
    }
    let Some(analyzer) = analyzer else {
        return Err("the video has no frames".into());
    };
    for (i, o) in analyzer.finish().iter().enumerate() {
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
            serde_json::json!({"frame": i, "cut": o.cut, "subjects": subjects})
        );
    }
    Ok(())
}
