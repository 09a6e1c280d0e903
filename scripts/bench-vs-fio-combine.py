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
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ratio_ci import paired_ci, pooled_ratio_ci, within  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "bench_report", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "bench-vs-fio-report.py"))
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)
TAIL_TOL = report.TAIL_TOL  # the ±10 % target, as in the report


def round_count(d, name):
    return len(glob.glob(os.path.join(d, f"{name}.fio.*.json")))


def load(dirs, name, other):
    """Per run, the rounds of `other` (iolab or fio2) and of fio on line `name`: (IOPS ratios,
    latency histograms of `other`, latency histograms of fio), through the report's loaders."""
    runs = []
    for d in dirs:
        n = round_count(d, name)
        if n == 0 or not os.path.exists(os.path.join(d, f"{name}.{other}.1.json")):
            continue
        if other == "iolab":
            per_a, _, ha = report.load_iolab(d, name, n)
        else:
            per_a, _, ha = report.load_fio(d, name, n, other)
        per_b, _, hb = report.load_fio(d, name, n)
        ratios = [a[0] / b[0] for a, b in zip(per_a, per_b) if a[0] > 0 and b[0] > 0]
        runs.append((ratios, ha, hb))
    return runs


def main():
    dirs = sys.argv[1:]
    if not dirs or not all(os.path.isdir(d) for d in dirs):
        sys.exit(__doc__)
    names = sorted({
        re.sub(r"\.fio\.\d+\.json$", "", os.path.basename(p))
        for d in dirs for p in glob.glob(os.path.join(d, "*.fio.*.json"))
    })
    for other, title in (("iolab", "iolab / fio"), ("fio2", "A/A control: fio #2 / fio")):
        rows = [(n, load(dirs, n, other)) for n in names]
        rows = [(n, runs) for n, runs in rows if runs]
        if not rows:
            continue
        print(f"{title}, {len(dirs)} runs pooled (rounds as pairs):")
        print(f"{'test':<22} {'rounds':>6}  {'pooled geo-mean [95 % CI]':<34} "
              f"{'over runs':<15} per run")
        for n, runs in rows:
            ratios = [r for rs, _, _ in runs for r in rs]
            per_run = [paired_ci(rs)[0] for rs, _, _ in runs]
            g, lo, hi, v = paired_ci(ratios)
            # The interval over the runs: the runs' own geometric means as the samples.
            _, rlo, rhi, _ = paired_ci(per_run)
            wider = " (wider: read this)" if (rhi - rlo) > (hi - lo) else ""
            print(f"{n:<22} {len(ratios):>6}  {g:.3f} [{lo:.3f}-{hi:.3f}] {v:<8}     "
                  f"[{rlo:.3f}-{rhi:.3f}]{wider:<20} " + "  ".join(f"{x:.3f}" for x in per_run))
        print()
        print(f"Pooled tails, {title}, all rounds of all runs (95 % bootstrap over rounds in "
              "pairs; 'within' = the whole interval inside ±10 %):")
        print(f"{'test':<22} {'pooled p99 [95 % CI]':<28} pooled p99.9 [95 % CI]")
        for n, runs in rows:
            a = [h for _, ha, _ in runs for h in ha]
            b = [h for _, _, hb in runs for h in hb]
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
