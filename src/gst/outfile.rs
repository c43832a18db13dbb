//! A file output that never destroys a file (ffmpeg users expect the
//! output to appear when it is done; nobody expects an input or a good old
//! output to vanish):
//!
//! - an output that is the input (by path, through links, or as the same
//!   file under another name) is refused;
//! - frames go to `NAME.partial.EXT` beside the target, which replaces the
//!   target only once it is complete; an existing target is not touched
//!   before that;
//! - a run that stops early keeps what it wrote: interrupted, the partial
//!   file becomes the target when there was none, and stays beside it when
//!   there was; failed or killed, it stays where it is, playable;
//! - the partial file is locked while it is written, so a second run
//!   writing the same target is refused instead of mixing two files.
//!
//! A target that is not a regular file (a FIFO, `/dev/null`) is written
//! directly.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use super::Container;
use crate::error::{Error, Result};

/// A file output being written.
#[derive(Debug)]
pub struct OutFile {
    /// The path the user named, links resolved.
    target: PathBuf,
    /// Where the frames are written.
    writing: PathBuf,
    /// The open partial file, holding its lock; `None` when writing the
    /// target directly.
    lock: Option<File>,
    /// Whether the target existed before the run.
    existed: bool,
}

/// How a run ended, for [`OutFile::close`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Every frame written and the file finalised.
    Complete,
    /// Stopped by the user; the frames so far are finalised.
    Interrupted,
    /// Failed after writing frames.
    Failed,
    /// Nothing was written.
    Empty,
}

/// Where a run's frames ended up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kept {
    /// In the target.
    Target(PathBuf),
    /// In a partial file beside it (the target untouched).
    Partial(PathBuf),
    /// Nowhere: nothing was written.
    Nothing,
}

impl OutFile {
    /// Prepares to write `target` (a `container` file), refusing when it is
    /// `input`, a folder, read-only, or being written by another run.
    pub fn open(target: &Path, container: Container, input: Option<&Path>) -> Result<Self> {
        let bad = |reason: String| Error::Write {
            path: target.to_path_buf(),
            reason,
        };
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dir.is_dir() {
            return Err(bad(format!(
                "the folder `{}` does not exist",
                dir.display()
            )));
        }
        if let Some(input) = input
            && same_file(input, target)
        {
            return Err(bad(format!(
                "that is the input (`{}`); writing it would destroy the input as it is read. \
                 Give another output name",
                input.display()
            )));
        }
        let meta = std::fs::metadata(target).ok();
        let existed = meta.is_some();
        if let Some(m) = &meta {
            if m.is_dir() {
                return Err(bad("that is a folder; give a file name".into()));
            }
            if !m.is_file() {
                // A FIFO, a device: written as it is, nothing to replace.
                OpenOptions::new()
                    .write(true)
                    .open(target)
                    .map_err(|e| bad(e.to_string()))?;
                return Ok(OutFile {
                    target: target.to_path_buf(),
                    writing: target.to_path_buf(),
                    lock: None,
                    existed,
                });
            }
            if m.permissions().readonly() {
                return Err(bad(
                    "the file is read-only; seamstream will not replace it".into()
                ));
            }
        }
        // Write beside the real file when the target is a link.
        let target = if existed {
            std::fs::canonicalize(target).map_err(|e| bad(e.to_string()))?
        } else {
            target.to_path_buf()
        };
        let (writing, lock) = claim_partial(&target, container)?;
        Ok(OutFile {
            target,
            writing,
            lock: Some(lock),
            existed,
        })
    }

    /// Where GStreamer writes the frames.
    pub fn location(&self) -> &Path {
        &self.writing
    }

    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Puts the frames where they belong now that the run has ended.
    pub fn close(self, ending: Ending) -> Result<Kept> {
        if self.lock.is_none() {
            return Ok(match ending {
                Ending::Empty => Kept::Nothing,
                _ => Kept::Target(self.target.clone()),
            });
        }
        let take_target = match ending {
            Ending::Complete => true,
            // The frames so far become the output, unless that would
            // replace a file that was there before the run.
            Ending::Interrupted => !self.existed && !self.target.exists(),
            Ending::Failed => false,
            Ending::Empty => {
                let _ = std::fs::remove_file(&self.writing);
                return Ok(Kept::Nothing);
            }
        };
        if !take_target {
            return Ok(Kept::Partial(self.writing.clone()));
        }
        std::fs::rename(&self.writing, &self.target).map_err(|e| Error::Write {
            path: self.target.clone(),
            reason: format!(
                "the output is complete in `{}` but could not be renamed: {e}",
                self.writing.display()
            ),
        })?;
        Ok(Kept::Target(self.target.clone()))
    }
}

/// `NAME.partial.EXT`, or `NAME.partial-N.EXT` for N ≥ 2.
fn partial_name(target: &Path, container: Container, n: usize) -> PathBuf {
    let stem = target
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = target
        .extension()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| container.extension().to_string());
    let name = if n == 1 {
        format!("{stem}.partial.{ext}")
    } else {
        format!("{stem}.partial-{n}.{ext}")
    };
    target.with_file_name(name)
}

/// Creates and locks the first free partial file of `target`. A partial
/// file that another process holds locked means a run is writing the same
/// target; one nobody holds is left from a killed run and is kept.
fn claim_partial(target: &Path, container: Container) -> Result<(PathBuf, File)> {
    let busy = |partial: &Path| Error::Write {
        path: target.to_path_buf(),
        reason: format!(
            "another seamstream run is writing this output now (into `{}`); wait for it, \
             or give another output name",
            partial.display()
        ),
    };
    for n in 1..1000 {
        let path = partial_name(target, container, n);
        if path.exists() {
            if is_locked(&path) {
                return Err(busy(&path));
            }
            continue;
        }
        let file = match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(Error::Write {
                    path: path.clone(),
                    reason: e.to_string(),
                });
            }
        };
        if file.try_lock().is_err() {
            continue;
        }
        // Two runs that started together may each have taken a name: both
        // see the other's lock now, and both give way.
        for m in (1..n).chain(n + 1..n + 4) {
            let other = partial_name(target, container, m);
            if other.exists() && is_locked(&other) {
                drop(file);
                let _ = std::fs::remove_file(&path);
                return Err(busy(&other));
            }
        }
        return Ok((path, file));
    }
    Err(Error::Write {
        path: target.to_path_buf(),
        reason: "a thousand partial files of it exist; remove the old ones".into(),
    })
}

/// Whether another process holds `path` locked.
fn is_locked(path: &Path) -> bool {
    File::open(path).is_ok_and(|f| matches!(f.try_lock_shared(), Err(TryLockError::WouldBlock)))
}

/// Whether `a` and `b` name the same file: the same path once links are
/// resolved, or the same inode (a hard link).
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let resolve = |p: &Path| -> Option<PathBuf> {
        std::fs::canonicalize(p).ok().or_else(|| {
            let dir = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            Some(std::fs::canonicalize(dir).ok()?.join(p.file_name()?))
        })
    };
    if let (Some(x), Some(y)) = (resolve(a), resolve(b))
        && x == y
    {
        return true;
    }
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("seamstream-outfile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_input_is_recognised_under_every_name() {
        let d = dir("same");
        let a = d.join("a.mp4");
        std::fs::write(&a, b"video").unwrap();
        std::os::unix::fs::symlink(&a, d.join("link.mp4")).unwrap();
        std::fs::hard_link(&a, d.join("hard.mp4")).unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        for other in ["a.mp4", "link.mp4", "hard.mp4", "sub/../a.mp4"] {
            assert!(same_file(&a, &d.join(other)), "{other}");
            let e = OutFile::open(&d.join(other), Container::Mp4, Some(&a)).unwrap_err();
            assert!(e.to_string().contains("input"), "{other}: {e}");
        }
        assert!(!same_file(&a, &d.join("b.mp4")));
        assert_eq!(std::fs::read(&a).unwrap(), b"video");
    }

    #[test]
    fn an_existing_output_is_untouched_until_the_new_one_is_complete() {
        let d = dir("keep");
        let target = d.join("keep.mp4");
        std::fs::write(&target, b"old").unwrap();
        for ending in [Ending::Empty, Ending::Failed, Ending::Interrupted] {
            let out = OutFile::open(&target, Container::Mp4, None).unwrap();
            assert_ne!(out.location(), target.as_path());
            std::fs::write(out.location(), b"new").unwrap();
            let kept = out.close(ending).unwrap();
            assert_eq!(std::fs::read(&target).unwrap(), b"old", "{ending:?}");
            match kept {
                Kept::Partial(p) => {
                    assert_eq!(std::fs::read(&p).unwrap(), b"new");
                    std::fs::remove_file(p).unwrap();
                }
                Kept::Nothing => assert_eq!(ending, Ending::Empty),
                Kept::Target(_) => panic!("{ending:?} replaced the old output"),
            }
        }
        let out = OutFile::open(&target, Container::Mp4, None).unwrap();
        std::fs::write(out.location(), b"new").unwrap();
        assert_eq!(
            out.close(Ending::Complete).unwrap(),
            Kept::Target(target.clone())
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
    }

    #[test]
    fn an_interrupted_first_run_gives_the_target_and_a_second_writer_is_refused() {
        let d = dir("busy");
        let target = d.join("o.mkv");
        let first = OutFile::open(&target, Container::Mkv, None).unwrap();
        let e = OutFile::open(&target, Container::Mkv, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("another seamstream run"), "{e}");
        std::fs::write(first.location(), b"frames").unwrap();
        assert_eq!(
            first.close(Ending::Interrupted).unwrap(),
            Kept::Target(target.clone())
        );
        // A partial file left by a killed run is kept, and a new run writes beside it.
        let stale = partial_name(&target, Container::Mkv, 1);
        std::fs::write(&stale, b"killed").unwrap();
        let next = OutFile::open(&target, Container::Mkv, None).unwrap();
        assert_eq!(next.location(), partial_name(&target, Container::Mkv, 2));
        next.close(Ending::Empty).unwrap();
        assert_eq!(std::fs::read(&stale).unwrap(), b"killed");
    }
}
