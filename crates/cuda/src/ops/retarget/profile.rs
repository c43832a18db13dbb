//! Test-only: the seam DP's profiler, run by hand on a GPU
//! (`profile_the_dp_on_the_gpu --ignored --nocapture`): the DP's times,
//! and the record of the profiled sweeps (the `*_profile` kernels of
//! kernels/retarget.cu) of where their time goes.

use cudarc::driver::{CudaSlice, PushKernelArg, sys};

use super::dp::{
    ANCHOR_ROWS, DP_CLUSTER, DP_MAX_WARPS_CLUSTER, DpScratch, MAX_SIDE, SeamDp, Shape, cost_pitch,
    sweep_config,
};
use super::tests::{input, reference, upload};
use super::{PushOptional, launch};

/// The profiled sweeps' file (tests only).
const FILE: &str = "retarget_dp_profile.cu";
use crate::Gpu;
use seamstream_core::ops::retarget::{Energy, OUTSIDE, PROTECT_COST, REMOVE_BONUS};

/// Words of one block's record in the profiled sweeps (DP_PROF_* of
/// kernels/retarget.cu).
const PROF_HEADER: usize = 16;
const PROF_BAND: usize = 8;
const PROF_SLOT: usize = PROF_HEADER + PROF_BAND * (MAX_SIDE / ANCHOR_ROWS);
const PROF_START: usize = 0;
const PROF_START_CLK: usize = 1;
const PROF_SWEPT_FROM: usize = 2;
const PROF_SWEPT: usize = 3;
const PROF_ARGMIN: usize = 4;
const PROF_ANCHORS: usize = 5;
const PROF_END_CLK: usize = 6;
const PROF_END: usize = 7;
const PROF_BANDS: usize = 8;
const PROF_WINDOWS: usize = 9;
/// DP_GROUP of the kernels: the rows a warp fetches and sweeps at a
/// time (the record's "first group" is a window's first DP_GROUP rows).
const PROF_GROUP: usize = 4;

/// Launches the profiled sweep `name` (`seam_dp_{cluster|block}_*_profile`)
/// over the packed costs in `scratch`, as [`SeamDp::sweep`] launches
/// the plain one (`warps` a block, windows of `shape`), its record into
/// `prof`.
#[allow(clippy::too_many_arguments)]
fn sweep_profiled(
    gpu: &Gpu,
    name: &str,
    cluster: bool,
    shape: Shape,
    warps: usize,
    (w, h, pitch): (usize, usize, usize),
    scratch: &mut DpScratch,
    seam: &mut CudaSlice<u32>,
    prof: &mut CudaSlice<u64>,
) {
    let func = gpu.function(FILE, name).unwrap();
    func.set_attribute(
        sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        (warps * shape.ring_bytes()) as i32,
    )
    .unwrap();
    let cfg = sweep_config(if cluster { DP_CLUSTER } else { 1 }, warps, shape);
    let (w32, h32, p32, c32) = (w as u32, h as u32, pitch as u32, cost_pitch(w) as u32);
    let st = gpu.stream();
    let mut total = scratch.costs.slice_mut(1..2);
    let mut b = st.launch_builder(&func);
    b.arg(&scratch.cost).arg(&w32).arg(&h32).arg(&p32).arg(&c32);
    b.arg(&PROTECT_COST).arg(&REMOVE_BONUS).arg(&OUTSIDE);
    b.arg(&mut scratch.back).arg(&mut scratch.anchors).arg(seam);
    b.arg(&mut total).opt_mut(None::<&mut CudaSlice<i64>>);
    b.arg(&mut scratch.rows).arg(prof);
    // SAFETY: the profiled sweeps take the plain ones' arguments (see
    // SeamDp::sweep, whose checks the caller's shapes pass) and then
    // `prof`, which holds the two records of PROF_SLOT words they write.
    unsafe { launch(&mut b, cfg, name) }.unwrap();
}

/// Prints one block's record: where the sweep's time goes (bands of
/// `band` rows).
fn print_profile(what: &str, r: &[u64], h: usize, band: usize) {
    let ns = |a: usize, b: usize| r[b].wrapping_sub(r[a]) as f64;
    let total = ns(PROF_START, PROF_END);
    let ghz = r[PROF_END_CLK].wrapping_sub(r[PROF_START_CLK]) as f64 / total;
    let (nb, nwin) = (r[PROF_BANDS] as usize, r[PROF_WINDOWS] as usize);
    println!(
        "  {what}: {:.1} us in all at {ghz:.2} GHz, {nb} bands, {nwin} window(s) a warp; bottom row + first barrier {:.2} us; sweep {:.1} us",
        total / 1e3,
        ns(PROF_START, PROF_SWEPT_FROM) / 1e3,
        ns(PROF_SWEPT_FROM, PROF_SWEPT) / 1e3,
    );
    if nb == 0 || ghz <= 0.0 {
        return;
    }
    let mut sum = [0f64; 7];
    let (mut rows_all, mut firsts_all) = (0usize, 0usize);
    println!(
        "    band rows | compute  fence  barrier (ns) | cycles a row: wait  first-group  row  fetch"
    );
    for c in (0..nb.min(MAX_SIDE / ANCHOR_ROWS)).rev() {
        let b = &r[PROF_HEADER + PROF_BAND * c..][..PROF_BAND];
        let rows = (band * c + band).min(h - 1) - band * c;
        let n = (rows * nwin) as f64;
        let firsts = (rows.min(PROF_GROUP) * nwin) as f64;
        let d = |i: usize, j: usize| b[j].wrapping_sub(b[i]) as f64;
        let v = [
            d(0, 1),
            d(1, 2),
            d(2, 3),
            b[4] as f64,
            b[5] as f64,
            b[6] as f64,
            b[7] as f64,
        ];
        for (s, x) in sum.iter_mut().zip(v) {
            *s += x;
        }
        rows_all += rows * nwin;
        firsts_all += rows.min(PROF_GROUP) * nwin;
        if c >= nb - 2 || c < 2 || c % 8 == 0 {
            println!(
                "    {c:4} {rows:4} | {:7.0} {:6.0} {:8.0} | {:14.1} {:10.0} {:5.1} {:12.1}",
                v[0],
                v[1],
                v[2],
                v[3] / n,
                v[4] / firsts,
                v[5] / (n - firsts).max(1.0),
                v[6] / n,
            );
        }
    }
    let n = rows_all as f64;
    let firsts = firsts_all as f64;
    println!(
        "    mean a band: compute {:.0} ns, fence {:.0} ns, barrier {:.0} ns; a row ({n} rows): {:.1} ns in all, cycles: wait {:.1}, row with its store {:.1} (in a window's first group {:.0}), fetch {:.1}",
        sum[0] / nb as f64,
        sum[1] / nb as f64,
        sum[2] / nb as f64,
        sum[0] / n,
        sum[3] / n,
        sum[5] / (n - firsts).max(1.0),
        sum[4] / firsts,
        sum[6] / n,
    );
    println!(
        "    in all: compute {:.1} us (of which rows {:.1} us), fence {:.1} us, barrier {:.1} us",
        sum[0] / 1e3,
        (sum[3] + sum[4] + sum[5] + sum[6]) / ghz / 1e3,
        sum[1] / 1e3,
        sum[2] / 1e3,
    );
    if r[PROF_ARGMIN] != 0 {
        println!(
            "    tail: argmin {:.2} us, anchors {:.2} us, walk {:.2} us",
            ns(PROF_SWEPT, PROF_ARGMIN) / 1e3,
            ns(PROF_ARGMIN, PROF_ANCHORS) / 1e3,
            ns(PROF_ANCHORS, PROF_END) / 1e3,
        );
    }
}

/// Not a check but a measurement, on the GPU, run by hand
/// (`profile_the_dp_on_the_gpu --ignored --nocapture`): the exact DP at
/// 1920×1080 with forward energy and no mask. Prints the median of 50
/// runs (CUDA graphs of 8, events) of the packing, the sweeps with
/// 32- and 64-bit sums, in a cluster and in one block, and then the
/// profiled sweeps' record of where the time goes (warp 0 of the first
/// and of the last block: each band's compute, release fence and barrier
/// wait, and cycles a row waiting for the ring, computing, storing and
/// refilling; then the argmin, anchors and walk). Every sweep's seam
/// must be the CPU's.
#[test]
#[ignore]
fn profile_the_dp_on_the_gpu() {
    let Ok(gpu) = Gpu::open(0) else {
        eprintln!("SKIP: no GPU");
        return;
    };
    let st = gpu.stream().clone();
    let (w, h, pitch) = (1920, 1080, 1920);
    let i = input(w, h, true, 256, 0, 11);
    let cpu = reference(&i);
    let l = upload(&st, &i.luma, pitch);
    let mut scratch = DpScratch::new(&st, &[(pitch, h)], 2).unwrap();
    let mut seam = st.alloc_zeros::<u32>(h).unwrap();
    let median = |t: Vec<f64>| t[t.len() / 2];
    let seam_is_the_cpus = |seam: &CudaSlice<u32>, what: &str| {
        let got: Vec<usize> = st
            .clone_dtoh(seam)
            .unwrap()
            .iter()
            .map(|&x| x as usize)
            .collect();
        assert_eq!(got, cpu.seam, "{what}: the seam");
    };
    println!("DP at {w}x{h}, forward energy, no mask (us, median of 50):");
    let mut block_warps = 0;
    for (clusters, narrow) in [(true, true), (true, false), (false, false)] {
        let dp = SeamDp::load_with(&gpu, Energy::Forward, clusters, narrow, false).unwrap();
        if !dp.cluster {
            block_warps = dp.max_warps;
        }
        let planes = (None, None, &l);
        let prep = median(
            crate::timing::time_gpu(&gpu, 3, 50, |_| {
                dp.prep(&st, planes, (w, h, pitch), &mut scratch)
            })
            .unwrap(),
        );
        let both = median(
            crate::timing::time_gpu(&gpu, 3, 50, |_| {
                dp.dp(&st, planes, (w, h, pitch), &mut scratch, &mut seam, 1, None)
            })
            .unwrap(),
        );
        let mut sweeps = [0.0; 2];
        for (wide, t) in [false, true].into_iter().zip(&mut sweeps) {
            dp.prep(&st, planes, (w, h, pitch), &mut scratch).unwrap();
            *t = median(
                crate::timing::time_gpu(&gpu, 3, 50, |_| {
                    dp.sweep(
                        &st,
                        wide,
                        0,
                        (w, h, pitch),
                        &mut scratch,
                        &mut seam,
                        1,
                        None,
                    )
                })
                .unwrap(),
            );
            let what = format!("clusters={} {:?} wide={wide}", dp.cluster, dp.shape);
            seam_is_the_cpus(&seam, &what);
        }
        println!(
            "  {}: prep {prep:.1}, prep + sweep {both:.1}, sweep i32 {:.1}, sweep i64 {:.1}",
            match (dp.cluster, dp.shape == Shape::NARROW) {
                (true, true) => "cluster of 8, narrow windows",
                (true, false) => "cluster of 8, wide windows",
                _ => "one block",
            },
            sweeps[0],
            sweeps[1],
        );
    }

    // The profiled sweeps (after the packing they sweep).
    SeamDp::load(&gpu, Energy::Forward)
        .unwrap()
        .prep(&st, (None, None, &l), (w, h, pitch), &mut scratch)
        .unwrap();
    let mut prof = st.alloc_zeros::<u64>(2 * PROF_SLOT).unwrap();
    let wide = w.div_ceil(Shape::WIDE.own());
    let mut kernels = vec![(
        "seam_dp_block_i32_forward_profile".to_string(),
        false,
        Shape::WIDE,
        wide.clamp(1, block_warps.max(1)),
    )];
    if gpu.arch().0 >= 9 {
        for (bits, shape, name) in [
            ("i32", Shape::WIDE, "cluster"),
            ("i64", Shape::WIDE, "cluster"),
            ("i32", Shape::NARROW, "cluster2"),
            ("i64", Shape::NARROW, "cluster2"),
        ] {
            let windows = w.div_ceil(shape.own());
            let warps = windows.div_ceil(DP_CLUSTER).clamp(1, DP_MAX_WARPS_CLUSTER);
            let name = format!("seam_dp_{name}_{bits}_forward_profile");
            kernels.push((name, true, shape, warps));
        }
    }
    for (name, cluster, shape, warps) in kernels {
        let run = |scratch: &mut DpScratch, seam: &mut CudaSlice<u32>, prof: &mut _| {
            sweep_profiled(
                &gpu,
                &name,
                cluster,
                shape,
                warps,
                (w, h, pitch),
                scratch,
                seam,
                prof,
            );
            Ok(())
        };
        let timed = median(
            crate::timing::time_gpu(&gpu, 3, 50, |_| run(&mut scratch, &mut seam, &mut prof))
                .unwrap(),
        );
        st.memset_zeros(&mut prof).unwrap();
        run(&mut scratch, &mut seam, &mut prof).unwrap();
        let r = st.clone_dtoh(&prof).unwrap();
        seam_is_the_cpus(&seam, &name);
        println!("{name} ({warps} warps a block): {timed:.1} us (median of 50, profiled)");
        print_profile("first block", &r[..PROF_SLOT], h, shape.band());
        if cluster {
            print_profile("last block", &r[PROF_SLOT..], h, shape.band());
        }
    }
}
