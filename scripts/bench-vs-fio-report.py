#!/usr/bin/env python3
"""Report for scripts/bench-vs-fio.sh: iolab / fio ratios from the JSON of every round.

    bench-vs-fio-report.py RESULTS_DIR ROUNDS LINE...

RESULTS_DIR holds NAME.iolab.R.json (`iolab run --json`) and NAME.fio.R.json (`fio
--output-format=json+`) for R = 1..ROUNDS; each LINE starts with NAME followed by '|'.
Where NAME.fio2.R.json exist too (BENCH_CONTROL=1), fio's second run of each round is also
compared with its first: the A/A control, the resolution of the benchmark itself.

Two views of the latency percentiles:
- the median over the rounds of each round's percentile (what one run shows), and
- the percentile of the pooled samples of all rounds: iolab's exact HDR histograms (the
  `lat_hist` field, V2 serialization) added up, fio's json+ latency bins added up. A 99.9th
  percentile of one 5 s run rests on a few hundred samples and on whatever the VM did in those
  seconds; the pooled one rests on every round's.

Where NAME.TOOL.R.idle exist (two lines of `CPU:COUNT ...`, the CPUs' idle-state entries
before and after the run), it also gives each tool's idle-state entries (halts, on a VM) per
I/O, on the tools' CPU (BENCH_CPU) and on the others: the entries over a window in the
steady middle of the run (its length is the file's third line) divided by IOPS x that
window (without a third line: over the whole run, IOPS x (BENCH_SECS + the 0.5 s ramp)).
Where fio's
time per I/O goes with its halts per I/O (QD1 on a VM), a line fitted over fio's runs says
what each halt costs and whether iolab is faster or slower than fio at the same number of
halts.
"""
import base64
import json
import math
import os
import statistics as st
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ratio_ci import paired_ci, pooled_ratio_ci, quantile, t975, within  # noqa: E402


def hdr_decode(b64):
    """iolab's `lat_hist`: HdrHistogram V2 serialization (uncompressed), base64.
    Returns {highest equivalent value of a bucket in ns: count}."""
    raw = base64.b64decode(b64)
    cookie, plen, _norm, sig, low, _high, _ratio = struct.unpack(">IIIIqqd", raw[:40])
    if cookie & ~0xF0 != 0x1C849303:
        raise ValueError(f"not a V2 HdrHistogram (cookie {cookie:#x})")
    payload = raw[40 : 40 + plen]
    sub = 1 << math.ceil(math.log2(2 * 10**sig))
    half = sub // 2
    half_mag = half.bit_length() - 1
    unit = low.bit_length() - 1

    def value(index):
        bucket = (index >> half_mag) - 1
        sub_index = (index & (half - 1)) + half
        if bucket < 0:
            sub_index -= half
            bucket = 0
        shift = bucket + unit
        return (sub_index << shift) + (1 << shift) - 1

    counts, i, index = {}, 0, 0
    while i < len(payload):
        # ZigZag LEB128 with at most 9 bytes (the 9th carries 8 bits); negative = run of zeros.
        v = shift = 0
        for k in range(9):
            byte = payload[i]
            i += 1
            if k == 8:
                v |= byte << 56
                break
            v |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        v = (v >> 1) ^ -(v & 1)
        if v < 0:
            index += -v
        else:
            if v:
                counts[value(index)] = v
            index += 1
    return counts


def add(into, hist):
    for v, c in hist.items():
        into[v] = into.get(v, 0) + c


def load_iolab(res, name, rounds):
    """Per round (IOPS, mean, p99, p99.9), the pooled histogram of iolab's runs and each
    round's histogram."""
    per, hist, rounds_h = [], {}, []
    for r in range(1, rounds + 1):
        i = json.load(open(f"{res}/{name}.iolab.{r}.json"))["tests"][0]["runs"][0]
        per.append((i["iops"], i["lat_ns"]["mean"], i["lat_ns"]["p99"], i["lat_ns"]["p999"]))
        rounds_h.append(hdr_decode(i["lat_hist"]))
        add(hist, rounds_h[-1])
    return per, hist, rounds_h


def load_fio(res, name, rounds, tag="fio"):
    """The same for fio's runs saved as NAME.TAG.R.json."""
    per, hist, rounds_h = [], {}, []
    for r in range(1, rounds + 1):
        f = json.load(open(f"{res}/{name}.{tag}.{r}.json"))["jobs"][0]
        fj = f["read"] if f["read"]["io_bytes"] > 0 else f["write"]
        pct = fj["lat_ns"]["percentile"]
        per.append((fj["iops"], fj["lat_ns"]["mean"], pct["99.000000"], pct["99.900000"]))
        rounds_h.append({int(k): c for k, c in fj["lat_ns"]["bins"].items()})
        add(hist, rounds_h[-1])
    return per, hist, rounds_h


RAMP_S = 0.5  # bench-vs-fio.sh's --ramp / --ramp_time


def load_halts(res, name, tag, rounds, per):
    """Per round (halts per I/O on the tools' CPU, on the other CPUs), or None when the idle
    counts are missing or all zero (no cpuidle driver)."""
    cpu, secs = os.environ.get("BENCH_CPU", "1"), float(os.environ.get("BENCH_SECS", "0"))
    if not secs:
        return None
    out = []
    for r in range(1, rounds + 1):
        try:
            lines = open(f"{res}/{name}.{tag}.{r}.idle").read().split("\n")
            before, after = lines[:2]
        except (OSError, ValueError):
            return None
        # A third line is the length of the window the counts were read over (the steady
        # middle of the run); without it, the counts span the run's whole life.
        window = float(lines[2]) if len(lines) > 2 and lines[2].strip() else secs + RAMP_S
        parse = lambda line: {c: int(n) for c, n in (x.split(":") for x in line.split())}
        b, a = parse(before), parse(after)
        d = {c: a[c] - b.get(c, 0) for c in a}
        if not any(a.values()):
            return None
        ios = per[r - 1][0] * window
        out.append((d.get(cpu, 0) / ios, sum(v for c, v in d.items() if c != cpu) / ios))
    return out


def print_halts(rows):
    print(f"{'test':22} " + " ".join(f"{t + ' ' + w:>16}" for t in ("iolab", "fio") for w in ("own CPU", "others"))
          + f" {'paired iolab/fio (all CPUs)':>30}")
    for name, hi, hf in rows:
        med = lambda xs, k: st.median(x[k] for x in xs)
        # Below one halt per thousand I/Os (a buffered file in RAM never sleeps) the ratio
        # is of a few stray wake-ups, not of the tools.
        if all(y[0] + y[1] >= 1e-3 for y in hf):
            paired = sorted((x[0] + x[1]) / (y[0] + y[1]) for x, y in zip(hi, hf))
            cell = f"{st.median(paired):>13.2f} ({paired[0]:.2f}-{paired[-1]:.2f})"
        else:
            cell = f"{'-':>13}"
        print(f"{name:22} " + " ".join(f"{med(h, k):16.3f}" for h in (hi, hf) for k in (0, 1))
              + f" {cell}")


def halt_adjusted(iolab, fios):
    """At equal halts, is either tool faster? Fits time per I/O (1 / IOPS, one job) against
    halts per I/O over fio's runs (fio and, with BENCH_CONTROL=1, fio #2): us = a + b x halts.
    Returns (correlation over fio's runs, b, a, mean residual of iolab's runs against that line in us per I/O, its 95 %
    interval, mean us per I/O of each tool), or None where the tools hardly halt, fio's
    halts hardly vary or do not go with its time per I/O (correlation under 0.5: at 1 MiB
    each I/O halts about once whatever happens, and its time is the copy's)."""
    pts = [(h[0] + h[1], 1e6 / p[0]) for per, hs in fios for p, h in zip(per, hs)]
    xs, ys = [x for x, _ in pts], [y for _, y in pts]
    if len(pts) < 3 or st.median(xs) < 0.05 or st.pstdev(xs) < 0.01 or st.pstdev(ys) == 0:
        return None
    r = st.correlation(xs, ys)
    if r < 0.5:
        return None
    b, a = st.linear_regression(xs, ys)
    per, hs = iolab
    res = [1e6 / p[0] - (a + b * (h[0] + h[1])) for p, h in zip(per, hs)]
    m, half = st.mean(res), t975(len(res) - 1) * st.stdev(res) / math.sqrt(len(res))
    return r, b, a, m, m - half, m + half, st.mean(1e6 / p[0] for p in per), st.mean(ys)


def print_adjusted(rows):
    print(f"{'test':22} {'r':>5} {'us per halt':>12} {'us at 0 halts':>14} {'iolab us/IO':>12} {'fio us/IO':>10} "
          f"{'iolab - fio line at equal halts [95 % CI]':>44}")
    for name, (r, b, a, m, lo, hi, ui, uf) in rows:
        verdict = "iolab faster" if hi < 0 else "iolab slower" if lo > 0 else "~"
        cell = f"{m:+.2f} us [{lo:+.2f} - {hi:+.2f}] {verdict}"
        print(f"{name:22} {r:5.2f} {b:12.1f} {a:14.1f} {ui:12.2f} {uf:10.2f} {cell:>44}")


def compare(name, a, b):
    """Row of ratios a / b, each (per-round tuples, pooled histogram)."""
    (ii, ih, _), (ff, fh, _) = a, b
    med = lambda xs, k: st.median(x[k] for x in xs)
    # Paired: the two runs of one round ran back to back, so their ratio is the least
    # touched by the VM's drift over minutes.
    paired = sorted(x[0] / y[0] for x, y in zip(ii, ff))
    pooled = [quantile(ih, q) / quantile(fh, q) for q in (0.99, 0.999)]
    return (name, med(ii, 0), med(ff, 0), st.median(paired), paired[0], paired[-1],
            paired_ci(paired), med(ii, 1) / med(ff, 1), med(ii, 2) / med(ff, 2),
            med(ii, 3) / med(ff, 3), *pooled)


TAIL_TOL = 0.10  # issue 2: latency percentiles within 10 % of fio's


def tails(name, a, b):
    """Pooled p99 and p99.9 ratios a / b with their 95 % bootstrap intervals over the rounds."""
    return (name, *(pooled_ratio_ci(a[2], b[2], q) for q in (0.99, 0.999)))


def print_tails(rows, a, b):
    print(f"{'test':22} {'pooled p99 [95 % CI]':>30} {'pooled p99.9 [95 % CI]':>30}")
    for name, *cis in rows:
        cells = [f"{r:.2f} [{lo:.2f}-{hi:.2f}] {within(lo, hi, TAIL_TOL)}" for r, lo, hi in cis]
        print(f"{name:22} " + " ".join(f"{c:>30}" for c in cells))


def print_rows(rows, a, b):
    print(f"{'test':22} {a + ' IOPS':>11} {b + ' IOPS':>11} {'ratio':>6} {'paired':>16} "
          f"{'geo-mean [95 % CI]':>25} "
          f"{'mean':>6} {'p99':>6} {'p99.9':>6} {'pooled p99':>11} {'pooled p99.9':>13}")
    for name, iops_a, iops_b, pm, plo, phi, ci, mean, p99, p999, pp99, pp999 in rows:
        paired = f"{pm:.2f} ({plo:.2f}-{phi:.2f})"
        g, lo, hi, verdict = ci
        ci = f"{g:.3f} [{lo:.3f}-{hi:.3f}] {verdict}"
        print(f"{name:22} {iops_a:11,.0f} {iops_b:11,.0f} {iops_a / iops_b:6.2f} {paired:>16} "
              f"{ci:>25} "
              f"{mean:6.2f} {p99:6.2f} {p999:6.2f} {pp99:11.2f} {pp999:13.2f}")


def main():
    res, rounds, lines = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    rows, spreads, control, tail_rows, tail_control, halt_rows = [], [], [], [], [], []
    adjusted = []
    for line in lines:
        name = line.split("|")[0]
        i, f = load_iolab(res, name, rounds), load_fio(res, name, rounds)
        rows.append(compare(name, i, f))
        if os.path.exists(f"{res}/{name}.fio2.1.json"):
            f2 = load_fio(res, name, rounds, "fio2")
            control.append(compare(name, f2, f))
            tail_control.append(tails(name, f2, f))
        hi, hf = load_halts(res, name, "iolab", rounds, i[0]), load_halts(res, name, "fio", rounds, f[0])
        if hi and hf:
            halt_rows.append((name, hi, hf))
            fios = [(f[0], hf)]
            if os.path.exists(f"{res}/{name}.fio2.1.json"):
                hf2 = load_halts(res, name, "fio2", rounds, f2[0])
                if hf2:
                    fios.append((f2[0], hf2))
            adj = halt_adjusted((i[0], hi), fios)
            if adj:
                adjusted.append((name, adj))
        tail_rows.append(tails(name, i, f))
        # Each tool's own round-to-round range (max / min): a gap between the tools smaller
        # than these is not a difference of the tools.
        ii, ff = i[0], f[0]
        rng = lambda xs, k: max(x[k] for x in xs) / max(min(x[k] for x in xs), 1e-9)
        spreads.append((name, rng(ii, 0), rng(ff, 0), rng(ii, 2), rng(ff, 2), rng(ii, 3), rng(ff, 3)))

    print_rows(rows, "iolab", "fio")
    print(f"(ratio = iolab / fio; IOPS, mean, p99, p99.9 = median of {rounds} alternating rounds; "
          "paired = median (min-max) of each round's IOPS ratio, the two tools back to back; "
          "geo-mean = geometric mean of those ratios with its 95 % interval (t on the log "
          "ratios): 'faster'/'slower' when the interval excludes 1, '~' when this many rounds "
          "cannot tell the tools apart; "
          "pooled = percentile of all rounds' samples together; latency = iolab's submit-to-"
          "completion against fio's total lat_ns; both tools pinned to one CPU)")
    if control:
        print()
        print("A/A control: fio's second run of each round against its first (same columns). "
              "A gap between iolab and fio within this one is not a difference of the tools:")
        print_rows(control, "fio #2", "fio")
    print()
    print(f"Pooled tails, iolab / fio, with 95 % bootstrap intervals over the {rounds} rounds "
          f"(resampled in pairs): 'within' when the whole interval is inside ±{TAIL_TOL:.0%}, "
          "'lower'/'higher' when all of it is beyond, '~' when these rounds cannot tell:")
    print_tails(tail_rows, "iolab", "fio")
    if tail_control:
        print("The same for fio's second run against its first (A/A):")
        print_tails(tail_control, "fio #2", "fio")
    if halt_rows:
        print()
        print("Idle-state entries (vCPU halts on a VM) per I/O, median of the rounds; on a VM each "
              "one is a wake-up through the host, so at QD1 the tool that makes the CPUs halt "
              "less often completes more I/Os:")
        print_halts(halt_rows)
    if adjusted:
        print()
        print("Time per I/O against halts per I/O, fitted over fio's runs (us = a + b x halts); "
              "iolab's runs against that line: how much faster or slower iolab is than fio "
              "would be at the same number of halts (negative = faster):")
        print_adjusted(adjusted)
    print()
    print("Each tool's own range over the rounds (max / min):")
    print(f"{'test':22} {'IOPS i':>7} {'IOPS f':>7} {'p99 i':>7} {'p99 f':>7} {'p99.9 i':>8} {'p99.9 f':>8}")
    for n, *r in spreads:
        print(f"{n:22} " + " ".join(f"{v:7.2f}" if k < 4 else f"{v:8.2f}" for k, v in enumerate(r)))


if __name__ == "__main__":
    main()
