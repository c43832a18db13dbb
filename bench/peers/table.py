"""The three-way table: ours, CV-CUDA and NPP, one run on one machine, as
markdown on stdout.

usage: python3 table.py ours.json cvcuda.json npp.json ours-cupti.tsv

Each peer is compared with ours measured its way:
- NPP: µs per call, the median over graph-replayed batches of 8 calls
  rotating over 4 input/output sets (npp_side.cu), against ours timed the
  same way (`seamstream bench ops --json`);
- CV-CUDA: the CUDA kernels a call launches, summed by CUPTI and divided by
  the calls (cvcuda_side.py; CV-CUDA's calls cannot be captured into a
  graph), against our kernels summed the same way (kernel_times.cpp injected
  into `seamstream bench ops`, one process a case: ours-cupti.tsv, tagged
  "label|WxH|calls").
"ours ÷ best peer" is the larger of the two ratios. A peer with several
calls for one case (NPP's two thresholds) counts with its fastest.
"""
import collections
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


ours_doc, cv_doc, npp_doc = (load(p) for p in sys.argv[1:4])
ours = {(r["op"], r["width"], r["height"]): r["median_us"] for r in ours_doc["ops"]}

ours_cupti = collections.defaultdict(float)
kernels = collections.defaultdict(list)
with open(sys.argv[4]) as f:
    for line in f:
        parts = line.rstrip("\n").split("\t")
        if len(parts) != 5:
            continue
        tag, name, launches, total_ns, _median = parts
        label, size, calls = tag.split("|")
        w, h = (int(v) for v in size.split("x"))
        ours_cupti[label, w, h] += int(total_ns) / int(calls) / 1000
        kernels[label, w, h].append(f"{name} ×{launches}")


def best(doc, field):
    out = {}
    for r in doc["rows"]:
        us = r.get(field)
        if us is None or (field == "median_us" and r.get("method") != "graph"):
            continue
        key = (r["op"], r["width"], r["height"])
        out[key] = min(us, out.get(key, us))
    return out


cv = best(cv_doc, "cupti_us")
npp = best(npp_doc, "median_us")


def ours_cupti_for(label, w, h):
    # The CUPTI runs filter by a prefix of the label ("warp affine").
    for (l, cw, ch), us in ours_cupti.items():
        if (cw, ch) == (w, h) and (l == label or label.startswith(l + " ")):
            return us
    return None


sizes = [(1920, 1080), (3840, 2160)]
print(f"Ours: {ours_doc.get('device', '?')}; {cv_doc.get('peer', '?')} (torch {cv_doc.get('torch', '?')}); "
      f"{npp_doc.get('peer', '?')}.\n")
print("| op | size | ours µs (graph) | NPP µs (graph) | ours µs (CUPTI) | CV-CUDA µs (CUPTI) | ours ÷ NPP | ours ÷ CV-CUDA | ours ÷ best peer |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
behind = []
seen = []
for r in ours_doc["ops"]:
    if r["op"] not in seen:
        seen.append(r["op"])
for label in seen:
    for w, h in sizes:
        key = (label, w, h)
        og, oc = ours.get(key), ours_cupti_for(label, w, h)
        n, c = npp.get(key), cv.get(key)
        ratios = []
        if og is not None and n:
            ratios.append(og / n)
        if oc is not None and c:
            ratios.append(oc / c)
        if not ratios:
            continue
        worst = max(ratios)
        if worst > 0.95:
            behind.append((worst, label, w, h))
        fmt = lambda v: "—" if v is None else f"{v:.1f}"
        rn = f"{og / n:.2f}" if og is not None and n else "—"
        rc = f"{oc / c:.2f}" if oc is not None and c else "—"
        cell = f"**{worst:.2f}**" if worst > 0.95 else f"{worst:.2f}"
        print(f"| {label} | {w}x{h} | {fmt(og)} | {fmt(n)} | {fmt(oc)} | {fmt(c)} | {rn} | {rc} | {cell} |")
print()
if behind:
    print("Above 0.95: " + "; ".join(f"{l} {w}x{h} {r:.2f}" for r, l, w, h in sorted(behind, reverse=True)) + ".")
else:
    print("Every cell is at or below 0.95.")
print()
print("Our kernels under CUPTI, a case: " + "; ".join(
    f"{l} {w}x{h}: {', '.join(k)}" for (l, w, h), k in sorted(kernels.items())) + ".")
