//! On-screen text and titles: strokes of even colour that stand out from
//! their surroundings, lined up at one height.
//!
//! On a luma picture (the analysis thumbnail, and a third of it for large
//! titles):
//!
//! 1. **Ink**: pixels brighter (or darker) than the mean of their 15×15
//!    neighbourhood by [`INK_CONTRAST`] levels, in two maps by polarity.
//! 2. **Characters**: connected pieces of ink of a letter's proportions,
//!    filling part of their box, of even colour (a letter is painted in
//!    one colour; a leaf is not).
//! 3. **Lines**: characters of one polarity and colour, of similar height,
//!    side by side at one height with gaps under a letter's height; a line
//!    needs [`MIN_CHARS`] of them.
//! 4. **Blocks**: lines whose boxes touch, grown by half a letter, merge.

use super::foreground::components;
use super::geometry::Rect;
use crate::frame::Plane;

/// Levels ink differs from its neighbourhood's mean.
pub const INK_CONTRAST: i32 = 22;
/// Radius of the neighbourhood.
const MEAN_RADIUS: usize = 7;
/// Characters a line needs.
pub const MIN_CHARS: usize = 4;
/// Largest standard deviation of a character's levels. A letter is painted
/// in one colour, but a thin stroke shrunk to the thumbnail mixes with its
/// ground at its edges: grey letters 22 px high at 720p spread by 26–34
/// levels there (promo's "now on your TV.", half of whose letters a limit
/// of 30 dropped, so the line broke in two).
const MAX_CHAR_STD: f64 = 36.0;
/// A title's letters at the third-size pass: at least this high, at least
/// this many, within this many levels of one another.
const MIN_TITLE_LETTER: usize = 8;
const MIN_PAINTED: usize = 10;
const PAINT_LEVELS: f64 = 6.0;
/// A line's characters differ in width (letters do; panes and bricks do
/// not): the widths' coefficient of variation is at least this.
const MIN_WIDTH_SPREAD: f64 = 0.15;
/// The most the ground under a line of small text may vary (levels).
const MAX_GROUND_STD: f64 = 12.0;
/// Titles keep inside the title-safe area (broadcast practice keeps them at
/// least 5% in from each edge): a group of painted letters within this
/// share of the picture's edge is something else, leaves or petals of one
/// shade over the whole frame (flower-timelapse: a "title" of 954×468 of
/// its 960×540 pixels; promo's titles keep 6% and more clear).
const TITLE_SAFE: f64 = 0.02;
/// Largest median share of its box a line's characters fill: letters are
/// strokes; panes and bricks fill their boxes.
const MAX_LINE_FILL: f64 = 0.8;

/// One connected piece of ink.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Piece {
    rect: Rect,
    area: usize,
    mean: f64,
    bright: bool,
}

/// The box mean of `luma` over (2R+1)² (clipped at the edges), by an
/// integral image.
fn local_mean<const R: usize>(luma: &Plane<u8>) -> Plane<u8> {
    let (w, h) = (luma.width(), luma.height());
    // Per call: the integral image.
    let mut sum = vec![0u32; (w + 1) * (h + 1)];
    for y in 0..h {
        let mut row = 0u32;
        for (x, &v) in luma.row(y).iter().enumerate() {
            row += v as u32;
            sum[(y + 1) * (w + 1) + x + 1] = sum[y * (w + 1) + x + 1] + row;
        }
    }
    // A whole neighbourhood's count, a constant to divide by.
    let full = ((2 * R + 1) * (2 * R + 1)) as u32;
    let mut out = Plane::new(w, h, 0u8);
    for (y, row) in out.rows_mut().enumerate() {
        let (y0, y1) = (y.saturating_sub(R), (y + R + 1).min(h));
        let top = &sum[y0 * (w + 1)..(y0 + 1) * (w + 1)];
        let bottom = &sum[y1 * (w + 1)..(y1 + 1) * (w + 1)];
        let rows = (y1 - y0) as u32;
        let at = |x: usize| {
            let (x0, x1) = (x.saturating_sub(R), (x + R + 1).min(w));
            (
                bottom[x1] + top[x0] - top[x1] - bottom[x0],
                (x1 - x0) as u32 * rows,
            )
        };
        // Columns whose neighbourhood lies inside the row.
        let inner = R..w.saturating_sub(R).max(R);
        if rows as usize == 2 * R + 1 {
            for x in inner.clone() {
                let s = bottom[x + R + 1] + top[x - R] - top[x + R + 1] - bottom[x - R];
                row[x] = ((s + full / 2) / full) as u8;
            }
        } else {
            for x in inner.clone() {
                let (s, n) = at(x);
                row[x] = ((s + n / 2) / n) as u8;
            }
        }
        for x in (0..inner.start.min(w)).chain(inner.end..w) {
            let (s, n) = at(x);
            row[x] = ((s + n / 2) / n) as u8;
        }
    }
    out
}

/// Whether a pixel of level `v` over a neighbourhood of mean `m` is ink of
/// the polarity `bright`.
#[inline]
fn is_ink(v: u8, m: u8, bright: bool) -> bool {
    let d = v as i32 - m as i32;
    if bright {
        d > INK_CONTRAST
    } else {
        d < -INK_CONTRAST
    }
}

/// A horizontal run of ink: row `y`, columns `x0..x1`.
#[derive(Clone, Copy, Debug)]
struct Run {
    y: usize,
    x0: usize,
    x1: usize,
}

/// What a piece's runs add up to.
#[derive(Clone, Copy, Debug)]
struct Tally {
    x_lo: usize,
    x_hi: usize,
    y_lo: usize,
    y_hi: usize,
    area: usize,
    sum: u64,
    squares: u64,
}

/// The ink of polarity `bright` (against `mean`), and its 8-connected
/// pieces that have a letter's shape, in the order of their first pixel
/// (row by row): runs of ink joined to the touching runs of the row above.
fn pieces(luma: &Plane<u8>, mean: &Plane<u8>, bright: bool, out: &mut Vec<Piece>) -> Plane<bool> {
    let (w, h) = (luma.width(), luma.height());
    let mut inked = Plane::new(w, h, false);
    // Per call: the runs, where each row's start, and their pieces.
    let mut runs: Vec<Run> = Vec::new();
    let mut row_start = Vec::with_capacity(h + 1);
    // One row's ink, 1 or 0, padded to whole words with 0.
    let mut ink = vec![0u8; w.next_multiple_of(8)];
    for y in 0..h {
        row_start.push(runs.len());
        for ((i, &v), &m) in ink.iter_mut().zip(luma.row(y)).zip(mean.row(y)) {
            *i = is_ink(v, m, bright) as u8;
        }
        for (o, &i) in inked.row_mut(y).iter_mut().zip(&ink) {
            *o = i != 0;
        }
        let mut x = 0;
        while x < w {
            // Most of a row is not ink: eight pixels at a time.
            if x % 8 == 0 && u64::from_ne_bytes(ink[x..x + 8].try_into().unwrap_or([1; 8])) == 0 {
                x += 8;
                continue;
            }
            if ink[x] == 0 {
                x += 1;
                continue;
            }
            let x0 = x;
            while x < w && ink[x] != 0 {
                x += 1;
            }
            runs.push(Run { y, x0, x1: x });
        }
    }
    row_start.push(runs.len());
    // Each run's piece: the first run of it, which is the root of its set.
    let mut parent: Vec<usize> = (0..runs.len()).collect();
    for y in 1..h {
        let mut above = row_start[y - 1];
        for k in row_start[y]..row_start[y + 1] {
            let b = runs[k];
            // Runs above that end left of b's left neighbour touch
            // neither b nor any run right of it.
            while above < row_start[y] && runs[above].x1 < b.x0 {
                above += 1;
            }
            let mut a = above;
            while a < row_start[y] && runs[a].x0 <= b.x1 {
                let (ra, rb) = (find(&mut parent, a), find(&mut parent, k));
                if ra != rb {
                    parent[ra.max(rb)] = ra.min(rb);
                }
                a += 1;
            }
        }
    }
    let mut tallies: Vec<Option<Tally>> = vec![None; runs.len()];
    for (k, run) in runs.iter().enumerate() {
        let root = find(&mut parent, k);
        let (mut sum, mut squares) = (0u64, 0u64);
        for &v in &luma.row(run.y)[run.x0..run.x1] {
            sum += v as u64;
            squares += v as u64 * v as u64;
        }
        let t = tallies[root].get_or_insert(Tally {
            x_lo: run.x0,
            x_hi: run.x1 - 1,
            y_lo: run.y,
            y_hi: run.y,
            area: 0,
            sum: 0,
            squares: 0,
        });
        t.x_lo = t.x_lo.min(run.x0);
        t.x_hi = t.x_hi.max(run.x1 - 1);
        t.y_hi = run.y;
        t.area += run.x1 - run.x0;
        t.sum += sum;
        t.squares += squares;
    }
    // Roots are first runs, so the pieces come in the order of their first
    // pixels.
    for t in tallies.into_iter().flatten() {
        // Sums of whole levels below 2⁵³ are exact in f64, as the flood's
        // running sums were.
        let area = t.area;
        let mean = t.sum as f64 / area as f64;
        let var = (t.squares as f64 / area as f64 - mean * mean).max(0.0);
        let rect = Rect::new(t.x_lo, t.y_lo, t.x_hi - t.x_lo + 1, t.y_hi - t.y_lo + 1);
        if is_letter(rect, area, var, h) {
            out.push(Piece {
                rect,
                area,
                mean,
                bright,
            });
        }
    }
    inked
}

/// A letter: between 6 pixels and a third of the picture high, at most
/// three times as wide as high (joined letters), filling part of its box,
/// in one colour.
fn is_letter(rect: Rect, area: usize, var: f64, h: usize) -> bool {
    let fill = area as f64 / rect.area() as f64;
    rect.h >= 6
        && rect.h <= h / 3
        && rect.w >= 2
        && rect.w <= 3 * rect.h
        && (0.12..=1.0).contains(&fill)
        && var.sqrt() <= MAX_CHAR_STD
}

/// [`pieces`] by flooding each piece pixel by pixel: the reference the
/// runs must agree with.
#[cfg(test)]
fn pieces_by_flood(luma: &Plane<u8>, ink: &Plane<bool>, bright: bool, out: &mut Vec<Piece>) {
    let (w, h) = (ink.width(), ink.height());
    let mut seen = vec![false; w * h];
    let mut stack = Vec::new();
    for y0 in 0..h {
        for x0 in 0..w {
            if seen[y0 * w + x0] || !ink.get(x0, y0) {
                continue;
            }
            seen[y0 * w + x0] = true;
            stack.push((x0, y0));
            let (mut x_lo, mut x_hi, mut y_lo, mut y_hi) = (x0, x0, y0, y0);
            let (mut area, mut s, mut s2) = (0usize, 0f64, 0f64);
            while let Some((x, y)) = stack.pop() {
                area += 1;
                let v = luma.get(x, y) as f64;
                s += v;
                s2 += v * v;
                x_lo = x_lo.min(x);
                x_hi = x_hi.max(x);
                y_lo = y_lo.min(y);
                y_hi = y_hi.max(y);
                for dy in -1isize..=1 {
                    for dx in -1isize..=1 {
                        let (nx, ny) = (x as isize + dx, y as isize + dy);
                        if nx < 0 || ny < 0 || nx >= w as isize || ny >= h as isize {
                            continue;
                        }
                        let (nx, ny) = (nx as usize, ny as usize);
                        if !seen[ny * w + nx] && ink.get(nx, ny) {
                            seen[ny * w + nx] = true;
                            stack.push((nx, ny));
                        }
                    }
                }
            }
            let mean = s / area as f64;
            let var = (s2 / area as f64 - mean * mean).max(0.0);
            let rect = Rect::new(x_lo, y_lo, x_hi - x_lo + 1, y_hi - y_lo + 1);
            // A letter: between 6 pixels and a third of the picture high,
            // at most twice as wide as high (two joined letters), filling
            // part of its box, in one colour (up to three joined letters).
            let fill = area as f64 / rect.area() as f64;
            if rect.h >= 6
                && rect.h <= h / 3
                && rect.w >= 2
                && rect.w <= 3 * rect.h
                && (0.12..=1.0).contains(&fill)
                && var.sqrt() <= MAX_CHAR_STD
            {
                out.push(Piece {
                    rect,
                    area,
                    mean,
                    bright,
                });
            }
        }
    }
}

/// Whether two characters belong to one line.
fn neighbours(a: &Piece, b: &Piece) -> bool {
    if a.bright != b.bright || (a.mean - b.mean).abs() > 40.0 {
        return false;
    }
    let (ha, hb) = (a.rect.h as f64, b.rect.h as f64);
    if ha.max(hb) > 1.7 * ha.min(hb) {
        return false;
    }
    let overlap = a.rect.bottom().min(b.rect.bottom()) as f64 - a.rect.y.max(b.rect.y) as f64;
    if overlap < 0.5 * ha.min(hb) {
        return false;
    }
    let gap = if a.rect.x <= b.rect.x {
        b.rect.x as f64 - a.rect.right() as f64
    } else {
        a.rect.x as f64 - b.rect.right() as f64
    };
    gap <= ha.max(hb)
}

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// Text blocks of `luma` at its own scale; `titles`: also groups of many
/// large letters painted in one colour, whatever their lines.
fn blocks_at(luma: &Plane<u8>, titles: bool) -> Vec<Rect> {
    let (w, h) = (luma.width(), luma.height());
    if w < 8 || h < 8 {
        return Vec::new();
    }
    let mean = local_mean::<MEAN_RADIUS>(luma);
    let mut chars = Vec::new();
    let inks = [true, false].map(|bright| pieces(luma, &mean, bright, &mut chars));
    // Lines: characters joined to their neighbours (sorted by x, each
    // compared with those that start within reach).
    chars.sort_by_key(|c| c.rect.x);
    let n = chars.len();
    let mut parent: Vec<usize> = (0..n).collect();
    for i in 0..n {
        let reach = chars[i].rect.right() + 2 * chars[i].rect.h;
        for j in i + 1..n {
            if chars[j].rect.x > reach {
                break;
            }
            if neighbours(&chars[i], &chars[j]) {
                let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                parent[a] = b;
            }
        }
    }
    // Each line's characters.
    let mut members: Vec<Vec<usize>> = Vec::new();
    let mut root_line = vec![usize::MAX; n];
    for i in 0..n {
        let r = find(&mut parent, i);
        if root_line[r] == usize::MAX {
            root_line[r] = members.len();
            members.push(Vec::new());
        }
        members[root_line[r]].push(i);
    }
    let mut found: Vec<Rect> = members
        .iter()
        .filter(|m| {
            let ink = &inks[usize::from(!chars[m[0]].bright)];
            is_line(m.iter().map(|&i| &chars[i])) && plain_ground(luma, ink, m, &chars)
        })
        .map(|m| {
            m.iter()
                .skip(1)
                .fold(chars[m[0]].rect, |r, &i| r.union(&chars[i].rect))
        })
        .filter(|r| r.w >= 2 * r.h)
        .collect();
    // Blocks: lines of one size stacked closely, overlapping across.
    loop {
        let mut merged = false;
        'outer: for i in 0..found.len() {
            for j in i + 1..found.len() {
                if stacked(&found[i], &found[j]) {
                    found[i] = found[i].union(&found[j]);
                    found.swap_remove(j);
                    merged = true;
                    break 'outer;
                }
            }
        }
        if !merged {
            break;
        }
    }
    if titles {
        found.extend(painted_groups(&chars, w, h));
    }
    found
}

/// Groups of at least [`MIN_PAINTED`] large letters of one polarity and
/// within [`PAINT_LEVELS`] of one level, each within a letter's height of
/// another: a title painted in one colour, its letters broken up or its
/// lines uneven. A group that reaches the `w`×`h` picture's edge is no
/// title ([`TITLE_SAFE`]).
fn painted_groups(chars: &[Piece], w: usize, h: usize) -> Vec<Rect> {
    let (mx, my) = (
        ((w as f64 * TITLE_SAFE) as usize).max(1),
        ((h as f64 * TITLE_SAFE) as usize).max(1),
    );
    let inside = |r: &Rect| r.x >= mx && r.y >= my && r.right() + mx <= w && r.bottom() + my <= h;
    let mut found: Vec<Rect> = Vec::new();
    for seed in chars.iter().filter(|c| c.rect.h >= MIN_TITLE_LETTER) {
        // The letters of the seed's colour, joined by reach.
        let near: Vec<&Piece> = chars
            .iter()
            .filter(|c| c.bright == seed.bright && (c.mean - seed.mean).abs() <= PAINT_LEVELS)
            .collect();
        let n = near.len();
        let mut parent: Vec<usize> = (0..n).collect();
        for i in 0..n {
            for j in i + 1..n {
                let reach = 3 * near[i].rect.h.max(near[j].rect.h) / 2;
                let grown = near[i].rect.grown(reach, reach, usize::MAX, usize::MAX);
                if grown.intersect(&near[j].rect).is_some() {
                    let (x, y) = (find(&mut parent, i), find(&mut parent, j));
                    parent[x] = y;
                }
            }
        }
        let Some(si) = near.iter().position(|c| std::ptr::eq(*c, seed)) else {
            continue;
        };
        let root = find(&mut parent, si);
        let members: Vec<&Piece> = (0..n)
            .filter(|&i| find(&mut parent, i) == root)
            .map(|i| near[i])
            .collect();
        let large = members
            .iter()
            .filter(|c| c.rect.h >= MIN_TITLE_LETTER)
            .count();
        if members.len() < MIN_PAINTED || large < 3 {
            continue;
        }
        let r = members
            .iter()
            .skip(1)
            .fold(members[0].rect, |r, c| r.union(&c.rect));
        if inside(&r) && !found.iter().any(|f| f.intersect(&r).is_some()) {
            found.push(r);
        }
    }
    found
}

/// Whether characters make a line of text: enough of them, sitting on one
/// baseline, drawn in strokes (a row of filled panes or bricks is not).
fn is_line<'a>(chars: impl Iterator<Item = &'a Piece>) -> bool {
    let chars: Vec<&Piece> = chars.collect();
    if chars.len() < MIN_CHARS {
        return false;
    }
    let mut fills: Vec<f64> = chars
        .iter()
        .map(|c| c.area as f64 / c.rect.area() as f64)
        .collect();
    fills.sort_by(f64::total_cmp);
    let median_fill = fills[fills.len() / 2];
    let mean_h = chars.iter().map(|c| c.rect.h as f64).sum::<f64>() / chars.len() as f64;
    let bottoms: Vec<f64> = chars.iter().map(|c| c.rect.bottom() as f64).collect();
    let mb = bottoms.iter().sum::<f64>() / bottoms.len() as f64;
    let spread =
        (bottoms.iter().map(|b| (b - mb).powi(2)).sum::<f64>() / bottoms.len() as f64).sqrt();
    let widths: Vec<f64> = chars.iter().map(|c| c.rect.w as f64).collect();
    let mw = widths.iter().sum::<f64>() / widths.len() as f64;
    let wsd = (widths.iter().map(|w| (w - mw).powi(2)).sum::<f64>() / widths.len() as f64).sqrt();
    median_fill <= MAX_LINE_FILL && spread <= 0.25 * mean_h && wsd >= MIN_WIDTH_SPREAD * mw
}

/// Whether a line sits on a plain ground: the pixels of its box that are
/// neither its ink nor next to it vary by at most [`MAX_GROUND_STD`] levels
/// (captions, cards and signs do; leaves and window views do not).
fn plain_ground(luma: &Plane<u8>, ink: &Plane<bool>, members: &[usize], chars: &[Piece]) -> bool {
    let r = members
        .iter()
        .skip(1)
        .fold(chars[members[0]].rect, |r, &i| r.union(&chars[i].rect));
    let (mut n, mut s, mut s2) = (0f64, 0f64, 0f64);
    let (w, h) = (luma.width(), luma.height());
    let inked = |x: usize, y: usize| {
        ink.get(x, y)
            || (x > 0 && ink.get(x - 1, y))
            || (x + 1 < w && ink.get(x + 1, y))
            || (y > 0 && ink.get(x, y - 1))
            || (y + 1 < h && ink.get(x, y + 1))
    };
    for y in r.y..r.bottom() {
        for x in r.x..r.right() {
            let v = luma.get(x, y) as f64;
            if !inked(x, y) {
                n += 1.0;
                s += v;
                s2 += v * v;
            }
        }
    }
    if n < 4.0 {
        return false;
    }
    let m = s / n;
    (s2 / n - m * m).max(0.0).sqrt() <= MAX_GROUND_STD
}

/// Whether two lines belong to one block: heights within a half of each
/// other, overlapping across by a third of the narrower, and less than a
/// line's height apart.
fn stacked(a: &Rect, b: &Rect) -> bool {
    let (ha, hb) = (a.h as f64, b.h as f64);
    if ha.max(hb) > 1.5 * ha.min(hb) {
        return false;
    }
    let across = a.right().min(b.right()) as f64 - a.x.max(b.x) as f64;
    if across < a.w.min(b.w) as f64 / 3.0 {
        return false;
    }
    let gap = if a.y <= b.y {
        b.y as f64 - a.bottom() as f64
    } else {
        a.y as f64 - b.bottom() as f64
    };
    gap < ha.min(hb)
}

/// `luma` shrunk by `f` (box means, the remainder dropped).
pub fn shrink(luma: &Plane<u8>, f: usize) -> Plane<u8> {
    // The usual factors get their own copies of the loop, in which a
    // block's width is a constant.
    match f {
        2 => shrink_by(luma, 2),
        3 => shrink_by(luma, 3),
        _ => shrink_by(luma, f),
    }
}

#[inline(always)]
fn shrink_by(luma: &Plane<u8>, f: usize) -> Plane<u8> {
    let (w, h) = (luma.width() / f, luma.height() / f);
    let n = (f * f) as u32;
    let mut out = Plane::new(w, h, 0u8);
    // The sums down each column of a band of `f` rows, reused for every
    // band.
    let mut columns = vec![0u32; w * f];
    for (y, row) in out.rows_mut().enumerate() {
        columns.fill(0);
        for dy in 0..f {
            for (c, &v) in columns.iter_mut().zip(&luma.row(y * f + dy)[..w * f]) {
                *c += v as u32;
            }
        }
        for (o, block) in row.iter_mut().zip(columns.chunks_exact(f)) {
            let s: u32 = block.iter().sum();
            *o = ((s + n / 2) / n) as u8;
        }
    }
    out
}

/// The text blocks of `luma` (lines of small text and large titles), as
/// rectangles of its pixels.
pub fn text_blocks(luma: &Plane<u8>) -> Vec<Rect> {
    let (w, h) = (luma.width(), luma.height());
    let mut found = blocks_at(luma, false);
    // Titles whose letters are too large for the neighbourhood: a third of
    // the size.
    if w >= 48 && h >= 48 {
        for r in blocks_at(&shrink(luma, 3), true) {
            let big = r.scaled(3, 1);
            let big = Rect::new(big.x, big.y, big.w.min(w - big.x), big.h.min(h - big.y));
            if !found.iter().any(|f| f.intersect(&big).is_some()) {
                found.push(big);
            } else {
                // Taken together with the small-scale boxes it overlaps.
                let mut u = big;
                found.retain(|f| {
                    if f.intersect(&big).is_some() {
                        u = u.union(f);
                        false
                    } else {
                        true
                    }
                });
                found.push(u);
            }
        }
    }
    found
}

/// A title card: at least this share of the picture lies within
/// [`CARD_LEVELS`] of its most common level (a plain ground). Promo's
/// title cards hold 98–100% there; no frame of the other shared clips
/// holds more than 57%.
pub const CARD_SHARE: f64 = 0.9;
/// Levels either side of a card's ground that are still ground.
pub const CARD_LEVELS: i32 = 6;
/// Levels from a card's ground at which a pixel is what the card shows.
const CARD_INK: i32 = 16;

/// What a title card shows (`luma` is one, [`CARD_SHARE`]): its words,
/// logos and pictures, each group of what stands out of the plain ground
/// (pieces nearer than a 60th of the width across or a 90th down are one
/// group: a line's words, a logo beside its name), as rectangles of its
/// pixels; `None` where `luma` is no card. On a card everything shown was
/// put there to be seen, so a logo that no letter test takes for text (a
/// red box with white letters beside black ones) is kept too.
pub fn card_blocks(luma: &Plane<u8>, hist: &[usize; 256]) -> Option<Vec<Rect>> {
    let (w, h) = (luma.width(), luma.height());
    if w == 0 || h == 0 {
        return None;
    }
    // The ground: the most common level (the level whose neighbourhood
    // holds the most would be pulled towards faint letters' edges).
    let ground = (0..256).max_by_key(|&v| hist[v as usize]).unwrap_or(0);
    let near: usize = ((ground - CARD_LEVELS).max(0)..=(ground + CARD_LEVELS).min(255))
        .map(|v| hist[v as usize])
        .sum();
    if (near as f64) < CARD_SHARE * (w * h) as f64 {
        return None;
    }
    let ink = Plane::from_fn(w, h, |x, y| {
        (luma.get(x, y) as i32 - ground).abs() > CARD_INK
    });
    // Pieces within (gx, gy) of each other are one group: the groups of
    // the ink grown by that much, each one's box taken from its ink.
    let (gx, gy) = ((w / 60).max(1), (h / 90).max(1));
    let across = Plane::from_fn(w, h, |x, y| {
        (x.saturating_sub(gx)..(x + gx + 1).min(w)).any(|xx| ink.get(xx, y))
    });
    let grown = Plane::from_fn(w, h, |x, y| {
        (y.saturating_sub(gy)..(y + gy + 1).min(h)).any(|yy| across.get(x, yy))
    });
    let boxes = components(&grown)
        .into_iter()
        .filter_map(|(r, _)| {
            let mut inked = (0..r.h)
                .flat_map(|dy| (0..r.w).map(move |dx| (r.x + dx, r.y + dy)))
                .filter(|&(x, y)| ink.get(x, y));
            let first = inked.next()?;
            let (mut lo, mut hi, mut count) = (first, first, 1);
            for (x, y) in inked {
                (lo, hi, count) = (
                    (lo.0.min(x), lo.1.min(y)),
                    (hi.0.max(x), hi.1.max(y)),
                    count + 1,
                );
            }
            // A speck of noise is nothing shown.
            (count >= 4).then(|| Rect::new(lo.0, lo.1, hi.0 - lo.0 + 1, hi.1 - lo.1 + 1))
        })
        .collect();
    Some(boxes)
}

/// How many pixels of `luma` have each level.
pub fn luma_histogram(luma: &Plane<u8>) -> [usize; 256] {
    let mut hist = [0usize; 256];
    for y in 0..luma.height() {
        for &v in luma.row(y) {
            hist[v as usize] += 1;
        }
    }
    hist
}

/// Text blocks of `luma` at its own scale only, without the pass for large
/// titles: small print, looked for on a picture finer than the thumbnail.
pub fn small_text_blocks(luma: &Plane<u8>) -> Vec<Rect> {
    blocks_at(luma, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A picture with strokes standing for letters: `n` dark strokes 10
    /// high, of widths 3 to 6 (letters differ), 3 apart, from (x, y), on a
    /// light ground.
    fn word(w: usize, h: usize, x: usize, y: usize, n: usize) -> Plane<u8> {
        let mut spans = Vec::new();
        let mut at = x;
        for i in 0..n {
            let lw = 3 + (i * 7) % 4;
            spans.push((at, at + lw));
            at += lw + 3;
        }
        // Each letter an outline, one pixel thick (as an O or a D).
        Plane::from_fn(w, h, |px, py| {
            let ink = py >= y
                && py < y + 10
                && spans.iter().any(|&(a, b)| {
                    (a..b).contains(&px) && (px == a || px == b - 1 || py == y || py == y + 9)
                });
            if ink { 30 } else { 220 }
        })
    }

    /// A title card (a white ground) with a logo, a solid dark box holding
    /// white letters that no letter test takes for text, beside a line of
    /// letters, and a line of small print below: the logo and its line are
    /// one group, the small print another. A picture without a plain
    /// ground (a scene) is no card, and neither is a darker copy of the
    /// card whose ground is shaded from side to side.
    #[test]
    fn a_title_cards_logo_and_words_are_what_it_shows() {
        let (w, h) = (427, 240);
        let words = word(w, h, 150, 100, 12);
        let card = Plane::from_fn(w, h, |x, y| {
            let in_logo = (90..140).contains(&x) && (96..114).contains(&y);
            if in_logo {
                let letter = (95..135).contains(&x) && (100..110).contains(&y) && x % 6 < 2;
                if letter { 250 } else { 70 }
            } else if (200..230).contains(&x) && (200..204).contains(&y) {
                40
            } else if words.get(x, y) == 30 {
                30
            } else {
                250
            }
        });
        assert!(
            !text_blocks(&card)
                .iter()
                .any(|b| b.x <= 90 && b.right() >= 140),
            "the letter tests take the logo for text: the test shows nothing"
        );
        let mut found =
            card_blocks(&card, &luma_histogram(&card)).expect("a white ground is a card");
        found.sort_by_key(|r| r.y);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found[0].x <= 90 && found[0].right() >= 200,
            "{:?}",
            found[0]
        );
        assert!(
            found[0].y <= 96 && found[0].bottom() >= 114,
            "{:?}",
            found[0]
        );
        assert_eq!(found[1], Rect::new(200, 200, 30, 4));
        let scene = Plane::from_fn(w, h, |x, y| ((x * 37 + y * 91) % 97 + (x / 20) * 5) as u8);
        assert!(card_blocks(&scene, &luma_histogram(&scene)).is_none());
        let shaded = Plane::from_fn(w, h, |x, y| {
            (card.get(x, y) as usize * (200 + x / 8) / 260).min(255) as u8
        });
        assert!(card_blocks(&shaded, &luma_histogram(&shaded)).is_none());
    }

    #[test]
    fn a_line_of_letters_is_text_and_a_lone_mark_is_not() {
        let p = word(200, 80, 40, 30, 8);
        let found = text_blocks(&p);
        assert_eq!(found.len(), 1, "{found:?}");
        let r = found[0];
        assert!(r.x <= 40 && r.right() >= 90, "{r:?}");
        assert!(r.y <= 30 && r.bottom() >= 40, "{r:?}");
        // Two marks are not a line.
        assert!(text_blocks(&word(200, 80, 40, 30, 2)).is_empty());
        // Nor is a flat or a noisy picture.
        assert!(text_blocks(&Plane::new(200, 80, 90u8)).is_empty());
        let noise = crate::ops::retarget::tests::noise(200, 80, 9);
        assert!(text_blocks(&noise).is_empty(), "{:?}", text_blocks(&noise));
    }

    #[test]
    fn thin_grey_letters_shrunk_to_the_thumbnail_are_text() {
        // Grey letters on white, shrunk by three (promo's "Everything you
        // love, now on your TV."): a stroke's middle keeps the ink's level,
        // its edges mix with the ground, so a letter's levels spread (their
        // standard deviation) by 29 to 32; here an outline's sides are the
        // middle, its top and bottom the mix.
        let p = word(200, 80, 40, 30, 8).map(|v| if v == 30 { 140 } else { 250 });
        let p = Plane::from_fn(200, 80, |x, y| {
            let v = p.get(x, y);
            let edge = y == 30 || y == 39;
            if v == 140 && edge { 205 } else { v }
        });
        let found = text_blocks(&p);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].x <= 40 && found[0].right() >= 90, "{found:?}");
    }

    #[test]
    fn local_means_are_the_means_of_the_clipped_neighbourhoods() {
        for (w, h, seed) in [
            (40, 30, 1),
            (9, 23, 2),
            (15, 15, 3),
            (3, 2, 4),
            (100, 16, 5),
        ] {
            let p = crate::ops::retarget::tests::noise(w, h, seed);
            let r = MEAN_RADIUS;
            let slow = Plane::from_fn(w, h, |x, y| {
                let (xs, ys) = (
                    x.saturating_sub(r)..(x + r + 1).min(w),
                    y.saturating_sub(r)..(y + r + 1).min(h),
                );
                let n = (xs.len() * ys.len()) as u32;
                let s: u32 = ys
                    .flat_map(|yy| xs.clone().map(move |xx| (xx, yy)))
                    .map(|(xx, yy)| p.get(xx, yy) as u32)
                    .sum();
                ((s + n / 2) / n) as u8
            });
            assert_eq!(local_mean::<MEAN_RADIUS>(&p), slow, "{w}x{h}");
        }
    }

    #[test]
    fn pieces_by_runs_are_the_pieces_by_flood_in_the_same_order() {
        // Noise of several grains and sizes (awkward widths), and letters.
        let mut pictures: Vec<Plane<u8>> = [(37, 19, 1), (200, 80, 2), (97, 131, 3), (9, 300, 4)]
            .into_iter()
            .map(|(w, h, seed)| crate::ops::retarget::tests::noise(w, h, seed))
            .collect();
        let grain = crate::ops::retarget::tests::noise(60, 40, 5);
        pictures.push(Plane::from_fn(240, 160, |x, y| grain.get(x / 4, y / 4)));
        pictures.push(word(200, 80, 40, 30, 8));
        for p in &pictures {
            let mean = local_mean::<MEAN_RADIUS>(p);
            for bright in [true, false] {
                let ink = Plane::from_fn(p.width(), p.height(), |x, y| {
                    is_ink(p.get(x, y), mean.get(x, y), bright)
                });
                let (mut runs, mut flood) = (Vec::new(), Vec::new());
                let inked = pieces(p, &mean, bright, &mut runs);
                pieces_by_flood(p, &ink, bright, &mut flood);
                assert_eq!(runs, flood, "{}x{}, bright {bright}", p.width(), p.height());
                assert_eq!(inked, ink, "{}x{}, bright {bright}", p.width(), p.height());
            }
        }
        // The test must see pieces to compare.
        let mut some = Vec::new();
        let p = &pictures[4];
        pieces(p, &local_mean::<MEAN_RADIUS>(p), false, &mut some);
        assert!(!some.is_empty());
    }

    #[test]
    fn large_letters_are_found_at_a_third_of_the_size() {
        // Two lines of seven letters 45 high and 15 to 24 wide (strokes of
        // a title), painted in one colour: too large for the 15×15 mean.
        let letter = |x: usize| {
            let mut at = 21;
            for i in 0..7 {
                let lw = 15 + 3 * ((i * 5) % 4);
                if (at..at + lw).contains(&x) {
                    return true;
                }
                at += lw + 15;
            }
            false
        };
        let p = Plane::from_fn(480, 270, |x, y| {
            let inside = ((30..75).contains(&y) || (90..135).contains(&y)) && letter(x);
            if inside { 240 } else { 20 }
        });
        let found = text_blocks(&p);
        assert_eq!(found.len(), 1, "{found:?}");
        // Most of the title (its letters' box means differ at the edges).
        assert!(found[0].w >= 200, "{found:?}");
        assert!(found[0].y <= 32 && found[0].bottom() >= 130, "{found:?}");
    }

    #[test]
    fn painted_letters_that_reach_the_edge_are_no_title() {
        // Large letters painted in one colour (as in the test above), in
        // rows, from `x0` to `x1`: a title when it keeps clear of the
        // picture's edges, leaves or petals of one shade when it runs off
        // them.
        let painted = |x0: usize, x1: usize, rows: &[std::ops::Range<usize>]| {
            let mut columns = vec![false; 480];
            let (mut at, mut i) = (x0, 0);
            while at < x1 {
                let lw = 15 + 3 * ((i * 5) % 4);
                for c in &mut columns[at..(at + lw).min(x1)] {
                    *c = true;
                }
                at += lw + 15;
                i += 1;
            }
            Plane::from_fn(480, 270, |x, y| {
                let inside = columns[x] && rows.iter().any(|r| r.contains(&y));
                if inside { 240 } else { 20 }
            })
        };
        let two = [30..75, 90..135];
        // Clear of the edges: a title.
        let clear = painted(21, 300, &two);
        assert_eq!(text_blocks(&clear).len(), 1, "{:?}", text_blocks(&clear));
        // The same rows from the left edge to the right.
        let across = painted(0, 480, &two);
        assert!(
            text_blocks(&across).is_empty(),
            "{:?}",
            text_blocks(&across)
        );
        // Rows down to the bottom edge, clear of the sides.
        let down = painted(21, 300, &[30..75, 90..135, 150..195, 210..255, 256..270]);
        assert!(text_blocks(&down).is_empty(), "{:?}", text_blocks(&down));
    }
}
