#!/usr/bin/env python3
"""probe-ratios.py FILE: from probe-pairs.sh's (or sysbench-mutex.sh's) output, per library the
statistics' (and the profile's) throughput over the statistics off, paired within a round, and
each library over the first one per mode: the median with its 95% interval from spinwise's
statistics (spinwise-bench --estimate, found in build/release or through SPINWISE_BENCH)."""
import os
import sys

root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(root, "bench", "micro"))
from reporting.estimates import Stats, find_bench  # noqa: E402

rows = [line.split() for line in open(sys.argv[1]) if line.split()]
rows = [r if len(r) == 3 else [r[0], "lib", r[1]] for r in rows]  # sysbench-mutex.sh: one library
libs = list(dict.fromkeys(lib for _, lib, _ in rows))
modes = list(dict.fromkeys(m for m, _, _ in rows))
n = len(libs) * len(modes)
rounds = [{(m, lib): float(s) for m, lib, s in rows[i:i + n]} for i in range(0, len(rows) - n + 1, n)]


def show(label, xs, st):
    ci = st.median_ci(xs)
    print(f"{label}: {ci.median:.3f} [{ci.lo:.3f}-{ci.hi:.3f}] n={len(xs)}")


with Stats(find_bench()) as st:  # throughput ratios: seconds of the denominator over the numerator's
    for lib in libs:
        for m in modes[1:]:
            show(f"{lib} {m}/{modes[0]}", [r[(modes[0], lib)] / r[(m, lib)] for r in rounds], st)
    if "profile" in modes and "stats" in modes:
        for lib in libs:
            show(f"{lib} profile/stats", [r[("stats", lib)] / r[("profile", lib)] for r in rounds], st)
    for lib in libs[1:]:
        for m in modes:
            show(f"{lib}/{libs[0]} {m}", [r[(m, libs[0])] / r[(m, lib)] for r in rounds], st)
