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
