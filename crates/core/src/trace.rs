//! `SEAMSTREAM_TRACE=1`: one line on stderr at each step of a run's start
//! and end, timed from the process's start. It shows where a split job's
//! worker spends the time outside its frames (issue 27: a worker's start).
//! A thread may carry a label (a split job's worker: `segment 2/4`), which
//! its lines name, so that runs sharing the process tell apart.

use std::cell::RefCell;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

static START: OnceLock<Instant> = OnceLock::new();
static ON: OnceLock<bool> = OnceLock::new();

thread_local! {
    static LABEL: RefCell<Option<Arc<str>>> = const { RefCell::new(None) };
}

/// The process's start; the binary calls this first.
pub fn start() -> Instant {
    *START.get_or_init(Instant::now)
}

/// Whether `SEAMSTREAM_TRACE=1` asked for the lines.
pub fn enabled() -> bool {
    *ON.get_or_init(|| std::env::var_os("SEAMSTREAM_TRACE").is_some_and(|v| v == "1"))
}

/// This thread's label, to hand to the threads it starts.
pub fn label() -> Option<Arc<str>> {
    LABEL.with(|l| l.borrow().clone())
}

/// Names this thread's lines from now on (`None`: unnamed).
pub fn set_label(label: Option<Arc<str>>) {
    LABEL.with(|l| *l.borrow_mut() = label);
}

/// Writes `trace  +S.SSS s  what` when tracing is on, with this thread's
/// label.
pub fn mark(what: &str) {
    if enabled() {
        mark_as(label().as_deref(), what);
    }
}

/// [`mark`] under `label`, for callbacks on threads that are not the
/// run's own (GStreamer's streaming threads).
pub fn mark_as(label: Option<&str>, what: &str) {
    if enabled() {
        let t = start().elapsed().as_secs_f64();
        match label {
            Some(l) => eprintln!("trace {t:8.3} s  [{l}] {what}"),
            None => eprintln!("trace {t:8.3} s  {what}"),
        }
    }
}
