//! What a run is asked for, typed, whichever interface asks: the command
//! line (`run_cli.rs`) and a pipeline file ([`crate::pipeline`]) each make
//! a [`RunRequest`]; the command line's is laid over the file's
//! ([`RunRequest::over`]), and the defaults are filled in one place
//! ([`RunRequest::input`], [`RunRequest::test_settings`], …). The elements
//! ask for the chain and the device alone (`plugin::base::Settings`).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::device::Device;
use crate::error::Result;
use crate::gst::encode::EncoderChoice;
use crate::gst::reframe::Planned;
use crate::gst::run::report::{Kernels, summary_json};
use crate::gst::run::{Backend, OnProgress, RunOptions, Summary};
use crate::gst::{Input, Output, TestSettings, sample};
use crate::ops::Chain;

/// A run as asked for: every part optional, so that one source can be laid
/// over another.
#[derive(Debug, Default)]
pub struct RunRequest {
    pub input: Option<Input>,
    /// Taken instead of `input` where that is a camera this machine does
    /// not have (a pipeline file's `fallback`); it then runs live.
    pub fallback: Option<Input>,
    pub output: Option<Output>,
    pub device: Option<Device>,
    /// Test sources' size, rate, length (0: until stopped) and liveness.
    pub size: Option<(usize, usize)>,
    pub fps: Option<(i32, i32)>,
    pub frames: Option<u64>,
    pub live: Option<bool>,
    pub chain: Option<Chain>,
    pub encoder: EncoderChoice,
    /// `false`: drop the input's audio.
    pub audio: Option<bool>,
}

/// The input a request resolves to, and whether it came from the fallback
/// (which runs live); `note` says so, for the user.
#[derive(Debug)]
pub struct ChosenInput {
    pub input: Input,
    pub fallback: bool,
    pub note: Option<String>,
}

impl RunRequest {
    /// `self`, with what it leaves open taken from `under`: the command
    /// line over a pipeline file. `live` is asked for by either.
    pub fn over(self, under: RunRequest) -> RunRequest {
        RunRequest {
            // A fallback goes with the input it stands in for: the file's
            // does not stand in for an input the command line names.
            fallback: match self.input {
                Some(_) => self.fallback,
                None => under.fallback,
            },
            input: self.input.or(under.input),
            output: self.output.or(under.output),
            device: self.device.or(under.device),
            size: self.size.or(under.size),
            fps: self.fps.or(under.fps),
            frames: self.frames.or(under.frames),
            live: match (self.live, under.live) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (a, b) => a.or(b),
            },
            chain: self.chain.or(under.chain),
            encoder: EncoderChoice {
                codec: self.encoder.codec.or(under.encoder.codec),
                crf: self.encoder.crf.or(under.encoder.crf),
                bitrate: self.encoder.bitrate.or(under.encoder.bitrate),
                preset: self.encoder.preset.or(under.encoder.preset),
            },
            audio: self.audio.or(under.audio),
        }
    }

    /// The input: the one asked for, its fallback where that one is a
    /// camera this machine does not have, else the sample clip.
    pub fn input(&self) -> Result<ChosenInput> {
        let Some(input) = self.input.clone() else {
            return Ok(ChosenInput {
                input: Input::Sample,
                fallback: false,
                note: None,
            });
        };
        match (&self.fallback, input.check_available()) {
            (Some(fallback), Err(_)) => Ok(ChosenInput {
                note: Some(format!(
                    "{input} does not exist here; using the live test source {fallback} instead"
                )),
                input: fallback.clone(),
                fallback: true,
            }),
            _ => Ok(ChosenInput {
                input,
                fallback: false,
                note: None,
            }),
        }
    }

    /// Test sources' settings, for `input`: what was asked, else the
    /// sample's own size and length for the sample, else
    /// [`TestSettings::default`]'s.
    pub fn test_settings(&self, input: &Input, live: bool) -> TestSettings {
        let mut test = TestSettings::default();
        if *input == Input::Sample {
            (test.width, test.height) = sample::DEFAULT_SIZE;
            test.frames = Some(sample::DEFAULT_FRAMES);
        }
        if let Some((w, h)) = self.size {
            (test.width, test.height) = (w, h);
        }
        if let Some(fps) = self.fps {
            test.fps = fps;
        }
        if let Some(n) = self.frames {
            test.frames = (n > 0).then_some(n);
        }
        test.live = live;
        test
    }

    /// Whether the run is live: asked for, or the fallback's.
    pub fn live(&self, chosen: &ChosenInput) -> bool {
        self.live == Some(true) || chosen.fallback
    }

    /// Keep the input's audio, unless told not to.
    pub fn audio(&self) -> bool {
        self.audio.unwrap_or(true)
    }

    /// The output, or `out.mp4`.
    pub fn output(&self) -> Result<Output> {
        self.output
            .clone()
            .map_or_else(|| Output::parse("out.mp4"), Ok)
    }
}

/// What a run gave: its summary, the kernels' preparation on a GPU, and
/// the reframe's plan.
pub struct Ran {
    pub summary: Summary,
    pub kernels: Option<Kernels>,
    pub reframe: Option<Planned>,
}

impl Ran {
    /// The summary as `run --json` prints it.
    pub fn json(&self) -> String {
        summary_json(&self.summary, self.kernels.as_ref(), self.reframe.as_ref())
    }
}

impl RunRequest {
    /// Runs what is asked, as `seamstream run` does without its command
    /// line's own parts (notes, bars, a split job's part): the input
    /// chosen, the chain's kernels prepared on its GPU, a file's reframe
    /// planned ahead, then the run. `stop` finishes it early, the output
    /// kept playable; `on_progress` is told the frames as they go.
    pub fn run(mut self, stop: Arc<AtomicBool>, on_progress: Option<OnProgress>) -> Result<Ran> {
        let chosen = self.input()?;
        let live = self.live(&chosen);
        let input = chosen.input;
        input.check_available()?;
        let test = self.test_settings(&input, live);
        let mut chain = self.chain.take().unwrap_or_default();
        let output = self.output()?;
        output.check_display()?;
        let backend = match crate::cuda::place(self.device.unwrap_or_default(), None)? {
            crate::cuda::Placed::Gpu(gpu) => Backend::Cuda(gpu),
            crate::cuda::Placed::Cpu { .. } => Backend::Cpu,
        };
        let kernels = Kernels::prepare(&backend, &chain);
        let reframe =
            crate::gst::reframe::prepare(&mut chain, &input, None, live, self.frames, |_| {})?;
        let opts = RunOptions {
            input,
            output,
            test,
            queue: 2,
            backend,
            slots: 3,
            encoder: self.encoder.clone(),
            audio: self.audio(),
            span: None,
            on_progress,
            frames: self.frames,
        };
        let summary = crate::gst::run::run(&opts, chain, stop)?;
        Ok(Ran {
            summary,
            kernels,
            reframe,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_laid_over_the_file_and_the_defaults_fill_the_rest() {
        let file = RunRequest {
            size: Some((640, 360)),
            fps: Some((25, 1)),
            frames: Some(50),
            device: Some(Device::Cpu),
            audio: Some(false),
            encoder: EncoderChoice {
                crf: Some(30),
                preset: Some("slow".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let cli = RunRequest {
            fps: Some((60, 1)),
            device: Some(Device::Cuda(1)),
            encoder: EncoderChoice {
                crf: Some(18),
                ..Default::default()
            },
            ..Default::default()
        };
        let r = cli.over(file);
        assert_eq!(r.device, Some(Device::Cuda(1)));
        assert_eq!(r.encoder.crf, Some(18));
        assert_eq!(r.encoder.preset.as_deref(), Some("slow"));
        assert!(!r.audio());
        let chosen = r.input().unwrap();
        assert_eq!(chosen.input, Input::Sample);
        let t = r.test_settings(&chosen.input, false);
        assert_eq!(
            (t.width, t.height, t.fps, t.frames),
            (640, 360, (60, 1), Some(50))
        );
        // Nothing asked: the sample's own size and length, 30 fps.
        let t = RunRequest::default().test_settings(&Input::Sample, false);
        assert_eq!((t.width, t.height), sample::DEFAULT_SIZE);
        assert_eq!((t.fps, t.frames), ((30, 1), Some(sample::DEFAULT_FRAMES)));
        // A test pattern: TestSettings' defaults; frames=0 runs until stopped.
        let pattern = Input::parse("test:ball").unwrap();
        let r = RunRequest {
            frames: Some(0),
            ..Default::default()
        };
        let t = r.test_settings(&pattern, true);
        assert_eq!(
            (t.width, t.height, t.frames, t.live),
            (1280, 720, None, true)
        );
    }

    #[test]
    fn a_files_fallback_does_not_stand_in_for_the_command_lines_input() {
        let file = || RunRequest {
            input: Some(Input::parse("camera:/dev/video-seamstream-none").unwrap()),
            fallback: Some(Input::parse("test:ball").unwrap()),
            ..Default::default()
        };
        let chosen = RunRequest::default().over(file()).input().unwrap();
        assert!(chosen.fallback && chosen.input == Input::parse("test:ball").unwrap());
        let cli = RunRequest {
            input: Some(Input::parse("camera:/dev/video-seamstream-none").unwrap()),
            ..Default::default()
        };
        let r = cli.over(file());
        assert_eq!(r.fallback, None);
        assert!(!r.input().unwrap().fallback);
    }

    #[test]
    fn live_is_asked_for_by_either_side() {
        let live = || RunRequest {
            live: Some(true),
            ..Default::default()
        };
        assert_eq!(RunRequest::default().over(live()).live, Some(true));
        assert_eq!(live().over(RunRequest::default()).live, Some(true));
        assert_eq!(RunRequest::default().over(RunRequest::default()).live, None);
    }
}
