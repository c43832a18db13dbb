//! Splitting an offline job in time (for `run --segment K/N`, issue 15; not
//! yet a flag of `run`): which frames the K-th of N parts processes. The
//! parts are equal runs of frames, except that a boundary moves to a scene
//! cut lying within `snap` frames of it, as Av1an splits: a stateful
//! operation's memory resets at a cut anyway, so a part that starts there
//! needs no warm-up to match one run.
//!
//! Frames are counted in presentation order from 0; a cut at frame `c` means
//! that frame `c` starts a new shot. (The module is `split`, not `segment`,
//! beside the quad-tree `segment` operation.)

use std::ops::Range;

use crate::error::{Error, Result};

/// `--segment K/N`: the K-th (from 0) of N parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub index: u32,
    pub count: u32,
}

impl Segment {
    /// Parses `K/N`, 0 ≤ K < N.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = |reason: &str| Error::BadArgument {
            flag: "--segment",
            value: text.into(),
            reason: format!(
                "{reason}; write K/N for the K-th of N parts, K counting from 0, e.g. 0/4 … 3/4"
            ),
        };
        let (k, n) = text
            .trim()
            .split_once('/')
            .ok_or_else(|| bad("there is no `/`"))?;
        let number = |s: &str, what: &str| {
            s.trim()
                .parse::<u32>()
                .map_err(|_| bad(&format!("{what} `{}` is not a whole number", s.trim())))
        };
        let (index, count) = (number(k, "K")?, number(n, "N")?);
        if count == 0 {
            return Err(bad("N must be at least 1"));
        }
        if index >= count {
            return Err(bad(&format!(
                "K counts from 0, so it must be below N ({count})"
            )));
        }
        Ok(Segment { index, count })
    }

    /// This part's frames of a job planned by [`plan`].
    pub fn frames(self, plan: &[Range<u64>]) -> Range<u64> {
        plan[self.index as usize].clone()
    }
}

/// The frame ranges of `count` parts of `frames` frames: contiguous, in
/// order, none empty, covering every frame once. Boundaries start at
/// `round(i · frames / count)`; each moves to the scene cut in `cuts`
/// nearest to it within `snap` frames (the earlier of two equally near), as
/// long as the parts on both sides stay non-empty.
pub fn plan(frames: u64, count: u32, cuts: &[u64], snap: u64) -> Result<Vec<Range<u64>>> {
    plan_led(frames, count, cuts, snap, 0)
}

/// As [`plan`], for parts of which every one but the first also runs
/// `lead` frames before its own (a warm-up): the parts' work is what is
/// equal, so the first is longer by `lead` than the rest (`lead` at most half
/// an even part). On N GPUs at once, the last to finish sets the job's time.
pub fn plan_led(
    frames: u64,
    count: u32,
    cuts: &[u64],
    snap: u64,
    lead: u64,
) -> Result<Vec<Range<u64>>> {
    let bad = |reason: String| Error::BadArgument {
        flag: "--segment",
        value: format!("…/{count}"),
        reason,
    };
    if count == 0 {
        return Err(bad("N must be at least 1".into()));
    }
    if frames == 0 {
        return Err(bad(
            "the input has no whole video frame to split; is it a complete, playable video?".into(),
        ));
    }
    if u64::from(count) > frames {
        return Err(bad(format!(
            "the input has {frames} frames, too few for {count} parts; use at most {frames}"
        )));
    }
    let n = u64::from(count);
    let lead = lead.min(frames / n / 2);
    // Boundary i (1 ≤ i < n) where the work before it, (i − 1) leads
    // included, is i / n of the whole: (i · frames + (n − i) · lead) / n.
    let ideal = |i: u64| match i {
        0 => 0,
        i if i >= n => frames,
        i => (i * frames + (n - i) * lead + n / 2) / n,
    };
    let mut bounds = vec![0u64];
    for i in 1..n {
        let prev = *bounds.last().expect("starts with 0");
        let next_ideal = ideal(i + 1);
        let at = ideal(i);
        let best = cuts
            .iter()
            .copied()
            // Inside (prev, next ideal): both neighbouring parts keep a frame.
            .filter(|&c| c > prev && c < next_ideal && c.abs_diff(at) <= snap)
            .min_by_key(|&c| (c.abs_diff(at), c));
        bounds.push(best.unwrap_or(at).max(prev + 1));
    }
    bounds.push(frames);
    Ok(bounds.windows(2).map(|w| w[0]..w[1]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Contiguous from 0 to `frames`, none empty.
    fn check_cover(plan: &[Range<u64>], frames: u64) {
        assert_eq!(plan.first().unwrap().start, 0);
        assert_eq!(plan.last().unwrap().end, frames);
        for w in plan.windows(2) {
            assert_eq!(w[0].end, w[1].start, "{plan:?}");
        }
        assert!(plan.iter().all(|r| r.start < r.end), "{plan:?}");
    }

    #[test]
    fn parts_after_a_lead_are_shorter_by_it_so_the_work_is_even() {
        // 1000 frames in 4, every part but the first warming up on 40: each
        // part's work (its frames and its lead) is 280.
        let p = plan_led(1000, 4, &[], 0, 40).unwrap();
        check_cover(&p, 1000);
        assert_eq!(p, [0..280, 280..520, 520..760, 760..1000]);
        // No lead: the even split.
        assert_eq!(
            plan_led(300, 3, &[], 0, 0).unwrap(),
            plan(300, 3, &[], 0).unwrap()
        );
        // A lead longer than half a part is held to half of one.
        let p = plan_led(100, 2, &[], 0, 1000).unwrap();
        assert_eq!(p, [0..63, 63..100]);
        // A cut near the moved boundary still takes it.
        assert_eq!(plan_led(1000, 4, &[275], 10, 40).unwrap()[0], 0..275);
    }

    #[test]
    fn equal_parts_without_cuts() {
        for (frames, count) in [(300, 3), (301, 3), (10, 10), (7, 2), (1, 1), (1000, 7)] {
            let p = plan(frames, count, &[], 24).unwrap();
            assert_eq!(p.len(), count as usize);
            check_cover(&p, frames);
            let (lo, hi) = (
                p.iter().map(|r| r.end - r.start).min().unwrap(),
                p.iter().map(|r| r.end - r.start).max().unwrap(),
            );
            assert!(hi - lo <= 1, "{frames} in {count}: {p:?}");
        }
        assert_eq!(
            plan(300, 3, &[], 0).unwrap(),
            vec![0..100, 100..200, 200..300]
        );
    }

    #[test]
    fn a_boundary_moves_to_a_near_cut_only() {
        // Cuts at 90 (10 from 100) and 230 (30 from 200, beyond snap 24).
        let p = plan(300, 3, &[90, 230], 24).unwrap();
        assert_eq!(p, vec![0..90, 90..200, 200..300]);
        // The nearer of two cuts wins; equally near, the earlier.
        assert_eq!(plan(300, 3, &[95, 103], 24).unwrap()[0], 0..103);
        assert_eq!(plan(300, 3, &[97, 103], 24).unwrap()[0], 0..97);
        // A cut at frame 0, or at the end, is no boundary; one at the last
        // frame is (a part of one frame).
        assert_eq!(
            plan(300, 3, &[0, 300], 500).unwrap(),
            vec![0..100, 100..200, 200..300]
        );
        assert_eq!(
            plan(300, 3, &[299], 500).unwrap(),
            vec![0..100, 100..299, 299..300]
        );
    }

    #[test]
    fn snapping_never_empties_a_part() {
        // With a wide snap every boundary wants the one cut at 5; only the
        // first may take it, the others keep a frame each.
        let p = plan(30, 3, &[5], 1000).unwrap();
        check_cover(&p, 30);
        assert_eq!(p[0], 0..5);
        // One frame a part, cuts everywhere.
        let cuts: Vec<u64> = (0..10).collect();
        let p = plan(10, 10, &cuts, 1000).unwrap();
        check_cover(&p, 10);
        assert_eq!(p.len(), 10);
    }

    #[test]
    fn too_many_parts_is_an_error_naming_the_counts() {
        let e = plan(5, 6, &[], 0).unwrap_err().to_string();
        assert!(e.contains("5 frames") && e.contains("6 parts"), "{e}");
        assert!(plan(0, 1, &[], 0).is_err());
        assert!(plan(10, 0, &[], 0).is_err());
    }

    #[test]
    fn segment_parses_k_of_n() {
        assert_eq!(
            Segment::parse("2/4").unwrap(),
            Segment { index: 2, count: 4 }
        );
        assert_eq!(
            Segment::parse(" 0 / 1 ").unwrap(),
            Segment { index: 0, count: 1 }
        );
        for (text, says) in [
            ("4/4", "below N (4)"),
            ("1/0", "at least 1"),
            ("a/3", "`a` is not a whole number"),
            ("-1/3", "`-1` is not a whole number"),
            ("3", "no `/`"),
        ] {
            let e = Segment::parse(text).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("--segment"), "{text}: {e}");
        }
        let p = plan(300, 3, &[], 0).unwrap();
        assert_eq!(Segment::parse("1/3").unwrap().frames(&p), 100..200);
    }
}
