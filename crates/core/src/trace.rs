//! `SEAMSTREAM_TRACE=1`: one line on stderr at each step of a run's start
//! and end, timed from the process's start. It shows where a split job's
//! worker spends the time outside its frames (issue 27: a worker's start).

use std::sync::OnceLock;
use std::time::Instant;

static START: OnceLock<Instant> = OnceLock::new();
static ON: OnceLock<bool> = OnceLock::new();

/// The process's start; the binary calls this first.
pub fn start() -> Instant {
    *START.get_or_init(Instant::now)
}

/// Whether `SEAMSTREAM_TRACE=1` asked for the lines.
pub fn enabled() -> bool {
    *ON.get_or_init(|| std::env::var_os("SEAMSTREAM_TRACE").is_some_and(|v| v == "1"))
}

/// Writes `trace  +S.SSS s  what` when tracing is on.
pub fn mark(what: &str) {
    if enabled() {
        eprintln!("trace {:8.3} s  {what}", start().elapsed().as_secs_f64());
    }
}
