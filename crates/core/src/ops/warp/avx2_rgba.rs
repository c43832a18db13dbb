//! Bilinear RGBA eight destination pixels at a time with AVX2: the same f32
//! operations as [`block_coords`], [`split`] and [`bilinear_block`], in the
//! same order and unfused (`_mm256_mul_ps` then `_mm256_add_ps`), so every
//! output byte is the same; only the taps are read differently, by gathers
//! at clamped coordinates, with the constant pixel blended in for taps
//! outside the frame. A row's last `width % 8` pixels go through the block
//! pipeline.

use std::arch::x86_64::*;

use super::{BLOCK, COORD_LIMIT, Lanes, Source, Transform, bilinear_block, block_coords};
use crate::color::BELOW_HALF;
use crate::frame::Rgba;

/// Warps one destination row `y` of `row.len()` pixels.
#[target_feature(enable = "avx2")]
pub(super) fn bilinear_span(
    s: &Source<Rgba>,
    t: &Transform,
    y: usize,
    first_x: usize,
    row: &mut [Rgba],
) {
    let yf = y as f32;
    let mut chunks = row.chunks_exact_mut(8);
    // Two chunks in flight: the taps of one are read while the one
    // before it is blended. Each alone is one long chain of dependent
    // steps, which the CPU could barely overlap (1.4× faster here).
    let mut pending: Option<(Taps, &mut [Rgba])> = None;
    for (k, out) in (&mut chunks).enumerate() {
        let x = _mm256_add_epi32(
            _mm256_set1_epi32((first_x + k * 8) as i32),
            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
        );
        let (sx, sy, no_point) = coords(t, _mm256_cvtepi32_ps(x), yf);
        let taps = fetch(s, sx, sy, no_point);
        if let Some((taps, out)) = pending.replace((taps, out)) {
            store(out, blend(s, &taps));
        }
    }
    if let Some((taps, out)) = pending {
        store(out, blend(s, &taps));
    }
    if !chunks.into_remainder().is_empty() {
        let x0 = row.len() / 8 * 8;
        let xf: Lanes = std::array::from_fn(|i| (first_x + x0 + i) as f32);
        let (mut sx, mut sy) = ([0f32; BLOCK], [0f32; BLOCK]);
        block_coords(t, &xf, yf, &mut sx, &mut sy);
        let tail = &mut row[x0..];
        bilinear_block(s, &sx, &sy, tail);
    }
}

/// `m0·x + ry + m2` with `ry = m1·y` computed once, as [`block_coords`].
#[inline]
#[target_feature(enable = "avx2")]
fn affine_term(m0: f32, ry: f32, m2: f32, x: __m256) -> __m256 {
    let mx = _mm256_mul_ps(_mm256_set1_ps(m0), x);
    _mm256_add_ps(_mm256_add_ps(mx, _mm256_set1_ps(ry)), _mm256_set1_ps(m2))
}

/// The source points of eight pixels of row `yf`, and the lanes that have
/// none (perspective divisor 0, or NaN).
#[inline]
#[target_feature(enable = "avx2")]
fn coords(t: &Transform, x: __m256, yf: f32) -> (__m256, __m256, __m256) {
    let (sx, sy, zero_w) = match *t {
        Transform::Affine(m) => (
            affine_term(m[0], m[1] * yf, m[2], x),
            affine_term(m[3], m[4] * yf, m[5], x),
            _mm256_setzero_ps(),
        ),
        Transform::Perspective(m) => {
            let w = affine_term(m[6], m[7] * yf, m[8], x);
            let nx = affine_term(m[0], m[1] * yf, m[2], x);
            let ny = affine_term(m[3], m[4] * yf, m[5], x);
            let zero_w = _mm256_cmp_ps::<_CMP_EQ_OQ>(w, _mm256_setzero_ps());
            (_mm256_div_ps(nx, w), _mm256_div_ps(ny, w), zero_w)
        }
    };
    let nan = _mm256_or_ps(
        _mm256_cmp_ps::<_CMP_UNORD_Q>(sx, sx),
        _mm256_cmp_ps::<_CMP_UNORD_Q>(sy, sy),
    );
    (sx, sy, _mm256_or_ps(nan, zero_w))
}

/// [`super::split`] for eight lanes: the clamped point (NaN becomes the
/// lower limit, as `max` returns its second operand on NaN), its floor
/// as an integer and the fraction.
#[inline]
#[target_feature(enable = "avx2")]
fn split(v: __m256) -> (__m256i, __m256) {
    let v = _mm256_min_ps(
        _mm256_max_ps(v, _mm256_set1_ps(-COORD_LIMIT)),
        _mm256_set1_ps(COORD_LIMIT),
    );
    let v = _mm256_add_ps(v, _mm256_setzero_ps());
    let floor = _mm256_floor_ps(v);
    (_mm256_cvttps_epi32(floor), _mm256_sub_ps(v, floor))
}

/// Whether `v` lies in `0..n`, per lane.
#[inline]
#[target_feature(enable = "avx2")]
fn within(v: __m256i, n: __m256i) -> __m256i {
    _mm256_and_si256(
        _mm256_cmpgt_epi32(v, _mm256_set1_epi32(-1)),
        _mm256_cmpgt_epi32(n, v),
    )
}

/// The four taps (top-left, top-right, bottom-left, bottom-right) of
/// eight points whose taps all lie inside the frame: each pair of
/// neighbours is one 8-byte load, which measured much faster here than
/// gathers.
#[inline]
#[target_feature(enable = "avx2")]
fn inner_taps(s: &Source<Rgba>, xi: __m256i, yi: __m256i) -> [__m256i; 4] {
    let top = _mm256_add_epi32(
        _mm256_mullo_epi32(yi, _mm256_set1_epi32(s.stride as i32)),
        xi,
    );
    let mut at = [0i32; 8];
    // SAFETY: `at` is 8 i32, 32 bytes, which the unaligned store writes.
    unsafe { _mm256_storeu_si256(at.as_mut_ptr().cast(), top) };
    let base = s.data.as_ptr();
    let pair = |k: i32| {
        // SAFETY: the caller checked 0 ≤ x ≤ w − 2 and 0 ≤ y ≤ h − 2, so
        // pixels k = y·stride + x and k + 1 (and those a stride below)
        // are in `s.data`; the read is unaligned.
        unsafe { base.add(k as usize).cast::<i64>().read_unaligned() }
    };
    let below = s.stride as i32;
    // Pixels 0, 1, 4, 5 in one vector and 2, 3, 6, 7 in the other, so
    // that the in-lane shuffles below leave the lanes in order.
    let a = _mm256_set_epi64x(pair(at[5]), pair(at[4]), pair(at[1]), pair(at[0]));
    let b = _mm256_set_epi64x(pair(at[7]), pair(at[6]), pair(at[3]), pair(at[2]));
    let c = _mm256_set_epi64x(
        pair(at[5] + below),
        pair(at[4] + below),
        pair(at[1] + below),
        pair(at[0] + below),
    );
    let d = _mm256_set_epi64x(
        pair(at[7] + below),
        pair(at[6] + below),
        pair(at[3] + below),
        pair(at[2] + below),
    );
    let left = |a: __m256i, b: __m256i| {
        _mm256_castps_si256(_mm256_shuffle_ps::<0x88>(
            _mm256_castsi256_ps(a),
            _mm256_castsi256_ps(b),
        ))
    };
    let right = |a: __m256i, b: __m256i| {
        _mm256_castps_si256(_mm256_shuffle_ps::<0xDD>(
            _mm256_castsi256_ps(a),
            _mm256_castsi256_ps(b),
        ))
    };
    [left(a, b), right(a, b), left(c, d), right(c, d)]
}

/// The four taps of eight points some of whose taps lie outside the
/// frame: gathered at clamped coordinates (replicate's taps), with the
/// constant pixel blended in for taps outside under border=constant.
#[inline]
#[target_feature(enable = "avx2")]
fn border_taps(s: &Source<Rgba>, xi: __m256i, yi: __m256i) -> [__m256i; 4] {
    let one = _mm256_set1_epi32(1);
    let (x1, y1) = (_mm256_add_epi32(xi, one), _mm256_add_epi32(yi, one));
    let (w, h) = (_mm256_set1_epi32(s.w), _mm256_set1_epi32(s.h));
    let clamp_x = |v| {
        _mm256_min_epi32(
            _mm256_max_epi32(v, _mm256_setzero_si256()),
            _mm256_sub_epi32(w, one),
        )
    };
    let clamp_y = |v| {
        _mm256_min_epi32(
            _mm256_max_epi32(v, _mm256_setzero_si256()),
            _mm256_sub_epi32(h, one),
        )
    };
    // Clamped coordinates are replicate's taps, and always inside.
    let stride = _mm256_set1_epi32(s.stride as i32);
    let (xa, xb) = (clamp_x(xi), clamp_x(x1));
    let (row_a, row_b) = (
        _mm256_mullo_epi32(clamp_y(yi), stride),
        _mm256_mullo_epi32(clamp_y(y1), stride),
    );
    let base = s.data.as_ptr().cast::<i32>();
    // SAFETY: every index is y·stride + x with 0 ≤ x < w and 0 ≤ y < h
    // (clamped above), a pixel of `s.data`, whose length the caller
    // checked fits i32, so no index overflows; each gather reads the 4
    // bytes of that pixel (scale 4), and pixels need no alignment.
    let mut taps = unsafe {
        [
            _mm256_i32gather_epi32::<4>(base, _mm256_add_epi32(row_a, xa)),
            _mm256_i32gather_epi32::<4>(base, _mm256_add_epi32(row_a, xb)),
            _mm256_i32gather_epi32::<4>(base, _mm256_add_epi32(row_b, xa)),
            _mm256_i32gather_epi32::<4>(base, _mm256_add_epi32(row_b, xb)),
        ]
    };
    let fill = _mm256_set1_epi32(u32::from_le_bytes(s.fill) as i32);
    if !s.replicate {
        let (in_x0, in_x1) = (within(xi, w), within(x1, w));
        let (in_y0, in_y1) = (within(yi, h), within(y1, h));
        let inside = [
            _mm256_and_si256(in_x0, in_y0),
            _mm256_and_si256(in_x1, in_y0),
            _mm256_and_si256(in_x0, in_y1),
            _mm256_and_si256(in_x1, in_y1),
        ];
        let all = _mm256_and_si256(
            _mm256_and_si256(inside[0], inside[1]),
            _mm256_and_si256(inside[2], inside[3]),
        );
        if _mm256_movemask_epi8(all) != -1 {
            for (tap, inside) in taps.iter_mut().zip(inside) {
                *tap = _mm256_blendv_epi8(fill, *tap, inside);
            }
        }
    }
    taps
}

/// What blending eight pixels needs: their four taps each (packed
/// RGBA), the fractions of their source points, and the lanes with no
/// source point.
#[derive(Clone, Copy)]
struct Taps {
    taps: [__m256i; 4],
    fx: __m256,
    fy: __m256,
    no_point: __m256,
}

/// Writes eight packed RGBA pixels.
#[inline]
#[target_feature(enable = "avx2")]
fn store(out: &mut [Rgba], pixels: __m256i) {
    assert_eq!(out.len(), 8);
    // SAFETY: `out` is exactly 8 RGBA pixels, 32 bytes, which the
    // unaligned store writes and nothing else.
    unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), pixels) };
}

/// The taps of eight source points (`sx`, `sy`).
#[inline]
#[target_feature(enable = "avx2")]
fn fetch(s: &Source<Rgba>, sx: __m256, sy: __m256, no_point: __m256) -> Taps {
    let (xi, fx) = split(sx);
    let (yi, fy) = split(sy);
    let (w, h) = (_mm256_set1_epi32(s.w), _mm256_set1_epi32(s.h));
    let one = _mm256_set1_epi32(1);
    let inside = _mm256_and_si256(
        within(xi, _mm256_sub_epi32(w, one)),
        within(yi, _mm256_sub_epi32(h, one)),
    );
    let taps = if _mm256_movemask_epi8(inside) == -1 {
        inner_taps(s, xi, yi)
    } else {
        border_taps(s, xi, yi)
    };
    Taps {
        taps,
        fx,
        fy,
        no_point,
    }
}

/// Eight bilinear samples from their taps, packed RGBA; lanes with no
/// source point get the fill pixel.
#[inline]
#[target_feature(enable = "avx2")]
fn blend(s: &Source<Rgba>, t: &Taps) -> __m256i {
    let Taps {
        taps,
        fx,
        fy,
        no_point,
    } = *t;
    let fill = _mm256_set1_epi32(u32::from_le_bytes(s.fill) as i32);
    let (gx, gy) = (
        _mm256_sub_ps(_mm256_set1_ps(1.0), fx),
        _mm256_sub_ps(_mm256_set1_ps(1.0), fy),
    );
    let byte = _mm256_set1_epi32(0xFF);
    // Where alpha is the same in all four taps of all eight pixels (an
    // opaque frame, or the constant pixel), the blend gives it back
    // exactly: the weights sum to 1 within a few f32 ulps, so the blend
    // is within 1e-4 of the value, far inside the half that rounding
    // needs. It is copied instead of computed.
    let differ = _mm256_or_si256(
        _mm256_xor_si256(taps[0], taps[1]),
        _mm256_or_si256(
            _mm256_xor_si256(taps[0], taps[2]),
            _mm256_xor_si256(taps[0], taps[3]),
        ),
    );
    let alpha = _mm256_set1_epi32(0xFF00_0000_u32 as i32);
    let channel = |c: i32| {
        let chan = |p: __m256i| {
            let shifted = _mm256_srlv_epi32(p, _mm256_set1_epi32(8 * c));
            _mm256_cvtepi32_ps(_mm256_and_si256(shifted, byte))
        };
        let weigh = |a: __m256, pa: __m256, b: __m256, pb: __m256| {
            _mm256_add_ps(_mm256_mul_ps(a, pa), _mm256_mul_ps(b, pb))
        };
        let top = weigh(gx, chan(taps[0]), fx, chan(taps[1]));
        let bot = weigh(gx, chan(taps[2]), fx, chan(taps[3]));
        let v = weigh(gy, top, fy, bot);
        // `saturate_u8`: add just under a half and floor (truncation, as
        // the value is positive). Its clamp to 0..=255 changes nothing
        // here, so it is left out: taps and weights are ≥ 0, and the
        // weights sum to at most 1 + 5·2⁻²⁴, so the blend lies in
        // 0..=255.0001, which rounds into 0..=255 anyway.
        let v = _mm256_cvttps_epi32(_mm256_add_ps(v, _mm256_set1_ps(BELOW_HALF)));
        _mm256_sllv_epi32(v, _mm256_set1_epi32(8 * c))
    };
    let alpha = if _mm256_testz_si256(differ, alpha) == 1 {
        _mm256_and_si256(taps[0], alpha)
    } else {
        channel(3)
    };
    let res = _mm256_or_si256(
        _mm256_or_si256(channel(0), channel(1)),
        _mm256_or_si256(channel(2), alpha),
    );
    _mm256_blendv_epi8(res, fill, _mm256_castps_si256(no_point))
}
