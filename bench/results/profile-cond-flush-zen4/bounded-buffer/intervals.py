#!/usr/bin/env python3
"""intervals.py FILE BASE [ARM ...]: the bounded buffer's runs (bb.sh's "rep arm items/s" lines):
per arm, the median of its paired ratios to BASE (same repetition) with a 95% interval of that
median from spinwise's statistics (spinwise-bench --estimate; SPINWISE_BENCH or build/release),
the runs in the slow schedule (under 1.2M items/s) and the median of the others."""
import collections
import os
import statistics
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.normpath(os.path.join(here, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(root, "bench", "micro"))
from reporting.estimates import Stats, find_bench  # noqa: E402

runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 3 and p[0].isdigit():
        runs[p[1]][p[0]] = float(p[2])
base = sys.argv[2]
arms = sys.argv[3:] or [a for a in runs if a != base]
with Stats(find_bench()) as st:
    for arm in arms:
        r = [runs[arm][k] / runs[base][k] for k in runs[arm] if k in runs[base]]
        ci = st.median_ci(r)
        v = list(runs[arm].values())
        fast = [x for x in v if x >= 1.2e6]
        fast_median = f"{statistics.median(fast) / 1e6:.2f}M" if fast else "-"
        print(f"{arm}/{base}: {ci.median:.3f} [{ci.lo:.3f}-{ci.hi:.3f}] n={len(r)}; "
              f"slow runs {len(v) - len(fast)}, fast median {fast_median}")
