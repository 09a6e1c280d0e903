"""Confidence interval of a paired ratio, for the benchmark reports (bench-vs-fio-report.py,
bench-rotate.sh).

Each round gives one ratio of two tools run back to back; the VM's drift between rounds
multiplies both, so the log ratios are what is averaged. Returns the geometric mean of the
ratios and its two-sided 95 % interval (Student t on the log ratios), and a verdict:
'faster' when the whole interval is above 1, 'slower' when below, '~' when 1 is inside (the
benchmark cannot tell the two apart at this many rounds).
"""
import math
import statistics as st


def t975(df):
    """Two-sided 95 % quantile of Student's t: the table up to df=10, then Cornish-Fisher
    (within 0.02 % of the exact value from there on)."""
    table = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228]
    if df < 1:
        return float("inf")
    if df <= len(table):
        return table[df - 1]
    z = 1.959964
    return (z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3))


def paired_ci(ratios):
    """(geometric mean, low, high, verdict) of per-round ratios."""
    logs = [math.log(r) for r in ratios if r > 0]
    n = len(logs)
    if n < 2:
        g = math.exp(logs[0]) if logs else float("nan")
        return g, float("nan"), float("nan"), "~"
    m, s = st.mean(logs), st.stdev(logs)
    h = t975(n - 1) * s / math.sqrt(n)
    lo, hi = math.exp(m - h), math.exp(m + h)
    verdict = "faster" if lo > 1 else "slower" if hi < 1 else "~"
    return math.exp(m), lo, hi, verdict


def _tail(hists, q_low):
    """Per-round histograms ({value: count}) cut to the values at or above the lowest of the
    rounds' own q_low quantiles: any pooled quantile at q >= q_low of any mix of these rounds
    lies there (below every round's quantile, every round has more than its share above).
    Returns (values, largest first; per-round counts on them; per-round totals)."""
    totals = [sum(h.values()) for h in hists]
    cut = min(quantile(h, q_low) for h in hists)
    values = sorted({v for h in hists for v in h if v >= cut}, reverse=True)
    counts = [[h.get(v, 0) for v in values] for h in hists]
    return values, counts, totals


def quantile(hist, q):
    """Quantile q of a histogram {value: count}: the smallest value with at least
    ceil(q * total) samples at or below it."""
    total = sum(hist.values())
    want = max(1, math.ceil(q * total))
    acc = 0
    for v in sorted(hist):
        acc += hist[v]
        if acc >= want:
            return v
    return 0


def _pooled(tail, weights, q):
    """Quantile q of the rounds pooled with these multiplicities (same rule as quantile)."""
    values, counts, totals = tail
    total = sum(w * n for w, n in zip(weights, totals))
    allowed_above = total - max(1, math.ceil(q * total))
    above, last = 0, values[0]
    for k, v in enumerate(values):
        if above > allowed_above:
            break
        last = v
        above += sum(w * c[k] for w, c in zip(weights, counts) if w)
    return last


def pooled_ratio_ci(a_hists, b_hists, q, resamples=1000, seed=1):
    """Ratio of the pooled q-quantiles of two tools' latency histograms (one per round, paired
    by round) with a 95 % percentile-bootstrap interval: the rounds are resampled with
    replacement, the same rounds for both tools (they ran back to back), and each resample's
    histograms pooled again. Returns (ratio, low, high). With ten rounds the interval is
    itself rough (a bootstrap of few rounds is too narrow, if anything): read it as the
    resolution of the benchmark for that percentile, not as a test."""
    import random

    n = len(a_hists)
    ta, tb = _tail(a_hists, q), _tail(b_hists, q)
    ones = [1] * n
    ratio = _pooled(ta, ones, q) / _pooled(tb, ones, q)
    rng = random.Random(seed)
    rs = []
    for _ in range(resamples):
        w = [0] * n
        for i in rng.choices(range(n), k=n):
            w[i] += 1
        rs.append(_pooled(ta, w, q) / _pooled(tb, w, q))
    rs.sort()
    return ratio, rs[int(0.025 * (resamples - 1))], rs[int(0.975 * (resamples - 1))]


def within(lo, hi, tol):
    """Verdict for 'within ±tol of 1': 'within' when the whole interval is, 'lower' or
    'higher' when the whole interval is beyond that side, '~' when these rounds cannot tell."""
    if lo >= 1 - tol and hi <= 1 + tol:
        return "within"
    if hi < 1 - tol:
        return "lower"
    if lo > 1 + tol:
        return "higher"
    return "~"
