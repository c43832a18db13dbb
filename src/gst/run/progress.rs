//! The progress of a run on stderr: a bar for file jobs (frames, fps, ETA)
//! and a rolling rate for live ones.

use gst::prelude::*;
use gstreamer as gst;
use gstreamer_video as gst_video;

use super::RunOptions;
use crate::gst::Input;

/// Frames a file job should give, for the progress bar: the test source's
/// count, or the duration times the frame rate; `None` if unknown.
pub(super) fn expected_frames(
    opts: &RunOptions,
    pipe: &gst::Pipeline,
    info: &gst_video::VideoInfo,
) -> Option<u64> {
    if let Some(span) = &opts.span {
        return Some(span.frames());
    }
    match opts.input {
        Input::Test { .. } => return opts.test.frames,
        Input::Sample => {
            return Some(
                opts.test
                    .frames
                    .unwrap_or(crate::gst::sample::DEFAULT_FRAMES),
            );
        }
        _ => {}
    }
    let limit = opts.frame_limit();
    let whole = || {
        let duration = pipe.query_duration::<gst::ClockTime>()?;
        let fps = crate::gst::usable_rate(info.fps());
        if fps.numer() <= 0 || fps.denom() <= 0 {
            return None;
        }
        Some(duration.nseconds() * fps.numer() as u64 / fps.denom() as u64 / 1_000_000_000)
    };
    match (whole(), limit) {
        (Some(w), Some(n)) => Some(w.min(n)),
        (w, n) => w.or(n),
    }
}

/// A progress bar for file jobs (frames, fps, ETA) and a rolling rate for
/// live ones; drawn on stderr only when it is a terminal.
pub(super) struct Progress {
    bar: indicatif::ProgressBar,
    live: bool,
    /// The caller's hook, and when it was last told.
    hook: Option<(super::OnProgress, std::cell::Cell<std::time::Instant>)>,
    total: std::cell::Cell<Option<u64>>,
    /// For a worker of `run --gpus` ([`PROGRESS_LINES`] set): frames done,
    /// and when they were last written to stdout.
    lines: Option<std::cell::Cell<(u64, std::time::Instant)>>,
}

/// The environment variable that makes a run write `frames N` lines to
/// stdout (about ten a second, and at the end): how `run --gpus`'s
/// coordinator follows its workers.
pub const PROGRESS_LINES: &str = "SEAMSTREAM_PROGRESS_LINES";

impl Progress {
    pub fn new(live: bool, hook: Option<super::OnProgress>) -> Self {
        let long_ago = std::time::Instant::now() - std::time::Duration::from_secs(1);
        Self {
            bar: indicatif::ProgressBar::hidden(),
            live,
            hook: hook.map(|h| (h, std::cell::Cell::new(long_ago))),
            total: std::cell::Cell::new(None),
            lines: std::env::var_os(PROGRESS_LINES)
                .map(|_| std::cell::Cell::new((0, std::time::Instant::now()))),
        }
    }

    fn line(&self, last: bool) {
        use std::io::Write;
        if let Some(c) = &self.lines {
            let (n, at) = c.get();
            let n = if last { n } else { n + 1 };
            if last || at.elapsed() >= std::time::Duration::from_millis(100) {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "frames {n}").and_then(|()| out.flush());
                c.set((n, std::time::Instant::now()));
            } else {
                c.set((n, at));
            }
        }
    }

    /// Tells the caller's hook, at most ten times a second unless `last`.
    fn tell(&self, last: bool) {
        if let Some((hook, at)) = &self.hook
            && (last || at.get().elapsed() >= std::time::Duration::from_millis(100))
        {
            (hook.0)(self.bar.position(), self.total.get());
            at.set(std::time::Instant::now());
        }
    }

    pub fn start(&self, total: Option<u64>) {
        self.total.set(total);
        let (template, len) = match (self.live, total) {
            (false, Some(n)) => ("{bar:40} {pos}/{len} frames, {fps}, ETA {eta}", Some(n)),
            _ => ("{spinner} {pos} frames, {fps} {msg}", None),
        };
        if let Some(n) = len {
            self.bar.set_length(n);
        }
        if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
            let fps = |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.1} fps", s.per_sec());
            };
            self.bar.set_style(style.with_key("fps", fps));
        }
        self.bar
            .set_draw_target(indicatif::ProgressDrawTarget::stderr());
    }

    pub fn frame(&self, dropped: u64) {
        self.bar.inc(1);
        self.line(false);
        self.tell(false);
        if self.live && dropped > 0 {
            self.bar.set_message(format!("({dropped} dropped)"));
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
        self.line(true);
        self.tell(true);
    }
}
