#!/usr/bin/env python3
"""Markdown tables from bench/reframe-quality.sh's JSON files.

    python3 bench/reframe_table.py DIR
"""
import json
import pathlib
import sys


def ratio(x):
    return "—" if x is None else f"{x:.2f}"


def main(d):
    rows = {}
    for f in sorted(pathlib.Path(d).glob("*.json")):
        if f.name.endswith(".path.json"):
            continue
        try:
            q = json.loads(f.read_text())
        except ValueError:
            print(f"<!-- {f.name}: no figures (see its .log) -->")
            continue
        clip, aspect = f.stem.rsplit("-", 1)
        rows.setdefault(aspect.replace("x", ":"), []).append((clip, q))
    for aspect, qs in rows.items():
        print(f"\n### 16:9 (or the clip's shape) → {aspect}\n")
        print("| clip | out | subjects kept: reframe / scaled / centre crop | "
              "BDS ÷ scaling | BDS ÷ best crop | flicker ÷ scaling | "
              "flicker ÷ centre crop | largest jump (% width) | shots: crop/carve/pad frames |")
        print("|---|---|---|---|---|---|---|---|---|")
        for clip, q in qs:
            s, fl, p = q["similarity"], q["flicker"], q.get("path") or {}
            sub = q.get("subjects")
            kept = "—"
            if sub:
                k = sub["kept"]
                kept = (f"{k['result']:.0%} / {k['scaled']:.0%} / {k['centre_crop']:.0%}"
                        f" of {sub['total']}")
            best = (s.get("best_crop") or {}).get("ratio")
            jump = (p.get("max_jump") or {}).get("percent_of_width")
            m = p.get("modes") or {}
            modes = f"{p.get('shots', '?')} shots: {m.get('crop', 0)}/{m.get('carve', 0)}/{m.get('pad', 0)}"
            print(f"| {clip} | {q['size'][0]}×{q['size'][1]} | {kept} | {ratio(s['ratio'])} | "
                  f"{ratio(best)} | {ratio(fl['ratio'])} | {ratio(fl.get('centre_ratio'))} | "
                  f"{ratio(jump)} | {modes} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "reframe-out")
