#!/usr/bin/env python3
"""How long the workers of a job split in time take to start: the time from
starting `seamstream run CLIP null --segment K/N` to its first frame out,
for the N segments started together (as `run --workers N` starts them), and
the two parts of it that the planning reports (`segment K/N: ... frames
counted in X s, cuts looked for in Y s` in builds before 2026-11-27's stop
41; a chain without memory, or a later build, looks for none before it
starts). Each worker is stopped (Ctrl-C)
once its first frame is out. Prints a Markdown table of the medians over
the runs, per segment, and the slowest worker's.

    python3 bench/worker_start.py CLIP [--workers 4] [--runs 5]
        [--op gaussian:sigma=2] [--device cpu] [--bin target/release/seamstream]
        [-- EXTRA RUN ARGS]
"""

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

# Builds before stop 41 looked for cuts before the part ("cuts looked for
# in Y s"); since, a part finds them in its own frames (0 here).
PLAN = re.compile(r"segment (\d+)/\d+: .*frames counted in ([\d.]+) s[,;] "
                  r"(?:cuts looked for in ([\d.]+) s)?")


def start_workers(args, extra):
    """Starts the N workers together; returns, per segment, the seconds to
    the first frame and the planning's two figures."""
    env = dict(os.environ, SEAMSTREAM_PROGRESS_LINES="1")
    procs, firsts, started = [], [None] * args.workers, time.monotonic()
    for k in range(args.workers):
        cmd = [args.bin, "run", args.clip, "null", "--segment", f"{k}/{args.workers}",
               "--op", args.op, "--device", args.device, *extra]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, env=env))

    def watch(k, p):
        for line in p.stdout:
            if line.startswith("frames "):
                firsts[k] = time.monotonic() - started
                p.send_signal(signal.SIGINT)
                break
        p.stdout.read()

    threads = [threading.Thread(target=watch, args=(k, p)) for k, p in enumerate(procs)]
    for t in threads:
        t.start()
    plans = [None] * args.workers
    for k, p in enumerate(procs):
        err = p.stderr.read()
        p.wait()
        m = PLAN.search(err)
        if m is None or firsts[k] is None and p.returncode not in (0, 130):
            sys.exit(f"segment {k}/{args.workers} failed:\n{err}")
        plans[k] = (float(m.group(2)), float(m.group(3) or 0))
    for t in threads:
        t.join()
    return [(firsts[k], *plans[k]) for k in range(args.workers)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("clip")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--op", default="gaussian:sigma=2")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--bin", default="target/release/seamstream")
    args, extra = ap.parse_known_args()
    extra = [a for a in extra if a != "--"]
    runs = [start_workers(args, extra) for _ in range(args.runs)]
    med = lambda xs: statistics.median(xs)
    print(f"{args.workers} workers started together, {args.runs} runs, medians (s):\n")
    print("| segment | first frame | frames counted | cuts looked for | the rest |")
    print("|---|---|---|---|---|")
    for k in range(args.workers):
        first = med([r[k][0] for r in runs])
        count = med([r[k][1] for r in runs])
        cuts = med([r[k][2] for r in runs])
        print(f"| {k}/{args.workers} | {first:.2f} | {count:.2f} | {cuts:.2f} | {first - count - cuts:.2f} |")
    slowest = med([max(w[0] for w in r) for r in runs])
    print(f"| slowest | {slowest:.2f} | | | |")


if __name__ == "__main__":
    main()
