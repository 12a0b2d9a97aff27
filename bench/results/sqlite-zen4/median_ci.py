#!/usr/bin/env python3
"""median_ci.py RUNS.jsonl [ARM]: per SQLite cell and thread count (bench/engines/sqlite/run.sh's
runs), ARM's (default hybrid) ops/s and CPU per operation over the sqlite arm's, paired by
repetition: the median with its 95% interval from spinwise's statistics (spinwise-bench
--estimate, found in build/release or through SPINWISE_BENCH)."""
import collections
import json
import os
import sys

root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(root, "bench", "micro"))
from reporting.estimates import Stats, find_bench  # noqa: E402

arm = sys.argv[2] if len(sys.argv) > 2 else "hybrid"
by = collections.defaultdict(dict)  # (cell, threads) -> {rep: {arm: run}}
for line in open(sys.argv[1]):
    r = json.loads(line)
    by[(r["cell"], r["threads"])].setdefault(r["rep"], {})[r["arm"]] = r
with Stats(find_bench()) as st:
    for key in sorted(by):
        pairs = [v for v in by[key].values() if arm in v and "sqlite" in v]
        ops = st.median_ci([v[arm]["ops_per_s"] / v["sqlite"]["ops_per_s"] for v in pairs])
        cpu = st.median_ci([v[arm]["cpu_ns_per_op"] / v["sqlite"]["cpu_ns_per_op"] for v in pairs])
        print(f"{key[0]:<22} {key[1]:>2} threads  n={len(pairs):>2}  ratio {ops.median:.3f} "
              f"[{ops.lo:.3f}-{ops.hi:.3f}]  CPU/op {cpu.median:.3f} [{cpu.lo:.3f}-{cpu.hi:.3f}]")
