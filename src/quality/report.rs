//! The quality figures of a clip and its result, as `seamstream quality`
//! and the Python package's `quality` give them: two clips read side by
//! side into a [`Meter`], and its report as JSON.

use serde_json::{Value, json};

use super::{Found, Meter, Report, Smoothness};
use crate::error::{Error, Result};
use crate::gst::decode::FrameReader;
use crate::ops::reframe::geometry::Fit;

/// Reads two clips side by side into a meter.
pub fn compare_files(
    original: &str,
    result: &str,
    mut meter: Meter,
    limit: Option<usize>,
    mut progress: impl FnMut(usize),
) -> Result<Meter> {
    let mut reader = FrameReader::open(result)?;
    let mut original_reader = FrameReader::open(original)?;
    let mut n = 0;
    while limit.is_none_or(|l| n < l) {
        let Some(frame) = original_reader.next_frame()? else {
            break;
        };
        let out = reader.next_frame()?.ok_or_else(|| {
            Error::BadFrame(format!(
                "`{}` ended after {n} frames while the original goes on; the clips must have the same frames",
                reader.name()
            ))
        })?;
        meter.push(&frame, &out)?;
        n += 1;
        progress(n);
    }
    if n == 0 {
        return Err(Error::BadFrame(format!("`{original}` gave no frame")));
    }
    if limit.is_none() && reader.next_frame()?.is_some() {
        return Err(Error::BadFrame(format!(
            "`{}` has more frames than the original's {n}; the clips must have the same frames",
            reader.name()
        )));
    }
    Ok(meter)
}

/// The files and settings the figures came from, for the printout.
pub struct Files<'a> {
    pub boxes: Option<&'a std::path::Path>,
    pub path: Option<&'a std::path::Path>,
    pub crops: usize,
}

/// A figure rounded to four places, as the JSON gives them.
pub fn r4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

fn found_json(f: &Found) -> Value {
    json!({
        "kept": f.kept(),
        "ncc": r4(f.ncc),
        "scale": r4(f.scale),
        "at": f.at.map(|a| [a.x, a.y, a.w, a.h]),
    })
}

/// The figures as one JSON object, as `seamstream quality --json` prints
/// them (and the Python package's `quality` returns).
pub fn json(r: &Report, smoothness: Option<&Smoothness>, files: &Files) -> String {
    let crop_json = |c: &crate::quality::CropFigure| {
        json!({
            "position": r4(c.position),
            "window": [c.window.x, c.window.y, c.window.w, c.window.h],
            "bds": r4(c.similarity.total()),
        })
    };
    let best_crop = r.best_crop().map(|c| {
        let mut v = crop_json(c);
        v["ratio"] = json!(r4(r.best_crop_ratio().unwrap_or(f64::NAN)));
        v
    });
    let subjects = r.subjects.as_ref().map(|s| {
        let kept = |k: &crate::quality::KeptCount| {
            let (fr, fs, fc) = k.fractions();
            json!({
                "total": k.total,
                "kept": {"result": r4(fr), "scaled": r4(fs), "centre_crop": r4(fc)},
                "count": {"result": k.result, "scaled": k.scaled, "centre_crop": k.centre},
            })
        };
        let mut labels = serde_json::Map::new();
        for k in &s.labels {
            labels.insert(k.label.clone(), kept(k));
        }
        let mut v = kept(&s.all);
        v["file"] = json!(files.boxes.map(|p| p.display().to_string()));
        v["unseen"] = json!(s.unseen);
        v["labels"] = Value::Object(labels);
        v["boxes"] = s
            .boxes
            .iter()
            .map(|b| {
                let rect = &b.subject.rect;
                json!({
                    "frame": b.subject.frame,
                    "label": b.subject.label,
                    "box": [rect.x, rect.y, rect.w, rect.h],
                    "result": found_json(&b.result),
                    "scaled": found_json(&b.scaled),
                    "centre_crop": found_json(&b.centre),
                })
            })
            .collect();
        v
    });
    let path = smoothness.map(|p| {
        let mut modes = serde_json::Map::new();
        for (m, n) in Fit::ALL.iter().zip(p.modes) {
            modes.insert(m.name().into(), n.into());
        }
        json!({
            "file": files.path.map(|p| p.display().to_string()),
            "frames": p.frames,
            "shots": p.shots,
            "modes": modes,
            "steps": p.steps,
            "max_jump": {
                "x": r4(p.max_jump.0),
                "y": r4(p.max_jump.1),
                "percent_of_width": r4(p.max_jump_percent()),
                "frame": p.max_jump_frame,
            },
            "triples": p.triples,
            "mean_accel": r4(p.mean_accel),
            "mean_accel_xy": [r4(p.mean_accel_xy.0), r4(p.mean_accel_xy.1)],
        })
    });
    json!({
        "frames": r.frames,
        "similarity_frames": r.similarity_frames,
        "original": [r.original.0, r.original.1],
        "size": [r.size.0, r.size.1],
        "similarity": {
            "result": r4(r.result.total()),
            "scaled": r4(r.scaled.total()),
            "ratio": r4(r.similarity_ratio()),
            "completeness": [r4(r.result.completeness), r4(r.scaled.completeness)],
            "coherence": [r4(r.result.coherence), r4(r.scaled.coherence)],
            "best_crop": best_crop,
            "crops": r.crops.iter().map(crop_json).collect::<Vec<_>>(),
        },
        "flicker": {
            "result": r4(r.flicker_result),
            "scaled": r4(r.flicker_scaled),
            "ratio": r4(r.flicker_ratio()),
            "centre_crop": r4(r.flicker_centre),
            "centre_ratio": r4(r.flicker_centre_ratio()),
        },
        "subjects": subjects,
        "path": path,
    })
    .to_string()
}
