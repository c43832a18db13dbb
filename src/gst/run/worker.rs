//! The chain's thread: takes frames from the intake's channel, runs them
//! through the chain on its backend (the GPU stage may hold a few), and
//! sends the finished ones, in order, to the calling thread; an end mark
//! or an error ends it.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use super::engine::{OutMemory, Timed, Work};
use super::{Msg, RunOptions, Shared};
use crate::error::{Error, Result};
use crate::gst::Output;
use crate::ops::Chain;

/// Starts the chain's thread: frames from `rx`, results to `tx` (the GPU's
/// written into `memory`).
pub(super) fn spawn(
    opts: &RunOptions,
    chain: Chain,
    memory: OutMemory,
    rx: Receiver<Msg>,
    tx: Sender<Msg>,
    shared: Arc<Shared>,
) -> Result<JoinHandle<()>> {
    let backend = opts.backend.clone();
    let slots = opts.slots;
    // Every file format takes 4:2:0 (encoders and y4m alike): the frames go
    // out as I420 converted here, not by GStreamer.
    let yuv_out = matches!(opts.output, Output::Null | Output::File { .. })
        .then_some(crate::frame::PixelFormat::I420);
    std::thread::Builder::new()
        .name("seamstream-chain".into())
        .spawn(move || {
            serve(
                Work::new(chain, backend, slots, yuv_out, true).with_memory(memory),
                &rx,
                &tx,
                &shared,
            )
        })
        .map_err(|e| crate::gst::gst_call("cannot start the chain thread", e))
}

/// The thread's loop: until an end mark, an error, or the run's end.
fn serve(mut work: Work, rx: &Receiver<Msg>, tx: &Sender<Msg>, shared: &Shared) {
    // A fault for the tests: the chain thread panics after N frames.
    let panic_after = crate::fault::after("SEAMSTREAM_INJECT_CHAIN_PANIC_AFTER");
    loop {
        // While the GPU holds frames, look for finished ones often,
        // so a live source gets each frame back as soon as it is done.
        let wait = if work.busy() { 1 } else { 50 };
        let msg = match rx.recv_timeout(Duration::from_millis(wait)) {
            Ok(m) => Some(m),
            Err(crossbeam_channel::RecvTimeoutError::Timeout)
                if !shared.abort.load(Ordering::Relaxed) =>
            {
                None
            }
            Err(_) => break,
        };
        let start = Instant::now();
        let (outs, end) = match msg {
            Some(Msg::Frame(t)) => {
                let n = shared.taken.fetch_add(1, Ordering::Relaxed);
                if panic_after == Some(n) {
                    panic!("injected by SEAMSTREAM_INJECT_CHAIN_PANIC_AFTER={n}");
                }
                (work.push(*t), None)
            }
            // The end (or the intake's failure): the frames held to look
            // ahead are framed and go out too.
            Some(other) => (end_of(&mut work), Some(other)),
            None => (work.poll(), None),
        };
        if shared.memory_out.get().is_none()
            && let Some(m) = work.memory_out()
        {
            let _ = shared.memory_out.set(m);
        }
        // The host copies in and out of pinned memory count as
        // copies, not as the chain.
        let (copied_in, copied_out) = work.copy_times();
        let chain = start.elapsed().saturating_sub(copied_in + copied_out);
        Shared::add(&shared.chain_ns, chain);
        Shared::add(&shared.copy_in_ns, copied_in);
        Shared::add(&shared.copy_out_ns, copied_out);
        let frames = |f: Vec<Timed>| f.into_iter().map(|t| Msg::Frame(Box::new(t)));
        let mut msgs: Vec<Msg> = match outs {
            Ok(f) => frames(f).collect(),
            Err(e) => {
                // Frames the GPU finished before the failure are
                // still written, if the ring can give them back.
                let mut m: Vec<Msg> = frames(work.finish().unwrap_or_default()).collect();
                m.push(Msg::Failed(e));
                m
            }
        };
        msgs.extend(end);
        let stop = msgs.iter().any(|m| !matches!(m, Msg::Frame(_)));
        if msgs.into_iter().any(|m| tx.send(m).is_err()) || stop {
            break;
        }
    }
}

/// Every frame still in the chain: those it holds to look ahead, then
/// those in the GPU stage.
fn end_of(work: &mut Work) -> Result<Vec<Timed>> {
    let mut done = work.drain(&mut || None)?;
    done.extend(work.finish()?);
    Ok(done)
}

/// Waits for the chain's thread; its panic is the run's failure.
pub(super) fn join(worker: JoinHandle<()>) -> Result<()> {
    worker.join().map_err(|payload| {
        Error::Pipeline(format!(
            "the chain thread (seamstream-chain) panicked: {}",
            panic_message(payload.as_ref())
        ))
    })
}

/// A panic's message, as `panic!` gave it.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}
