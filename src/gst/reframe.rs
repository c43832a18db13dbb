//! A reframe's plan before `run` renders: the whole file analysed and every
//! shot planned with the shot in view, or a path file replayed
//! (docs/reframe.md).
//!
//! A file is decoded once here for the analysis (its frames go through the
//! same [`Thumbs`] as live planning takes, and the plan is the same on the
//! CPU and the GPU, which then render it); a live source, a camera or a
//! test pattern plan frame by frame as the frames come, and what they
//! chose can be written afterwards ([`Recording`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::Input;
use super::decode::{FrameReader, RgbaSample};
use crate::error::{Error, Result};
use crate::ops::reframe::analyze::{Analyzer, FACE_EVERY, Thumbs};
use crate::ops::reframe::geometry::Fit;
use crate::ops::reframe::path::PathFile;
use crate::ops::reframe::plan::{Camera, ShotPlan, shots_of};
use crate::ops::reframe::{MadeFor, Record, Reframe, plan_video};
use crate::ops::{Chain, Op};

/// How a run's reframe got its plan.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// The file was analysed ahead of the render.
    Planned { seconds: f64 },
    /// A path file was replayed.
    Replayed(PathBuf),
    /// Planned frame by frame as they came (live, cameras, test sources),
    /// each seeing `ahead` seconds of the frames after it.
    Live { ahead: f64 },
}

/// What the plan holds, for the summary.
#[derive(Clone, Debug)]
pub struct Planned {
    pub source: Source,
    pub shots: Vec<ShotPlan>,
    pub frames: usize,
    /// The path file written (or to write after a live run).
    pub written: Option<PathBuf>,
    /// A live reframe's plans as they are made, for the path file written
    /// after the run ([`Planned::finish`]).
    pub recording: Option<Arc<Mutex<Record>>>,
    /// The op's padding, for that file.
    pub pad: String,
    /// The input's size and the output's, once known.
    pub sizes: Option<((usize, usize), (usize, usize))>,
    pub fps: Option<f64>,
    /// The plan as a path file, when it was made or read ahead.
    pub path: Option<PathFile>,
}

impl Planned {
    fn new(source: Source, pad: String) -> Planned {
        Planned {
            source,
            shots: Vec::new(),
            frames: 0,
            written: None,
            recording: None,
            pad,
            sizes: None,
            fps: None,
            path: None,
        }
    }

    /// After a live run: its shots from the recorded plans, and the path
    /// file written when one was asked for. `input` is the input's size
    /// and `out` the output's.
    pub fn finish(&mut self, input: (usize, usize), out: (usize, usize)) -> Result<()> {
        let Some(rec) = &self.recording else {
            return Ok(());
        };
        let Ok(mut rec) = rec.lock() else {
            return Ok(());
        };
        self.shots = rec.shots.shots.clone();
        self.frames = rec.shots.frames;
        if let (Some(p), Some(frames)) = (&self.written, rec.plans.take())
            && !frames.is_empty()
        {
            PathFile::new(input, out, self.fps, &self.pad, &self.shots, &frames).save(p)?;
        }
        Ok(())
    }
}

/// The chain's reframe, if it has one.
pub fn reframe_of(chain: &mut Chain) -> Option<(usize, &mut Reframe)> {
    chain.ops_mut().iter_mut().enumerate().find_map(|(i, op)| {
        (op.as_mut() as &mut dyn std::any::Any)
            .downcast_mut::<Reframe>()
            .map(|r| (i, r))
    })
}

/// The error for a path file given to a chain without a reframe.
pub fn no_reframe_for(path_file: &Path) -> Error {
    Error::Unsupported(format!(
        "--reframe-path {} needs a reframe in the chain, e.g. --op reframe:aspect=9:16",
        path_file.display()
    ))
}

/// Plans the chain's reframe before a run: replays `path_file` when it
/// exists, else analyses a file input (writing `path_file` when given);
/// a live input plans as it goes. `None` when the chain has no reframe.
/// `frames` is the most frames the run takes (`--frames`; 0 or `None`:
/// all): a file is analysed that far and no further, so the plan is of
/// the frames written. `progress` is told each frame analysed.
pub fn prepare(
    chain: &mut Chain,
    input: &Input,
    path_file: Option<&Path>,
    live: bool,
    frames: Option<u64>,
    mut progress: impl FnMut(usize),
) -> Result<Option<Planned>> {
    let sizes: Vec<Option<(usize, usize)>> = chain
        .ops()
        .iter()
        .map(|op| op.output_size(1000, 1000).ok())
        .collect();
    let reframes = chain
        .ops()
        .iter()
        .filter(|op| (op.as_ref() as &dyn std::any::Any).is::<Reframe>())
        .count();
    if reframes > 1 {
        return Err(Error::Unsupported(format!(
            "the chain has {reframes} reframes: a reframe plans its shots on the decoded frames, so a chain takes one; give a single --op reframe:aspect=W:H with the shape you want"
        )));
    }
    let Some((index, op)) = reframe_of(chain) else {
        if let Some(p) = path_file {
            return Err(no_reframe_for(p));
        }
        return Ok(None);
    };
    if sizes[..index].iter().any(|s| *s != Some((1000, 1000))) {
        return Err(Error::Unsupported(
            "reframe plans on the decoded frames: put it before any operation that changes the frame size".into(),
        ));
    }
    if op.replaying() {
        if let Some(p) = path_file {
            return Err(Error::Unsupported(format!(
                "reframe:path= and --reframe-path {} both give a path; give one",
                p.display()
            )));
        }
        let source = op
            .path_file
            .clone()
            .map_or(Source::Live { ahead: 0.0 }, Source::Replayed);
        return Ok(Some(Planned::new(source, op.pad.name())));
    }
    // An existing path file is replayed, never overwritten.
    if let Some(p) = path_file
        && p.exists()
    {
        let file = PathFile::load(p)?;
        let plans = file.plans();
        let frames = plans.len();
        // What will be rendered, from the frames (an edited file's `shots`
        // may no longer say it); a shot the file names with the same frames
        // gives its camera's name (steady and track are not told apart
        // from the windows alone).
        let shots = shots_of(&plans)
            .into_iter()
            .map(|mut shot| {
                if let Some(named) = file
                    .shots
                    .iter()
                    .find(|f| (f.first, f.last, f.mode) == (shot.first, shot.last, shot.fit))
                    && let Some(camera) = Camera::parse(&named.camera)
                {
                    shot.camera = camera;
                }
                shot
            })
            .collect();
        op.replay(
            plans,
            p.display().to_string(),
            Some(MadeFor {
                input: (file.input[0], file.input[1]),
                output: Some((file.output[0], file.output[1])),
            }),
        );
        let mut planned = Planned::new(Source::Replayed(p.to_path_buf()), op.pad.name());
        planned.shots = shots;
        planned.frames = frames;
        planned.fps = file.fps;
        planned.path = Some(file);
        return Ok(Some(planned));
    }
    let file_uri = match input {
        Input::Uri {
            uri,
            path: Some(_),
            still: false,
            streamed: false,
            ..
        } if !live => Some(uri),
        _ => None,
    };
    let Some(uri) = file_uri else {
        // Planned as the frames come: the shots kept for the summary, and
        // every plan for a path file when one is asked for.
        let ahead = op.director.lookahead;
        let mut planned = Planned::new(Source::Live { ahead }, op.pad.name());
        let rec = Arc::new(Mutex::new(Record::new(path_file.is_some())));
        op.record = Some(rec.clone());
        planned.recording = Some(rec);
        planned.written = path_file.map(Path::to_path_buf);
        return Ok(Some(planned));
    };
    let start = std::time::Instant::now();
    let reader = FrameReader::open(uri)?;
    // The analysis takes frames in batches, each spread over the threads;
    // a batch holds a few face frames for each thread.
    let batch = FACE_EVERY * rayon::current_num_threads().max(2);
    let (reader, analyzer, size) = std::thread::scope(|scope| -> Result<_> {
        // Thumbnails are made as the frames are decoded, while the batch
        // before is analysed; at most a batch of them waits.
        let (tx, rx) = std::sync::mpsc::sync_channel(batch);
        let limit = frames.filter(|&n| n > 0);
        let decoding = scope.spawn(move || decode_thumbs(reader, uri, limit, tx));
        let mut analyzer: Option<Analyzer> = None;
        let mut size = (0, 0);
        let mut n = 0;
        // One batch's thumbnails, the vector reused for every batch.
        let mut thumbs = Vec::with_capacity(batch);
        let mut rx = rx.iter().peekable();
        while let Some(d) = rx.next() {
            let a = match &mut analyzer {
                Some(a) => a,
                None => {
                    size = d.size;
                    if let Some(fps) = d.fps {
                        op.set_rate(fps)?;
                    }
                    analyzer.insert(op.director.analyzer(size.0, size.1, false))
                }
            };
            thumbs.push(d.thumbs);
            if thumbs.len() == batch || rx.peek().is_none() {
                a.push_many(&thumbs);
                n += thumbs.len();
                thumbs.clear();
                progress(n);
            }
        }
        drop(rx);
        let reader = decoding.join().map_err(|_| {
            Error::Pipeline(format!("decoding {uri} for the reframe's plan panicked"))
        })??;
        Ok((reader, analyzer, size))
    })?;
    let Some(analyzer) = analyzer else {
        return Err(Error::Read {
            path: uri.into(),
            reason: "it has no video frames to plan a reframe on".into(),
        });
    };
    op.director.check_hints(size.0, size.1)?;
    let mut obs = analyzer.finish();
    for (i, o) in obs.iter_mut().enumerate() {
        o.subjects.extend(op.director.user_subjects(i));
    }
    let out = op.output_size(size.0, size.1)?;
    let (shots, frames) = plan_video(&obs, &op.director, size, out);
    let file = PathFile::new(size, out, reader.fps(), &op.pad.name(), &shots, &frames);
    let written = match path_file {
        Some(p) => {
            file.save(p)?;
            Some(p.to_path_buf())
        }
        None => None,
    };
    let count = frames.len();
    op.replay(
        frames,
        format!("the plan of {uri}"),
        Some(MadeFor {
            input: size,
            output: Some(out),
        }),
    );
    let seconds = start.elapsed().as_secs_f64();
    let mut planned = Planned::new(Source::Planned { seconds }, op.pad.name());
    planned.shots = shots;
    planned.frames = count;
    planned.written = written;
    planned.sizes = Some((size, out));
    planned.fps = reader.fps();
    planned.path = Some(file);
    Ok(Some(planned))
}

/// One decoded frame's thumbnails, with the frame's size and the rate.
struct Decoded {
    thumbs: Thumbs,
    size: (usize, usize),
    fps: Option<f64>,
}

/// Decodes `reader`'s frames and sends each one's thumbnails, until the
/// last, the `limit`-th, or until no one takes them; gives the reader back
/// for its rate. The thumbnails are made from the decoder's buffers where
/// they lie, by [`thumb_makers`] threads a few frames apart, and sent in
/// order: on one thread, copying each frame first, this was a 1080p plan's
/// slowest step (4.8 ms a frame on the H200 host, where the analysis took
/// 1.6).
fn decode_thumbs(
    mut reader: FrameReader,
    uri: &str,
    limit: Option<u64>,
    tx: std::sync::mpsc::SyncSender<Decoded>,
) -> Result<FrameReader> {
    type Job = (usize, RgbaSample, crossbeam_channel::Sender<Result<Thumbs>>);
    let makers = thumb_makers();
    std::thread::scope(|scope| -> Result<()> {
        // (Made in the scope: however this returns, `jobs` goes before the
        // scope waits for the makers, which stop when it does.)
        let (jobs, taken) = crossbeam_channel::bounded::<Job>(makers);
        for _ in 0..makers {
            let taken = taken.clone();
            scope.spawn(move || {
                for (n, sample, done) in taken {
                    let _ = done.send(sample.with_rows(|rows| Thumbs::of_rows(rows, n)));
                }
            });
        }
        // The frames being made, oldest first; each is sent once made,
        // after the one before it.
        let mut making = std::collections::VecDeque::new();
        let mut size = None;
        let mut fps = None;
        let mut n = 0;
        let send = |made: crossbeam_channel::Receiver<Result<Thumbs>>,
                    size: (usize, usize),
                    fps: Option<f64>|
         -> Result<bool> {
            let thumbs = made.recv().map_err(|_| {
                Error::Pipeline(format!("making {uri}'s thumbnails for its plan stopped"))
            })??;
            Ok(tx.send(Decoded { thumbs, size, fps }).is_ok())
        };
        while limit.is_none_or(|l| (n as u64) < l)
            && let Some(sample) = reader.next_sample()?
        {
            let this = sample.size();
            let size = *size.get_or_insert(this);
            if this != size {
                return Err(Error::Unsupported(format!(
                    "{uri}: the frame size changes from {}x{} to {}x{} at frame {n}; reframe plans one size",
                    size.0, size.1, this.0, this.1
                )));
            }
            fps = reader.fps();
            let (done, made) = crossbeam_channel::bounded(1);
            if jobs.send((n, sample, done)).is_err() {
                break;
            }
            making.push_back(made);
            if making.len() > makers
                && let Some(made) = making.pop_front()
                && !send(made, size, fps)?
            {
                return Ok(());
            }
            n += 1;
        }
        while let (Some(made), Some(size)) = (making.pop_front(), size) {
            if !send(made, size, fps)? {
                break;
            }
        }
        Ok(())
    })?;
    Ok(reader)
}

/// Threads that make a planned file's thumbnails: a quarter of the cores,
/// one to four (the rest analyse).
fn thumb_makers() -> usize {
    (rayon::current_num_threads() / 4).clamp(1, 4)
}

/// A reframe in `chain` made to record its plan, for a picture's summary
/// ([`describe_still`]): the record, shared with the GPU's half when the
/// chain is put on the GPU after this.
pub fn record_still(chain: &mut Chain) -> Option<Arc<Mutex<Record>>> {
    let (_, op) = reframe_of(chain)?;
    let rec = Arc::new(Mutex::new(Record::new(true)));
    op.record = Some(rec.clone());
    Some(rec)
}

/// What a picture's reframe chose, in one line: its fit and window (and
/// the picture set inside the frame that it kept to), from its record.
pub fn describe_still(record: &Mutex<Record>) -> Option<String> {
    let rec = record.lock().ok()?;
    let plan = rec.plans.as_ref()?.first()?;
    let w = plan.window;
    let how = match (plan.fit, plan.carve_to) {
        (Fit::Carve, Some(k)) => format!(", narrowed to {k} px beside its subjects"),
        (Fit::Pad, _) => ", scaled to fit and padded".into(),
        _ => String::new(),
    };
    let inside = inside_picture(rec.shots.shots.first().and_then(|s| s.picture));
    Some(format!(
        "reframe: {}, the window at {},{} {}x{}{how}{inside}",
        plan.fit.name(),
        w.x,
        w.y,
        w.w,
        w.h
    ))
}

/// The summary's words for a plan made inside a picture set in the frame
/// (none for the whole frame).
fn inside_picture(picture: Option<crate::ops::reframe::geometry::Rect>) -> String {
    picture
        .map(|p| {
            format!(
                ", inside the picture at {},{} {}x{} (the bars or fill beside it left out)",
                p.x, p.y, p.w, p.h
            )
        })
        .unwrap_or_default()
}

/// The shots of a plan in one line each: frames, fit, camera.
pub fn describe_shots(shots: &[ShotPlan], fps: Option<f64>) -> Vec<String> {
    shots
        .iter()
        .enumerate()
        .map(|(i, s)| {
            // A live shot's next part: its window widened or narrowed.
            let then = if i > 0 && shots[i - 1].shot == s.shot {
                "then "
            } else {
                ""
            };
            let time = fps
                .map(|r| {
                    format!(
                        " ({:.2}-{:.2} s)",
                        s.first as f64 / r,
                        (s.last + 1) as f64 / r
                    )
                })
                .unwrap_or_default();
            let inside = inside_picture(s.picture);
            format!(
                "frames {}-{}{time}: {then}{}, camera {}{inside}",
                s.first,
                s.last,
                s.fit.name(),
                s.camera.name()
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::Frame;
    use gstreamer as gst;
    use gstreamer::prelude::*;

    /// A clip of a moving ball, `n` frames of 320×180, written to `path`.
    fn ball_clip(path: &Path, n: usize) {
        gst::init().unwrap();
        let pipe = gst::parse::launch(&format!(
            "videotestsrc pattern=ball num-buffers={n} ! video/x-raw,width=320,height=180,format=I420 \
             ! y4menc ! filesink location=\"{}\"",
            path.display()
        ))
        .unwrap();
        pipe.set_state(gst::State::Playing).unwrap();
        let bus = pipe.bus().unwrap();
        let msg = bus
            .timed_pop_filtered(
                gst::ClockTime::from_seconds(30),
                &[gst::MessageType::Eos, gst::MessageType::Error],
            )
            .expect("the clip is written");
        assert!(matches!(msg.view(), gst::MessageView::Eos(_)), "{msg:?}");
        pipe.set_state(gst::State::Null).unwrap();
    }

    /// What `decode_thumbs` sends for `clip`, up to `limit` frames.
    fn sent_for(clip: &Path, limit: Option<u64>) -> Vec<Decoded> {
        let reader = FrameReader::open(&clip.to_string_lossy()).unwrap();
        let (tx, rx) = std::sync::mpsc::sync_channel(3);
        let decoding =
            std::thread::spawn(move || decode_thumbs(reader, "ball", limit, tx).map(|_| ()));
        let sent: Vec<Decoded> = rx.iter().collect();
        decoding.join().unwrap().unwrap();
        sent
    }

    #[test]
    fn a_planned_files_thumbnails_come_in_order_as_its_frames_give_them() {
        // Made by several threads from the decoder's buffers, sent in the
        // frames' order: each the thumbnails of the frame it stands for.
        let dir = std::env::temp_dir().join(format!("seamstream-thumbs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let clip = dir.join("ball.y4m");
        ball_clip(&clip, 45);
        let sent = sent_for(&clip, None);
        let mut reader = FrameReader::open(&clip.to_string_lossy()).unwrap();
        let mut n = 0;
        while let Some(frame) = reader.next_frame().unwrap() {
            let own = Thumbs::of(&Frame::Rgba(frame), n);
            let d = &sent[n];
            assert_eq!(d.size, (320, 180));
            assert!(d.thumbs.thumb == own.thumb, "frame {n}'s thumbnail");
            assert!(d.thumbs.face == own.face, "frame {n}'s face picture");
            n += 1;
        }
        assert_eq!((n, sent.len()), (45, 45));
        // The ball moves: frames out of order would not match.
        assert!(sent[1].thumbs.thumb != sent[2].thumbs.thumb);
        assert_eq!(sent_for(&clip, Some(12)).len(), 12, "a limit of 12 frames");
        std::fs::remove_dir_all(&dir).ok();
    }
}
