#!/usr/bin/env python3
"""ratios.py RUNS.jsonl NUM/DEN ...: paired ratios of two arms' throughput (same repetition), per
program (bench/engines/programs/run.py's runs) or per memcached cell (bench/engines/memcached/
run.sh's), as the median with its 95% interval from spinwise's statistics (spinwise-bench
--estimate, found in build/release or through SPINWISE_BENCH) and the range."""
import collections
import json
import os
import sys

root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(root, "bench", "micro"))
from reporting.estimates import Stats, find_bench  # noqa: E402

by = collections.defaultdict(dict)  # (group, arm) -> {rep: throughput}
for line in open(sys.argv[1]):
    r = json.loads(line) if line.strip() else {}
    if not r.get("ok") or r.get("counters"):
        continue
    if "program" in r:
        by[(r["program"], r["arm"])][r["rep"]] = r["throughput"]
    elif r.get("kind") == "memcached":
        by[(f"memcached {r['threads']} threads {r['mix']}", r["arm"])][r["rep"]] = r["ops_per_s"]
groups = list(dict.fromkeys(g for g, _ in by))
with Stats(find_bench()) as st:
    for g in groups:
        cols = [g]
        for pair in sys.argv[2:]:
            num, den = pair.split("/")
            a, b = by.get((g, num), {}), by.get((g, den), {})
            rs = sorted(a[k] / b[k] for k in a if k in b)
            if rs:
                ci = st.median_ci(rs)
                cols.append(f"{pair} {ci.median:.3f} [{ci.lo:.3f}-{ci.hi:.3f}] ({rs[0]:.2f}-{rs[-1]:.2f}) n={len(rs)}")
        print(" | ".join(cols))
