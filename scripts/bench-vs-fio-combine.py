#!/usr/bin/env python3
"""Combine several kept runs of scripts/bench-vs-fio.sh into one paired IOPS ratio per line.

    bench-vs-fio-combine.py DIR...

Each DIR is what `BENCH_KEEP=DIR scripts/bench-vs-fio.sh` kept: NAME.iolab.R.json and
NAME.fio.R.json (and NAME.fio2.R.json with BENCH_CONTROL=1) for every line NAME and round R.
One run of 10 rounds gives a paired ratio whose 95 % interval on this VM is often ±5-8 %,
wider than the differences the targets are about; the rounds of several runs together give
a narrower one. Every round is one pair (the two tools back to back), so the rounds of all
runs are pooled as pairs. Because a run's conditions (the host's load, the day) may shift
its ratio as a whole, the script also gives the interval over the runs' own geometric means
(one value per run: wider, but honest when runs differ more than rounds do) and says which
of the two is the wider; read that one.

For each line: the rounds and runs used, the pooled geometric mean of iolab / fio with its
95 % interval, the interval over the runs, the same for fio's second run against its first
(the A/A control, where present), and each run's own geometric mean. Then the pooled p99 and
p99.9 of all rounds of all runs, iolab / fio, with the report's bootstrap interval (rounds
resampled in pairs) and its verdict against the ±10 % target.
"""
import importlib.util
import glob
import json
import math
import os
import re
import statistics as st
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ratio_ci import paired_ci, pooled_ratio_ci, t975, within  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "bench_report", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "bench-vs-fio-report.py"))
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)
TAIL_TOL = 0.10


def iops(path):
    with open(path) as f:
        j = json.load(f)
    if "jobs" in j:  # fio
        job = j["jobs"][0]
        d = job["read"] if job["read"]["io_bytes"] else job["write"]
        return float(d["iops"])
    return float(j["tests"][0]["runs"][0]["iops"])


def rounds(d, name, other):
    """[(iolab-or-fio2 IOPS, fio IOPS)] for every round of `name` in run dir `d`."""
    out = []
    for p in sorted(glob.glob(os.path.join(d, f"{name}.fio.*.json"))):
        r = re.search(r"\.fio\.(\d+)\.json$", p).group(1)
        q = os.path.join(d, f"{name}.{other}.{r}.json")
        if os.path.exists(q):
            out.append((iops(q), iops(p)))
    return out


def over_runs(per_run):
    """Geometric mean over the runs' own geometric means, with a t interval over runs."""
    logs = [math.log(g) for g in per_run]
    if len(logs) < 2:
        return float("nan"), float("nan"), float("nan")
    m, s = st.mean(logs), st.stdev(logs)
    h = t975(len(logs) - 1) * s / math.sqrt(len(logs))
    return math.exp(m), math.exp(m - h), math.exp(m + h)


def round_numbers(d, name):
    return sorted(int(re.search(r"\.fio\.(\d+)\.json$", p).group(1))
                  for p in glob.glob(os.path.join(d, f"{name}.fio.*.json")))


def hists(dirs, name, other):
    """Per-round latency histograms of `other` (iolab or fio2) and of fio, over all runs,
    paired by round."""
    a, b = [], []
    for d in dirs:
        n = len(round_numbers(d, name))
        if n == 0 or not os.path.exists(os.path.join(d, f"{name}.{other}.1.json")):
            continue
        if other == "iolab":
            a += report.load_iolab(d, name, n)[2]
        else:
            a += report.load_fio(d, name, n, other)[2]
        b += report.load_fio(d, name, n)[2]
    return a, b


def line(name, dirs, other):
    per_run, ratios = [], []
    for d in dirs:
        rs = [a / b for a, b in rounds(d, name, other) if a > 0 and b > 0]
        if rs:
            per_run.append(paired_ci(rs)[0])
            ratios += rs
    if not ratios:
        return None
    g, lo, hi, verdict = paired_ci(ratios)
    _, rlo, rhi = over_runs(per_run)
    return len(ratios), per_run, (g, lo, hi, verdict), (rlo, rhi)


def main():
    dirs = sys.argv[1:]
    if not dirs or not all(os.path.isdir(d) for d in dirs):
        sys.exit(__doc__)
    names = sorted({
        re.sub(r"\.fio\.\d+\.json$", "", os.path.basename(p))
        for d in dirs for p in glob.glob(os.path.join(d, "*.fio.*.json"))
    })
    for other, title in (("iolab", "iolab / fio"), ("fio2", "A/A control: fio #2 / fio")):
        rows = [(n, line(n, dirs, other)) for n in names]
        rows = [(n, r) for n, r in rows if r]
        if not rows:
            continue
        print(f"{title}, {len(dirs)} runs pooled (rounds as pairs):")
        print(f"{'test':<22} {'rounds':>6}  {'pooled geo-mean [95 % CI]':<34} "
              f"{'over runs':<15} per run")
        for n, (k, per_run, (g, lo, hi, v), (rlo, rhi)) in rows:
            runs = "  ".join(f"{x:.3f}" for x in per_run)
            wider = " (wider: read this)" if (rhi - rlo) > (hi - lo) else ""
            print(f"{n:<22} {k:>6}  {g:.3f} [{lo:.3f}-{hi:.3f}] {v:<8}     "
                  f"[{rlo:.3f}-{rhi:.3f}]{wider:<20} {runs}")
        print()
        print(f"Pooled tails, {title}, all rounds of all runs (95 % bootstrap over rounds in "
              "pairs; 'within' = the whole interval inside ±10 %):")
        print(f"{'test':<22} {'pooled p99 [95 % CI]':<28} pooled p99.9 [95 % CI]")
        for n, _ in rows:
            a, b = hists(dirs, n, other)
            if not a:
                continue
            cells = []
            for q in (0.99, 0.999):
                r, lo, hi = pooled_ratio_ci(a, b, q)
                cells.append(f"{r:.2f} [{lo:.2f}-{hi:.2f}] {within(lo, hi, TAIL_TOL)}")
            print(f"{n:<22} {cells[0]:<28} {cells[1]}")
        print()
    print("(paired = each round's IOPS ratio, the two runs back to back; geo-mean with a "
          "Student t interval on the log ratios: 'faster'/'slower' when it excludes 1; "
          "'over runs' = the same interval over the runs' own geometric means, one value "
          "per run)")


if __name__ == "__main__":
    main()
