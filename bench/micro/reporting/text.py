"""How the report writes numbers: plain figures, ratios with their intervals, medians with theirs,
and a benchmark's parameters."""

import math

from reporting.estimates import INSUFFICIENT, WITHIN_NOISE


def fmt(x, digits=3):
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return "–"
    if x == 0:
        return "0"
    a = abs(x)
    if a >= 1e9:
        return f"{x / 1e9:.{digits}g}G"
    if a >= 1e6:
        return f"{x / 1e6:.{digits}g}M"
    if a >= 1e4:
        return f"{x / 1e3:.{digits}g}k"
    if a >= 1e3:
        return f"{x:.0f}"
    return f"{x:.{digits}g}"


def fmt_est(e, unit="x", mark=True, digits=2):
    """`1.23x [1.10–1.31]`: the ratio and its interval (an en dash between its ends: no minus sign
    or exponent can be mistaken for it); `≈` in front when not shown to differ from 1: within noise,
    or from too few runs to judge (an unmarked ratio is one judged beyond the noise)."""
    if e is None:
        return "–"
    if e.single:
        return f"{e.value:.{digits}f}{unit}"
    near = "≈" if mark and e.verdict in (WITHIN_NOISE, INSUFFICIENT) else ""
    return f"{near}{e.value:.{digits}f}{unit} [{e.lo:.{digits}f}–{e.hi:.{digits}f}]"


def fmt_target(e):
    """A target's figure: three decimals, so that an interval's end never rounds onto the bound,
    and the runs' ranges where they decided (fewer than six runs a side)."""
    text = fmt_est(e, mark=False, digits=3)
    if e is None or e.single or not e.few or f"[{e.range_lo:.3f}–{e.range_hi:.3f}]" in text:
        return text  # three runs a side: the bootstrap interval is the runs' range
    return f"{text}, runs {e.range_lo:.3f}–{e.range_hi:.3f}x"


def fmt_ci(m):
    """`8.89 [8.80–9.01]`: a MedianInterval, the median and its order-statistics interval (min..max
    below six runs)."""
    if m is None or m.n == 0:
        return "–"
    if m.n < 2:
        return fmt(m.median)
    return f"{fmt(m.median)} [{fmt(m.lo)}–{fmt(m.hi)}]"


def param_text(params):
    names = {"cs_ns": "critical section", "local_ns": "local work", "read_pct": "reads"}
    out = []
    for k, v in params:
        out.append(f"{names[k]} {v}%" if k == "read_pct" else f"{names[k]} {v} ns")
    return ", ".join(out)


def param_slug(params):
    return "_".join(f"{k.replace('_ns', '').replace('_pct', '')}{v}" for k, v in params)

