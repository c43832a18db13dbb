"""How much of the seam DP's cumulative cost changes from one exact seam to
the next, on real frames: the room an incremental DP (recompute only what the
last removal changed) would have. Backward energy (|dx| + |dy| of luma),
M(r, c) = e(r, c) + min(M(r−1, c−1..c+1)), seams removed one at a time; after
each removal the new M is compared with the old one, with the columns right
of the removed pixel shifted left, and the changed columns of each row
counted (and the span from the first changed column to the last).
usage: python3 bench/seam_dirty.py FRAME.pgm... [--seams 20] [--energy forward]
"""
import argparse
import numpy as np


def energy(l):
    l = l.astype(np.int32)
    dx = np.abs(np.diff(l, axis=1, append=l[:, -1:]))
    dy = np.abs(np.diff(l, axis=0, append=l[-1:, :]))
    return dx + dy


def cumulative(e):
    h, w = e.shape
    m = np.empty_like(e, dtype=np.int64)
    m[0] = e[0]
    big = np.iinfo(np.int64).max // 4
    for r in range(1, h):
        p = m[r - 1]
        left = np.concatenate(([big], p[:-1]))
        right = np.concatenate((p[1:], [big]))
        m[r] = e[r] + np.minimum(np.minimum(left, p), right)
    return m


def cumulative_forward(l):
    """Forward energy (Rubinstein et al.): the cost of the edges a removal
    creates, M(r, c) = min(M(r−1, c−1) + CL, M(r−1, c) + CU, M(r−1, c+1) + CR)."""
    l = l.astype(np.int64)
    h, w = l.shape
    left = np.concatenate((l[:, :1], l[:, :-1]), axis=1)
    right = np.concatenate((l[:, 1:], l[:, -1:]), axis=1)
    up = np.concatenate((l[:1], l[:-1]), axis=0)
    cu = np.abs(right - left)
    cl = cu + np.abs(up - left)
    cr = cu + np.abs(up - right)
    m = np.empty((h, w), np.int64)
    m[0] = cu[0]
    big = np.iinfo(np.int64).max // 4
    for r in range(1, h):
        p = m[r - 1]
        pl = np.concatenate(([big], p[:-1]))
        pr = np.concatenate((p[1:], [big]))
        m[r] = np.minimum(np.minimum(pl + cl[r], p + cu[r]), pr + cr[r])
    return m


def seam(m):
    h, w = m.shape
    s = np.empty(h, dtype=np.int64)
    s[-1] = int(np.argmin(m[-1]))
    for r in range(h - 2, -1, -1):
        c = s[r + 1]
        lo, hi = max(c - 1, 0), min(c + 2, w)
        s[r] = lo + int(np.argmin(m[r, lo:hi]))
    return s


def remove(a, s):
    h, w = a.shape
    keep = np.ones((h, w), bool)
    keep[np.arange(h), s] = False
    return a[keep].reshape(h, w - 1)


ap = argparse.ArgumentParser()
ap.add_argument("frames", nargs="+")
ap.add_argument("--seams", type=int, default=20)
ap.add_argument("--energy", choices=["backward", "forward"], default="backward")
a = ap.parse_args()
full = (lambda l: cumulative(energy(l))) if a.energy == "backward" else cumulative_forward
for path in a.frames:
    luma = np.frombuffer(open(path, "rb").read()[-1920 * 1080:], np.uint8).reshape(1080, 1920)
    m = full(luma)
    changed, spans, first_rows = [], [], []
    for k in range(a.seams):
        s = seam(m)
        luma = remove(luma, s)
        m_new = full(luma)
        diff = remove(m, s) != m_new
        per_row = diff.sum(axis=1)
        cols = [np.flatnonzero(d) for d in diff]
        span = np.array([c[-1] - c[0] + 1 if len(c) else 0 for c in cols])
        changed.append(diff.mean())
        spans.append(span.mean() / m_new.shape[1])
        rows = np.flatnonzero(per_row)
        first_rows.append(rows[0] if len(rows) else -1)
        m = m_new
    name = path.rsplit("/", 1)[-1]
    print(f"{name}: {a.seams} seams, {a.energy} energy; cells of M changed {100 * np.mean(changed):.1f}% "
          f"(max {100 * np.max(changed):.1f}%); a row's changed span {100 * np.mean(spans):.1f}% "
          f"of the width on average (max {100 * np.max(spans):.1f}%)")
