//! Tests of the GPU's seam DP: a model of the sweep's schedule (windows,
//! bands, jumps, 32-bit sums) on the CPU against the row-by-row DP and the
//! CPU's, the energies' bounds for 32-bit sums, and, with a GPU,
//! `SeamDp::dp` against the row-by-row DP. The profiler (profile.rs) shares
//! its inputs.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream};

use super::dp::{ANCHOR_ROWS, DpScratch, MAX_SIDE, OUT32, SeamDp, Shape, row_cost_bound};
use crate::frame::Plane;
use seamstream_core::ops::retarget::dp::{DpInput, DpScratch as CpuDp, dp_sweep};
use seamstream_core::ops::retarget::{
    Energy, MASK_PROTECT, MASK_REMOVE, OUTSIDE, PROTECT_COST, REMOVE_BONUS,
};

/// A plane's inputs to the DP (energy zero for forward).
pub(super) struct Input {
    w: usize,
    h: usize,
    forward: bool,
    energy: Plane<u32>,
    mask: Option<Plane<i8>>,
    pub(super) luma: Plane<u8>,
}

/// What the DP gives: steps ((h − 1)·w), jumps (⌈(h−1)/32⌉·w), the
/// top row's sums, the seam and its cost.
#[derive(Debug, PartialEq)]
pub(super) struct Dp {
    back: Vec<i8>,
    anchors: Vec<u16>,
    top: Vec<i64>,
    pub(super) seam: Vec<usize>,
    total: i64,
}

fn rng(seed: u64) -> impl FnMut() -> u32 {
    let mut n = seamstream_core::noise::Noise::new(seed);
    move || (n.next_u64() >> 32) as u32
}

/// Values below `levels` (few levels: many ties); `mask`: none, all
/// zero, or random codes (a fifth protected, a fifth to remove).
/// Energies of `levels` 0 (1) fall to the right (left), so that every
/// path drifts a column a row, as far as a band lets it.
pub(super) fn input(w: usize, h: usize, forward: bool, levels: u32, mask: u8, seed: u64) -> Input {
    let mut r = rng(seed);
    let luma = Plane::from_fn(w, h, |_, _| (r() % levels.clamp(2, 256)) as u8);
    let energy = Plane::from_fn(w, h, |x, _| match (forward, levels) {
        (true, _) => 0,
        (false, 0) => 7 * (w - x) as u32,
        (false, 1) => 7 * x as u32,
        _ => r() % levels,
    });
    let mask = match mask {
        0 => None,
        1 => Some(Plane::from_fn(w, h, |_, _| 0i8)),
        _ => Some(Plane::from_fn(w, h, |_, _| match r() % 5 {
            0 => MASK_PROTECT,
            1 => MASK_REMOVE,
            _ => 0,
        })),
    };
    Input {
        w,
        h,
        forward,
        energy,
        mask,
        luma,
    }
}

/// dp_prep's packed word of every pixel (row-major, w a row).
fn words(i: &Input) -> Vec<u32> {
    let (w, h) = (i.w, i.h);
    let mut out = Vec::with_capacity(w * h);
    for y in 0..h {
        for x in 0..w {
            let m = match i.mask.as_ref().map_or(0, |m| m.get(x, y)) {
                MASK_PROTECT => 1 << 30,
                MASK_REMOVE => 2 << 30,
                _ => 0,
            };
            let v = if i.forward {
                let l = i.luma.get(x.saturating_sub(1), y) as i32;
                let r = i.luma.get((x + 1).min(w - 1), y) as i32;
                let up = (r - l).unsigned_abs();
                let (mut ul, mut ur) = (up, up);
                if y + 1 < h {
                    let d = i.luma.get(x, y + 1) as i32;
                    ul += (d - l).unsigned_abs();
                    ur += (d - r).unsigned_abs();
                }
                up | ul << 10 | ur << 20
            } else {
                i.energy.get(x, y)
            };
            out.push(m | v);
        }
    }
    out
}

/// dp_unpack: (pixel cost, centre, left and right steps).
fn unpack(word: u32, forward: bool) -> (i64, i64, i64, i64) {
    let field = |k: u32| ((word >> (10 * k)) & 0x3FF) as i64;
    let (pc, up, ul, ur) = if forward {
        (0, field(0), field(1), field(2))
    } else {
        ((word & 0x3FFF_FFFF) as i64, 0, 0, 0)
    };
    let m = match word >> 30 {
        1 => PROTECT_COST,
        2 => -REMOVE_BONUS,
        _ => 0,
    };
    (pc + m, up, ul, ur)
}

/// The least of `top`, ties to the smallest column.
fn argmin(top: &[i64]) -> (usize, i64) {
    top.iter().enumerate().fold(
        (0, i64::MAX),
        |(bx, bv), (x, &v)| if v < bv { (x, v) } else { (bx, bv) },
    )
}

/// Row after row over whole rows, as the CPU's min3_row; the jumps by
/// walking the steps.
pub(super) fn reference(i: &Input) -> Dp {
    let (w, h) = (i.w, i.h);
    let words = words(i);
    let mut below = vec![OUTSIDE; w + 2];
    for x in 0..w {
        let (pc, up, _, _) = unpack(words[(h - 1) * w + x], i.forward);
        below[x + 1] = pc + up;
    }
    let mut back = vec![0i8; (h - 1) * w];
    for y in (0..h - 1).rev() {
        let mut here = vec![OUTSIDE; w + 2];
        for x in 0..w {
            let (pc, up, ul, ur) = unpack(words[y * w + x], i.forward);
            let (c, l, r) = (below[x + 1] + up, below[x] + ul, below[x + 2] + ur);
            let take_l = l < c;
            let best = if take_l { l } else { c };
            let take_r = r < best;
            here[x + 1] = if take_r { r } else { best } + pc;
            back[y * w + x] = if take_r { 1 } else { -(take_l as i8) };
        }
        below = here;
    }
    let top = below[1..=w].to_vec();
    let chunks = (h - 1).div_ceil(ANCHOR_ROWS);
    let mut anchors = vec![0u16; chunks * w];
    for c in 0..chunks {
        for x0 in 0..w {
            let mut x = x0;
            for y in c * ANCHOR_ROWS..((c + 1) * ANCHOR_ROWS).min(h - 1) {
                x = (x as isize + back[y * w + x] as isize) as usize;
            }
            anchors[c * w + x0] = x as u16;
        }
    }
    let (mut x, total) = argmin(&top);
    let mut seam = vec![x];
    for y in 0..h - 1 {
        x = (x as isize + back[y * w + x] as isize) as usize;
        seam.push(x);
    }
    Dp {
        back,
        anchors,
        top,
        seam,
        total,
    }
}

/// The sweep's schedule (dp_sweep in kernels/retarget.cu) on the CPU:
/// windows of 128 columns owning 64, bands of 32 rows, "outside" at a
/// window's edges and beyond the frame, jumps restarting each band,
/// only owned columns crossing a band, 32-bit sums when `narrow`, and
/// the tail's walk. Words beyond the frame are junk, as on the device.
fn model(i: &Input, narrow: bool, shape: Shape) -> Dp {
    let (own, halo, lc) = (shape.own(), shape.halo(), shape.lc);
    // The columns a window computes.
    let win = own + 2 * halo;
    let (w, h) = (i.w, i.h);
    let words = words(i);
    let mut junk = rng(99);
    let word = |x: isize, y: usize, junk: &mut dyn FnMut() -> u32| {
        if (0..w as isize).contains(&x) {
            let v = words[y * w + x as usize];
            // The 32-bit sweep reads no mask (the host gives it none).
            if narrow { v & 0x3FFF_FFFF } else { v }
        } else {
            junk() & if narrow { 0x3FFF_FFFF } else { !0 }
        }
    };
    let out = if narrow { OUT32 } else { OUTSIDE };
    let windows = w.div_ceil(own);
    let chunks = (h - 1).div_ceil(ANCHOR_ROWS);
    let bands = (h - 1).div_ceil(shape.band());
    const UNSET: i64 = i64::MIN;
    let (mut xin, mut xout) = (vec![UNSET; w], vec![UNSET; w]);
    let mut jumps: Vec<Option<isize>> = vec![None; w];
    let mut back = vec![None; (h - 1) * w];
    let mut anchors = vec![None; chunks * w];
    let owned = move |g: usize| (g * own..(g + 1) * own).filter(move |&x| x < w);
    for g in 0..windows {
        for x in owned(g) {
            let (pc, up, _, _) = unpack(word(x as isize, h - 1, &mut junk), i.forward);
            xin[x] = pc + up;
        }
    }
    for c in (0..bands).rev() {
        let (y0, y1) = (shape.band() * c, (shape.band() * (c + 1)).min(h - 1));
        // The band's jumps restart at an anchor row, else carry on
        // from the band below's; its top row's are anchors at an
        // anchor row, else cross the barrier (never both: one buffer).
        let restart = y1 % ANCHOR_ROWS == 0 || y1 == h - 1;
        let anchored = y0 % ANCHOR_ROWS == 0;
        assert!(restart || anchored, "a band reads and writes the jumps");
        for g in 0..windows {
            let x0 = (g * own) as isize - halo as isize;
            let col = |k: usize| x0 + k as isize;
            let inside = |k: usize| (0..w as isize).contains(&col(k));
            let mut b: Vec<i64> = (0..win)
                .map(|k| {
                    if inside(k) {
                        assert_ne!(xin[col(k) as usize], UNSET, "read before written");
                        xin[col(k) as usize]
                    } else {
                        out
                    }
                })
                .collect();
            let mut jm: Vec<isize> = (0..win)
                .map(|k| {
                    if !restart && inside(k) {
                        jumps[col(k) as usize].expect("a jump read before written")
                    } else {
                        0
                    }
                })
                .collect();
            for k in 0..y1 - y0 {
                let y = y1 - 1 - k;
                let (mut nb, mut nj) = (vec![0i64; win], vec![0isize; win]);
                for q in 0..win {
                    let (pc, up, ul, ur) = unpack(word(col(q), y, &mut junk), i.forward);
                    // The shuffles do not wrap: lane 0 (31) reads its
                    // own last (first) column as its left (right).
                    let left = if q == 0 { b[lc - 1] } else { b[q - 1] };
                    let right = if q == win - 1 { b[win - lc] } else { b[q + 1] };
                    let (cc, l, r) = (b[q] + up, left + ul, right + ur);
                    let take_l = l < cc;
                    let best = if take_l { l } else { cc };
                    let take_r = r < best;
                    let best = if take_r { r } else { best };
                    nb[q] = if inside(q) { best + pc } else { out };
                    if narrow {
                        assert!(i32::try_from(nb[q]).is_ok(), "a 32-bit sum overflows");
                    }
                    let step = if take_r { 1 } else { -(take_l as isize) };
                    let jl = if q == 0 { jm[lc - 1] } else { jm[q - 1] };
                    let jr = if q == win - 1 {
                        jm[win - lc]
                    } else {
                        jm[q + 1]
                    };
                    nj[q] = match (k == 0 && restart, step) {
                        (true, _) => col(q) + step,
                        (_, 1) => jr,
                        (_, -1) => jl,
                        _ => jm[q],
                    };
                    if (halo..halo + own).contains(&q) && inside(q) {
                        let cell = &mut back[y * w + col(q) as usize];
                        assert!(cell.is_none(), "a step written twice");
                        *cell = Some(step as i8);
                    }
                }
                (b, jm) = (nb, nj);
            }
            for x in owned(g) {
                let q = (x as isize - x0) as usize;
                xout[x] = b[q];
                if anchored {
                    anchors[y0 / ANCHOR_ROWS * w + x] = Some(jm[q] as u16);
                } else {
                    jumps[x] = Some(jm[q]);
                }
            }
        }
        std::mem::swap(&mut xin, &mut xout);
    }
    let top = xin;
    let (col, total) = argmin(&top);
    let back: Vec<i8> = back
        .into_iter()
        .map(|s| s.expect("a step not written"))
        .collect();
    let anchors: Vec<u16> = anchors
        .into_iter()
        .map(|a| a.expect("a jump not written"))
        .collect();
    let mut seam = vec![0; h];
    seam[0] = col;
    let mut x = col;
    for c in 0..chunks {
        let mut s = x;
        for y in c * ANCHOR_ROWS..((c + 1) * ANCHOR_ROWS).min(h - 1) {
            s = (s as isize + back[y * w + s] as isize) as usize;
            seam[y + 1] = s;
        }
        x = anchors[c * w + x] as usize;
        assert_eq!(x, s, "a jump disagrees with the steps");
    }
    Dp {
        back,
        anchors,
        top,
        seam,
        total,
    }
}

/// The CPU's own DP on the same input: its top row and its seam.
fn cpu(i: &Input) -> (Vec<i64>, Vec<usize>) {
    let energy = if i.forward {
        Plane::from_fn(i.w, i.h, |_, _| 0u32)
    } else {
        i.energy.clone()
    };
    let input = DpInput {
        energy: &energy,
        mask: i.mask.as_ref(),
        forward_luma: i.forward.then_some(&i.luma),
    };
    let mut s = CpuDp::default();
    dp_sweep(&input, &mut s);
    let top = s.top().to_vec();
    let mut seam = Vec::new();
    s.trace(argmin(&top).0, i.h, |_, x| seam.push(x));
    (top, seam)
}

const SHAPES: &[(usize, usize)] = &[
    (1, 1),
    (1, 40),
    (40, 1),
    (2, 2),
    (3, 33),
    (31, 34),
    (64, 65),
    (65, 66),
    (97, 31),
    (128, 97),
    (129, 64),
    (200, 100),
    (257, 45),
];

/// Exact: the sweep's windows, bands and jumps give every step, jump,
/// top-row sum and seam of the plain row-by-row DP, whose top row and
/// seam are the CPU's; with 32- and 64-bit sums alike.
#[test]
fn the_sweeps_schedule_reproduces_the_row_by_row_dp() {
    for (n, &(w, h)) in SHAPES.iter().enumerate() {
        for forward in [true, false] {
            for (levels, mask) in [
                (3, 0),
                (256, 0),
                (4, 1),
                (3, 2),
                (200, 2),
                (0, 0),
                (1, 0),
                (1, 1),
            ] {
                let i = input(w, h, forward, levels, mask, 7 * n as u64 + levels as u64);
                let what = format!("{w}x{h} forward={forward} levels={levels} mask={mask}");
                let want = reference(&i);
                let (top, seam) = cpu(&i);
                assert_eq!((&want.top, &want.seam), (&top, &seam), "reference, {what}");
                for shape in [Shape::WIDE, Shape::NARROW] {
                    assert_eq!(model(&i, false, shape), want, "64-bit {shape:?}, {what}");
                    if mask == 0 {
                        assert_eq!(model(&i, true, shape), want, "32-bit {shape:?}, {what}");
                    }
                }
            }
        }
    }
}

/// Exact: the energy-only DP is the CPU's `vertical_seam`.
#[test]
fn the_sweeps_schedule_finds_the_cpus_vertical_seam() {
    for (n, &(w, h)) in SHAPES.iter().enumerate() {
        for levels in [0, 1, 5] {
            let i = input(w, h, false, levels, 0, n as u64);
            let (seam, total) = seamstream_core::ops::retarget::vertical_seam(&i.energy);
            for shape in [Shape::WIDE, Shape::NARROW] {
                let got = model(&i, true, shape);
                assert_eq!((&got.seam, got.total), (&seam, total), "{w}x{h} {shape:?}");
            }
        }
    }
}

/// The bounds that allow 32-bit sums hold for every energy's largest
/// value (and the packed word's 24 bits).
#[test]
fn energies_stay_below_their_row_bound() {
    use seamstream_core::ops::retarget::energy_map;
    // Patterns of 0 and 255 that maximise each gradient: lone dots
    // (basic), an edge and a diagonal edge (Sobel), a checkerboard.
    let pattern = |f: fn(usize, usize) -> bool| {
        Plane::from_fn(12, 12, move |x, y| if f(x, y) { 255u8 } else { 0 })
    };
    let planes = [
        pattern(|x, y| x % 2 == 0 && y % 2 == 0),
        pattern(|x, _| x < 6),
        pattern(|x, y| x + y < 12),
        pattern(|x, y| (x + y) % 2 == 0),
    ];
    for e in [Energy::Basic, Energy::Sobel3, Energy::Sobel5] {
        for l in &planes {
            let most = energy_map(l, e).as_slice().iter().copied().max().unwrap();
            assert!((most as i64) < row_cost_bound(e), "{e:?}: {most}");
        }
    }
    assert!(row_cost_bound(Energy::Sobel5) < 1 << 24);
    assert!(255 + 255 < row_cost_bound(Energy::Forward));
}

/// A plane at row pitch `pitch` on the device.
pub(super) fn upload<
    T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits + Copy + Default,
>(
    st: &Arc<CudaStream>,
    p: &Plane<T>,
    pitch: usize,
) -> CudaSlice<T> {
    let mut host = vec![T::default(); pitch * p.height()];
    for y in 0..p.height() {
        host[y * pitch..y * pitch + p.width()].copy_from_slice(p.row(y));
    }
    let mut d = st.alloc_zeros::<T>(host.len()).unwrap();
    st.memcpy_htod(&host, &mut d).unwrap();
    d
}

/// Exact, on the GPU (skipped without one): `SeamDp::dp` writes every
/// step, jump and top-row sum and the seam and cost of the row-by-row
/// DP, in clusters of either window shape and in one block, with 32-
/// and 64-bit sums, from one window to the widest plane and at pitches
/// of every alignment.
#[test]
fn the_gpu_dp_writes_what_the_cpu_dp_finds() {
    let Some(gpu) = crate::testing::gpu("the GPU DP test") else {
        return;
    };
    let st = gpu.stream().clone();
    let shapes: &[(usize, usize)] = &[
        (1, 1),
        (1, 40),
        (40, 1),
        (2, 2),
        (5, 33),
        (65, 34),
        (130, 65),
        (513, 40),
        (1300, 70),
        (4200, 35),
        // The four-row sweep's widest plane: 1024 threads a block.
        (7680, 37),
        (MAX_SIDE, 3),
        (3, 2000),
        (700, 1100),
    ];
    for energy in [Energy::Forward, Energy::Basic] {
        let forward = energy == Energy::Forward;
        for (clusters, narrow, coarse) in [
            (true, true, true),
            (true, true, false),
            (true, false, false),
            (false, false, false),
        ] {
            let dp = SeamDp::load_with(&gpu, energy, clusters, narrow, coarse).unwrap();
            for (n, &(w, h)) in shapes.iter().enumerate() {
                for (levels, mask) in [(3, 0), (256, 0), (256, 1), (3, 2), (0, 0), (1, 1)] {
                    let i = input(w, h, forward, levels, mask, n as u64 * 5 + mask as u64);
                    let what = format!(
                        "{w}x{h} {energy:?} clusters={clusters} narrow={narrow} coarse={coarse} levels={levels} mask={mask}"
                    );
                    let pitch = w + n % 4;
                    let mut scratch = DpScratch::new(&st, &[(pitch, h)], 2).unwrap();
                    let e = upload(&st, &i.energy, pitch);
                    let m = i.mask.as_ref().map(|m| {
                        upload(&st, &Plane::from_fn(w, h, |x, y| m.get(x, y) as u8), pitch)
                    });
                    let l = upload(&st, &i.luma, pitch);
                    let mut seam = st.alloc_zeros::<u32>(h).unwrap();
                    let mut top = st.alloc_zeros::<i64>(w).unwrap();
                    let planes = ((!forward).then_some(&e), m.as_ref(), &l);
                    dp.dp(
                        &st,
                        planes,
                        (w, h, pitch),
                        &mut scratch,
                        &mut seam,
                        1,
                        Some(&mut top),
                    )
                    .unwrap();
                    let back = st.clone_dtoh(&scratch.back).unwrap();
                    let anchors = st.clone_dtoh(&scratch.anchors).unwrap();
                    let chunks = (h - 1).div_ceil(ANCHOR_ROWS);
                    let got = Dp {
                        back: (0..(h - 1) * w)
                            .map(|k| back[k / w * pitch + k % w])
                            .collect(),
                        anchors: (0..chunks * w)
                            .map(|k| anchors[k / w * pitch + k % w])
                            .collect(),
                        top: st.clone_dtoh(&top).unwrap(),
                        seam: st
                            .clone_dtoh(&seam)
                            .unwrap()
                            .iter()
                            .map(|&x| x as usize)
                            .collect(),
                        total: st.clone_dtoh(&scratch.costs).unwrap()[1],
                    };
                    assert_eq!(got, reference(&i), "{what}");
                }
            }
        }
    }
}
