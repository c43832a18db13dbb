//! `run IN OUT --gpus N|all [--workers M]`: one job split in time over
//! workers on one host, then joined.
//!
//! The coordinator counts the input's frames, starts M workers (one per
//! GPU unless `--workers` says otherwise; worker K runs `--segment K/M` on
//! GPU K mod N), draws one progress bar from their frame counts, and joins
//! their parts into OUT with the input's audio. Parts go to `OUT.parts/`,
//! each worker's messages to `part-K.log` beside its part. With OUT `null`
//! the workers drop their frames: no parts, no join, only the job's speed
//! without its encoders.
//!
//! GPU workers are threads of this process, each with its GPU's context:
//! NVIDIA's driver serialises the start of CUDA across processes (four
//! worker processes on four GPUs had their contexts only after 1.5 s, one
//! alone after 0.3 s; bench/results/multi-gpu.md), and one process starts
//! it once for every GPU. CPU workers are processes of their own (`run
//! --segment K/M`, their counts read from the `frames N` lines they write,
//! [`PROGRESS_LINES`]), so that one that dies takes nothing else with it;
//! `SEAMSTREAM_WORKER_PROCESSES=1` makes GPU workers processes too (each
//! sees its one GPU through `CUDA_VISIBLE_DEVICES`), `=0` makes CPU workers
//! threads.
//!
//! Ctrl-C stops every worker (processes share the terminal's process group;
//! a SIGTERM to the coordinator alone is passed on): each keeps its frames
//! in a partial file, which no join takes, and OUT is not touched. A worker
//! that fails fails the job once the others are done, naming its segment;
//! the complete parts stay, so that rerunning that segment alone and
//! joining finishes the job.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
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
    /// Runs one segment in this process: the same run as a worker process
    /// of `forward`'s options, for workers that are threads.
    pub in_process: InProcess,
}

/// Runs a segment in this process ([`Seat`]); `Ok` with the run's exit code
/// (130 when it was stopped).
pub type InProcess = Arc<dyn Fn(Seat) -> anyhow::Result<ExitCode> + Send + Sync>;

/// A worker's place in the job, for one that is a thread of this process.
pub struct Seat {
    pub index: u32,
    pub count: u32,
    /// Its part, or `null`.
    pub part: PathBuf,
    /// Its GPU, an ordinal of those this process sees; `None` on the CPU.
    pub gpu: Option<usize>,
    pub within: Within,
}

/// What a run that is one worker of a split job in this process shares
/// with the job: a stop that the job sets (Ctrl-C, or a worker that failed
/// before its first frame), its frame count for the job's bar, and its log,
/// where its messages go instead of the terminal.
pub struct Within {
    pub stop: Arc<AtomicBool>,
    pub frames: Arc<AtomicU64>,
    pub log: std::fs::File,
}

/// One worker and what it has said.
struct Worker {
    index: u32,
    gpu: Option<usize>,
    part: PathBuf,
    log: PathBuf,
    run: Running,
    frames: Arc<AtomicU64>,
    ended: Option<Ended>,
}

enum Running {
    Process(Child),
    /// Taken when the thread is joined.
    Thread(Option<JoinHandle<anyhow::Result<ExitCode>>>),
}

/// How a worker ended.
struct Ended {
    /// Its exit code; `None` when it was killed (a process) or panicked (a
    /// thread).
    code: Option<i32>,
    /// In words: `exit code 1`, `killed by signal 9`, `panicked: …`.
    how: String,
    /// Its `error:` line, for a worker that stopped on an error.
    error: Option<String>,
}

impl Ended {
    fn success(&self) -> bool {
        self.code == Some(0)
    }

    fn of_process(status: std::process::ExitStatus, log: &Path) -> Ended {
        Ended {
            code: status.code(),
            how: describe_exit(status),
            // A killed worker printed no reason.
            error: status.code().and_then(|_| last_error(log)),
        }
    }

    fn of_thread(result: std::thread::Result<anyhow::Result<ExitCode>>) -> Ended {
        match result {
            Ok(Ok(code)) if code == ExitCode::SUCCESS => Ended {
                code: Some(0),
                how: "finished".into(),
                error: None,
            },
            Ok(Ok(_)) => Ended {
                code: Some(130),
                how: "stopped".into(),
                error: None,
            },
            Ok(Err(e)) => Ended {
                code: Some(1),
                how: "failed".into(),
                error: Some(format!("error: {}", super::with_advice(&e))),
            },
            Err(panic) => Ended {
                code: None,
                how: format!(
                    "panicked: {}",
                    panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "no message".into())
                ),
                error: None,
            },
        }
    }
}

impl Worker {
    /// Notes whether it has ended.
    fn poll(&mut self) {
        if self.ended.is_some() {
            return;
        }
        self.ended = match &mut self.run {
            Running::Process(child) => child
                .try_wait()
                .ok()
                .flatten()
                .map(|s| Ended::of_process(s, &self.log)),
            Running::Thread(handle) => {
                if handle.as_ref().is_some_and(|h| h.is_finished()) {
                    handle.take().map(|h| Ended::of_thread(h.join()))
                } else {
                    None
                }
            }
        };
    }

    /// Waits for it to end.
    fn wait(&mut self) {
        if self.ended.is_some() {
            return;
        }
        self.ended = Some(match &mut self.run {
            Running::Process(child) => match child.wait() {
                Ok(s) => Ended::of_process(s, &self.log),
                Err(e) => Ended {
                    code: None,
                    how: format!("lost ({e})"),
                    error: None,
                },
            },
            Running::Thread(handle) => match handle.take() {
                Some(h) => Ended::of_thread(h.join()),
                None => Ended {
                    code: None,
                    how: "lost".into(),
                    error: None,
                },
            },
        });
    }
}

/// Whether the workers are threads of this process: GPU workers are
/// (CUDA's start is then one for every GPU), CPU workers are processes,
/// unless `SEAMSTREAM_WORKER_PROCESSES` says `1` (processes) or `0`
/// (threads).
fn threads(on_gpus: bool, processes: Option<&str>) -> bool {
    match processes.map(str::trim) {
        Some("1") => false,
        Some("0") => true,
        _ => on_gpus,
    }
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
    // CUDA's start takes most of a second: a count of GPUs asked for is
    // checked while the workers start, `all` needs the count first.
    let too_many = |asked: Gpus, have: usize| {
        anyhow::anyhow!(
            "`--gpus {}`: this machine has {have} usable GPU(s); ask for at most {have}, or use --workers M --device cpu",
            match asked {
                Gpus::All => "all".to_string(),
                Gpus::Count(n) => n.to_string(),
            }
        )
    };
    let count_gpus = || seamstream::cuda::device_count().unwrap_or(0);
    let (gpus, counting) = match job.gpus {
        None => (None, None),
        Some(Gpus::All) => match count_gpus() {
            0 => return Err(too_many(Gpus::All, 0)),
            have => (Some(have), None),
        },
        Some(Gpus::Count(n)) => (Some(n), Some(std::thread::spawn(count_gpus))),
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
        // The first asks the workers to stop; a third ends the process at
        // once, as a single run does (threads' parts keep every fragment
        // written).
        let presses = std::sync::atomic::AtomicU32::new(0);
        ctrlc::set_handler(move || {
            stop.store(true, Ordering::Relaxed);
            if presses.fetch_add(1, Ordering::Relaxed) >= 2 {
                std::process::exit(130);
            }
        })
        .context("cannot install the Ctrl-C handler")?;
    }
    // What the workers that are threads are told to stop by.
    let halt = Arc::new(AtomicBool::new(false));
    let as_threads = threads(
        gpus.is_some(),
        std::env::var("SEAMSTREAM_WORKER_PROCESSES").ok().as_deref(),
    );
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
        let count = Arc::new(AtomicU64::new(0));
        let run = if as_threads {
            let seat = Seat {
                index: k,
                count: workers,
                part: part.clone(),
                gpu,
                within: Within {
                    stop: halt.clone(),
                    frames: count.clone(),
                    log: std::fs::File::create(&log)?,
                },
            };
            let go = job.in_process.clone();
            let label: Arc<str> = format!("segment {k}/{workers}").into();
            // A fault for the tests: this worker fails mid-segment (a
            // thread cannot be killed alone).
            let fails = seamstream::fault::given("SEAMSTREAM_INJECT_KILL_SEGMENT")
                .is_some_and(|v| v == k.to_string());
            let spawned = std::thread::Builder::new()
                .name(format!("segment-{k}"))
                .spawn(move || {
                    seamstream::trace::set_label(Some(label));
                    if fails {
                        seamstream::fault::set_here("SEAMSTREAM_INJECT_FAIL_AFTER", "3");
                    }
                    go(seat)
                });
            match spawned {
                Ok(h) => Running::Thread(Some(h)),
                Err(e) => {
                    stop_all(&mut pool, &halt);
                    bail!("cannot start worker {k}: {e}");
                }
            }
        } else {
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
                    stop_all(&mut pool, &halt);
                    bail!("cannot start worker {k}: {e}");
                }
            };
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
            Running::Process(child)
        };
        pool.push(Worker {
            index: k,
            gpu,
            part,
            log,
            run,
            frames: count,
            ended: None,
        });
    }
    if let (Some(n), Some(counting)) = (gpus, counting) {
        let have = counting.join().unwrap_or(0);
        if have == 0 || n > have {
            stop_all(&mut pool, &halt);
            // Only the stopped workers' logs are in it: this job made it.
            let _ = std::fs::remove_dir_all(&parts_dir);
            return Err(too_many(Gpus::Count(n), have));
        }
    }
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
    while pool.iter().any(|w| w.ended.is_none()) {
        for w in pool.iter_mut() {
            w.poll();
        }
        // A worker that exits with an error before its first frame met
        // what every part of the job meets (the output, the device, the
        // chain against the input): the job stops there, and leaves
        // nothing, since every part would fail the same way.
        if let Some(w) = pool.iter().find(|w| {
            !stop.load(Ordering::Relaxed)
                && w.ended
                    .as_ref()
                    .is_some_and(|e| e.code.is_some_and(|c| c != 0))
                && w.frames.load(Ordering::Relaxed) == 0
        }) {
            let why = w
                .ended
                .as_ref()
                .and_then(|e| e.error.clone())
                .map(|e| e.trim_start_matches("error: ").to_string())
                .unwrap_or_else(|| {
                    format!(
                        "{} (its messages were in {})",
                        w.ended.as_ref().map_or("unknown", |e| e.how.as_str()),
                        w.log.display()
                    )
                });
            let index = w.index;
            bar.finish_and_clear();
            stop_all(&mut pool, &halt);
            let _ = std::fs::remove_dir_all(&parts_dir);
            bail!(
                "segment {index}/{workers} failed before its first frame, so the job was stopped (every segment would fail the same way); nothing was written:\n  {why}"
            );
        }
        bar.set_position(pool.iter().map(|w| w.frames.load(Ordering::Relaxed)).sum());
        if stop.load(Ordering::Relaxed) && !signalled {
            // A terminal's Ctrl-C has reached worker processes too; a
            // SIGTERM to the coordinator alone is passed on here.
            signal_all(&pool, &halt, libc::SIGINT);
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
        .filter(|w| !w.ended.as_ref().is_some_and(Ended::success))
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
            let ended = w.ended.as_ref();
            text.push_str(&format!(
                "\n  segment {}/{workers}{}: {}; its messages are in {}{}",
                w.index,
                w.gpu.map_or(String::new(), |g| format!(" (GPU {g})")),
                ended.map_or("unknown", |e| e.how.as_str()),
                w.log.display(),
                ended
                    .and_then(|e| e.error.as_ref())
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

/// Asks every worker still running to stop: a process by `signal`, the
/// threads by `halt`.
fn signal_all(pool: &[Worker], halt: &AtomicBool, signal: libc::c_int) {
    halt.store(true, Ordering::Relaxed);
    for w in pool.iter().filter(|w| w.ended.is_none()) {
        if let Running::Process(child) = &w.run {
            // SAFETY: kill(2) with the pid of a child we started and have
            // not reaped (its status is unknown), so the pid is still ours.
            unsafe {
                libc::kill(child.id() as libc::pid_t, signal);
            }
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

fn stop_all(pool: &mut [Worker], halt: &AtomicBool) {
    signal_all(pool, halt, libc::SIGINT);
    for w in pool.iter_mut() {
        w.wait();
    }
}

fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => "ended abnormally".into(),
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
