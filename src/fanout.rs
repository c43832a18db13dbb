//! `run IN OUT --gpus N|all [--workers M]`: one job split in time over
//! worker processes on one host, then joined.
//!
//! The coordinator counts the input's frames, starts M workers (one per
//! GPU unless `--workers` says otherwise; worker K runs `--segment K/M` on
//! GPU K mod N, which it sees as its only device through
//! `CUDA_VISIBLE_DEVICES`), draws one progress bar from the `frames N`
//! lines they write ([`PROGRESS_LINES`]), and joins their parts into OUT
//! with the input's audio. Parts go to `OUT.parts/`, each worker's messages
//! to `part-K.log` beside its part. With OUT `null` the workers drop their
//! frames: no parts, no join, only the job's speed without its encoders.
//!
//! Ctrl-C reaches every worker (they share the terminal's process group;
//! a SIGTERM to the coordinator alone is passed on): each stops and keeps
//! its frames in a partial file, which no join takes, and OUT is not
//! touched. A worker that fails fails the job once the others are done,
//! naming its segment; the complete parts stay, so that rerunning that
//! segment alone and joining finishes the job.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use seamstream::gst::run::PROGRESS_LINES;

/// How many GPUs `--gpus` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gpus {
    All,
    Count(usize),
}

impl Gpus {
    pub fn parse(text: &str) -> anyhow::Result<Gpus> {
        match text.trim() {
            "all" => Ok(Gpus::All),
            t => match t.parse::<usize>() {
                Ok(n) if n > 0 => Ok(Gpus::Count(n)),
                _ => bail!("`--gpus {text}`: expected a number of GPUs (1, 2, …) or `all`"),
            },
        }
    }
}

/// A job for the workers.
pub struct Job {
    pub input: PathBuf,
    pub output: PathBuf,
    pub gpus: Option<Gpus>,
    pub workers: Option<u32>,
    /// `run`'s other options, given to every worker as they are.
    pub forward: Vec<OsString>,
    pub audio: bool,
    pub keep_parts: bool,
}

/// One worker process and what it has said.
struct Worker {
    index: u32,
    gpu: Option<usize>,
    part: PathBuf,
    log: PathBuf,
    child: Child,
    frames: Arc<AtomicU64>,
    status: Option<std::process::ExitStatus>,
}

pub fn run(job: Job) -> anyhow::Result<ExitCode> {
    // `null`: the workers process their segments and drop the frames, with
    // no parts and no join (the job's speed without its encoders).
    let null = job.output.as_os_str() == "null";
    let ext = if null {
        String::new()
    } else {
        job.output
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .filter(|e| matches!(e.as_str(), "mp4" | "mkv" | "webm"))
            .with_context(|| {
                format!(
                    "`{}`: a job over several workers writes .mp4, .mkv or .webm (its parts are joined without re-encoding), or null",
                    job.output.display()
                )
            })?
    };
    // The GPUs are counted (CUDA started in this process) before any worker
    // starts, which makes the workers' own start of CUDA quick: on 2 H200s
    // a worker's `cuInit` took 0.06-0.08 s after it, against 0.25-0.39 s
    // with the count beside the workers' start, and its first frame came
    // 0.40 s after its start instead of 0.60-0.74 s (the first process to
    // start CUDA on an idle host pays for all; bench/results/multi-gpu.md).
    let gpus = match job.gpus {
        None => None,
        Some(asked) => {
            let counted = seamstream::cuda::device_count();
            seamstream::trace::mark("GPUs counted");
            let asked_as = match asked {
                Gpus::All => "all".to_string(),
                Gpus::Count(n) => n.to_string(),
            };
            match (asked, counted) {
                (_, Err(e)) => bail!(
                    "`--gpus {asked_as}`: no GPU can be used here ({}); split over the CPU with --workers M --device cpu",
                    super::why_not_gpu(&e)
                ),
                (_, Ok(0)) => bail!(
                    "`--gpus {asked_as}`: this machine has no usable GPU; split over the CPU with --workers M --device cpu"
                ),
                (Gpus::All, Ok(have)) => Some(have),
                (Gpus::Count(n), Ok(have)) if n <= have => Some(n),
                (Gpus::Count(_), Ok(have)) => bail!(
                    "`--gpus {asked_as}`: this machine has {have} usable GPU(s); ask for at most {have}, or use --workers M --device cpu"
                ),
            }
        }
    };
    let workers = job.workers.unwrap_or(gpus.unwrap_or(1) as u32);
    if workers == 0 {
        bail!("`--workers 0`: give at least 1");
    }
    // What a single run refuses before it starts, refused before any
    // worker starts; the rest shows as a worker failing before its first
    // frame, which stops the job (below).
    if !null && seamstream::gst::outfile::same_file(&job.input, &job.output) {
        bail!(
            "cannot write `{}`: that is the input; give another output name",
            job.output.display()
        );
    }
    let frames = seamstream::gst::probe::video_frames(&job.input)?.len() as u64;
    seamstream::trace::mark("frames counted");
    // Fails here, naming the counts, when there are more workers than frames.
    seamstream::split::plan(frames, workers, &[], 0)?;
    // The parts and the workers' logs (for null, the logs alone, in a
    // folder of the system's temporary directory).
    let parts_dir = if null {
        std::env::temp_dir().join(format!("seamstream-null-{}.parts", std::process::id()))
    } else {
        parts_dir(&job.output)
    };
    if parts_dir.exists() && std::fs::read_dir(&parts_dir)?.next().is_some() {
        bail!(
            "`{}` holds the parts of an earlier job; finish it (rerun its missing segments with --segment K/N, then `seamstream join`) or remove the folder",
            parts_dir.display()
        );
    }
    std::fs::create_dir_all(&parts_dir)
        .with_context(|| format!("cannot create `{}` for the parts", parts_dir.display()))?;

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        ctrlc::set_handler(move || stop.store(true, Ordering::Relaxed))
            .context("cannot install the Ctrl-C handler")?;
    }
    let exe =
        std::env::current_exe().context("cannot find the seamstream binary to start workers")?;
    let started = Instant::now();
    let rayon_share = worker_threads(workers);
    let visible = std::env::var("CUDA_VISIBLE_DEVICES").ok();
    let mut pool = Vec::new();
    for k in 0..workers {
        let gpu = gpus.map(|n| k as usize % n);
        let part = if null {
            PathBuf::from("null")
        } else {
            parts_dir.join(format!("part-{k:05}.{ext}"))
        };
        let log = parts_dir.join(format!("part-{k:05}.log"));
        let mut cmd = Command::new(&exe);
        cmd.arg("run")
            .arg(&job.input)
            .arg(&part)
            .arg("--segment")
            .arg(format!("{k}/{workers}"))
            .args(&job.forward)
            .env(PROGRESS_LINES, "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log)?);
        // A fault for the tests: this worker kills itself mid-segment.
        if seamstream::fault::given("SEAMSTREAM_INJECT_KILL_SEGMENT")
            .is_some_and(|v| v == k.to_string())
        {
            cmd.env("SEAMSTREAM_INJECT_KILL_AFTER", "3");
        }
        if let Some(n) = rayon_share {
            cmd.env("RAYON_NUM_THREADS", n.to_string());
        }
        if let Some(g) = gpu {
            cmd.env(
                "CUDA_VISIBLE_DEVICES",
                visible_device(g, visible.as_deref()),
            )
            .args(["--device", "cuda"]);
        }
        die_with_parent(&mut cmd);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                stop_all(&mut pool);
                bail!("cannot start worker {k}: {e}");
            }
        };
        let count = Arc::new(AtomicU64::new(0));
        if let Some(out) = child.stdout.take() {
            let count = count.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(|l| l.ok()) {
                    if let Some(n) = line.strip_prefix("frames ").and_then(|n| n.parse().ok()) {
                        count.store(n, Ordering::Relaxed);
                    }
                }
            });
        }
        pool.push(Worker {
            index: k,
            gpu,
            part,
            log,
            child,
            frames: count,
            status: None,
        });
    }
    seamstream::trace::mark("workers started");
    let place = match gpus {
        Some(n) => format!("{n} GPU(s)"),
        None => "this machine".into(),
    };
    eprintln!(
        "{frames} frames of {} in {workers} segments on {place}; {} in {}",
        job.input.display(),
        if null { "the workers' logs" } else { "parts" },
        parts_dir.display()
    );
    let bar = progress_bar(frames);
    let mut signalled = false;
    while pool.iter().any(|w| w.status.is_none()) {
        for w in pool.iter_mut().filter(|w| w.status.is_none()) {
            w.status = w.child.try_wait().ok().flatten();
            if w.status.is_some() {
                seamstream::trace::mark(&format!("worker {} exited", w.index));
            }
        }
        // A worker that exits with an error before its first frame met
        // what every part of the job meets (the output, the device, the
        // chain against the input): the job stops there, and leaves
        // nothing, since every part would fail the same way.
        // (Not once the job is stopped: a worker stopped before its first
        // frame did not fail, and the others' partial parts stay.)
        if let Some(w) = pool.iter().find(|w| {
            !stop.load(Ordering::Relaxed)
                && w.status.is_some_and(|s| s.code().is_some_and(|c| c != 0))
                && w.frames.load(Ordering::Relaxed) == 0
        }) {
            let why = last_error(&w.log)
                .map(|e| e.trim_start_matches("error: ").to_string())
                .unwrap_or_else(|| {
                    format!(
                        "{} (its messages were in {})",
                        describe_exit(w.status),
                        w.log.display()
                    )
                });
            let index = w.index;
            bar.finish_and_clear();
            stop_all(&mut pool);
            let _ = std::fs::remove_dir_all(&parts_dir);
            bail!(
                "segment {index}/{workers} failed before its first frame, so the job was stopped (every segment would fail the same way); nothing was written:\n  {why}"
            );
        }
        bar.set_position(pool.iter().map(|w| w.frames.load(Ordering::Relaxed)).sum());
        if stop.load(Ordering::Relaxed) && !signalled {
            // A terminal's Ctrl-C has reached the workers too; a SIGTERM
            // to the coordinator alone is passed on here.
            signal_all(&pool, libc::SIGINT);
            signalled = true;
        }
        // Looked at often: the job ends when its last worker does (every
        // 100 ms cost it 50 ms on average, 0.4% of a 13-s job).
        std::thread::sleep(Duration::from_millis(10));
    }
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    if stop.load(Ordering::Relaxed) {
        eprintln!(
            "interrupted: {} was not written; the complete parts are in {} (rerun the others with --segment K/{workers}, then `seamstream join`)",
            job.output.display(),
            parts_dir.display()
        );
        return Ok(ExitCode::from(130));
    }
    let failed: Vec<&Worker> = pool
        .iter()
        .filter(|w| !w.status.is_some_and(|s| s.success()))
        .collect();
    if !failed.is_empty() {
        let mut text = if null {
            format!("{} of {workers} segments failed", failed.len())
        } else {
            format!(
                "{} of {workers} segments failed; {} was not written, the complete parts are in {}",
                failed.len(),
                job.output.display(),
                parts_dir.display()
            )
        };
        for w in &failed {
            text.push_str(&format!(
                "\n  segment {}/{workers}{}: {}; its messages are in {}{}",
                w.index,
                w.gpu.map_or(String::new(), |g| format!(" (GPU {g})")),
                describe_exit(w.status),
                w.log.display(),
                w.status
                    .filter(|s| s.code().is_some())
                    .and_then(|_| last_error(&w.log))
                    .map_or(String::new(), |e| format!("\n    {e}"))
            ));
        }
        if null {
            bail!(text);
        }
        let forward: Vec<String> = job
            .forward
            .iter()
            .map(|a| shell_word(&a.to_string_lossy()))
            .collect();
        text.push_str(&format!(
            "\nTo finish: rerun each failed segment, e.g.\n  seamstream run {} {} --segment {}/{workers} {}\nthen\n  seamstream join {} {}/part-?????.{ext}{}",
            shell_word(&job.input.to_string_lossy()),
            shell_word(&failed[0].part.to_string_lossy()),
            failed[0].index,
            forward.join(" "),
            shell_word(&job.output.to_string_lossy()),
            shell_word(&parts_dir.to_string_lossy()),
            if job.audio {
                format!(" --audio-from {}", shell_word(&job.input.to_string_lossy()))
            } else {
                String::new()
            }
        ));
        bail!(text);
    }
    if null {
        // Every worker succeeded, so each had its segment's every frame.
        eprintln!(
            "{frames} frames in {workers} segments on {place}: {seconds:.2} s ({:.1} fps); output null (nothing written)",
            frames as f64 / seconds.max(1e-9)
        );
        if !job.keep_parts {
            let _ = std::fs::remove_dir_all(&parts_dir);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let parts: Vec<PathBuf> = pool.iter().map(|w| w.part.clone()).collect();
    // The source places the parts, whether or not its audio goes along.
    let joined = seamstream::gst::join::join(&job.output, &parts, Some(&job.input), job.audio)?;
    let total = started.elapsed().as_secs_f64();
    eprintln!(
        "{} frames in {workers} segments on {place}: {seconds:.2} s ({:.1} fps), joined in {:.2} s; {total:.2} s in all",
        joined.frames(),
        joined.frames() as f64 / seconds.max(1e-9),
        joined.seconds
    );
    for st in &joined.streams {
        eprintln!("  {} {}: {}", st.kind, st.what, st.action);
    }
    if !job.keep_parts {
        let _ = std::fs::remove_dir_all(&parts_dir);
    }
    eprintln!("wrote {}", job.output.display());
    Ok(ExitCode::SUCCESS)
}

/// `OUT.parts/` beside the output.
pub fn parts_dir(output: &Path) -> PathBuf {
    let mut name = output.file_name().unwrap_or_default().to_os_string();
    name.push(".parts");
    output.with_file_name(name)
}

fn progress_bar(total: u64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} frames, {per_sec}, ETA {eta}")
    {
        bar.set_style(style);
    }
    bar
}

fn signal_all(pool: &[Worker], signal: libc::c_int) {
    for w in pool.iter().filter(|w| w.status.is_none()) {
        // SAFETY: kill(2) with the pid of a child we started and have not
        // reaped (its status is unknown), so the pid is still ours.
        unsafe {
            libc::kill(w.child.id() as libc::pid_t, signal);
        }
    }
}

/// Makes the worker get SIGTERM when the coordinator dies, however it
/// dies (`kill -9` included): a worker then finishes its part as on
/// Ctrl-C instead of running on alone.
fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id();
    // SAFETY: the closure runs in the child between fork and exec; it only
    // calls prctl, getppid and raise, which are async-signal-safe, and
    // allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The coordinator died before the prctl took hold.
            if libc::getppid() as u32 != parent {
                libc::raise(libc::SIGTERM);
            }
            Ok(())
        });
    }
}

fn stop_all(pool: &mut [Worker]) {
    signal_all(pool, libc::SIGINT);
    for w in pool.iter_mut() {
        let _ = w.child.wait();
    }
}

fn describe_exit(status: Option<std::process::ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(s) => match (s.code(), s.signal()) {
            (Some(c), _) => format!("exit code {c}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            _ => "ended abnormally".into(),
        },
        None => "unknown".into(),
    }
}

/// The worker's `error:` line, if its log has one: the last, which its
/// `main` prints as it stops (asked only of a worker that exited with a
/// code; a killed one printed no reason).
fn last_error(log: &Path) -> Option<String> {
    let text = std::fs::read_to_string(log).ok()?;
    text.lines()
        .rev()
        .find(|l| l.starts_with("error:"))
        .map(|l| l.chars().take(300).collect())
}

/// `text` as one shell word.
fn shell_word(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=%,+@".contains(c))
    {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// The `CUDA_VISIBLE_DEVICES` that gives a worker the `k`-th GPU this
/// process sees: the `k`-th entry of the process's own list where it has
/// one (Slurm's allocation, or a user's `2,3`; an entry may be a UUID),
/// else `k`.
fn visible_device(k: usize, visible: Option<&str>) -> String {
    let entries: Vec<&str> = visible
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .collect();
    match entries.get(k) {
        Some(e) => e.to_string(),
        None => k.to_string(),
    }
}

/// Each worker's share of the machine for its thread pools (rayon's: the
/// CPU chain, fast retargeting's motion analysis), unless the user set
/// `RAYON_NUM_THREADS`. Left alone, N workers start N pools as large as the
/// machine: on 64 cores, four workers of fast retargeting ran their frames
/// 7-12% slower for it (bench/results/multi-gpu.md). Never under two a
/// worker: on 2 cores, one thread each made two CPU workers slower.
fn worker_threads(workers: u32) -> Option<usize> {
    if std::env::var_os("RAYON_NUM_THREADS").is_some() {
        return None;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    Some(share_of(cores, workers))
}

/// `cores` shared out among `workers`, at least two each.
fn share_of(cores: usize, workers: u32) -> usize {
    (cores / workers.max(1) as usize).max(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_gets_the_kth_gpu_this_process_sees() {
        assert_eq!(visible_device(0, None), "0");
        assert_eq!(visible_device(3, None), "3");
        assert_eq!(visible_device(0, Some("")), "0");
        // Slurm's allocation, or a user's list: the k-th entry, not GPU k.
        assert_eq!(visible_device(0, Some("2,3")), "2");
        assert_eq!(visible_device(1, Some("2, 3")), "3");
        assert_eq!(visible_device(1, Some("GPU-aaaa,GPU-bbbb")), "GPU-bbbb");
    }

    #[test]
    fn workers_share_the_cores_at_two_threads_or_more() {
        assert_eq!(share_of(64, 4), 16);
        assert_eq!(share_of(32, 2), 16);
        assert_eq!(share_of(16, 3), 5);
        // Fewer cores than two a worker: two each, as one thread was slower.
        assert_eq!(share_of(2, 2), 2);
        assert_eq!(share_of(2, 8), 2);
        assert_eq!(share_of(8, 0), 8);
    }

    #[test]
    fn gpus_parse_counts_and_all() {
        assert_eq!(Gpus::parse("all").unwrap(), Gpus::All);
        assert_eq!(Gpus::parse("4").unwrap(), Gpus::Count(4));
        for bad in ["0", "-1", "two", ""] {
            let e = Gpus::parse(bad).unwrap_err().to_string();
            assert!(e.contains("--gpus") && e.contains("`all`"), "{bad}: {e}");
        }
    }

    #[test]
    fn parts_go_beside_the_output() {
        assert_eq!(
            parts_dir(Path::new("a/out.mp4")),
            PathBuf::from("a/out.mp4.parts")
        );
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("gaussian:sigma=2"), "gaussian:sigma=2");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }
}
