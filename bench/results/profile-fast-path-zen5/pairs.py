#!/usr/bin/env python3
"""pairs.py RUNS.jsonl NUM/DEN ...: paired throughput ratios per program/cell: median [distribution-free
95% interval of the median, order statistics by the sign test] n."""
import collections, json, sys
from math import comb
def ci(xs):
    xs = sorted(xs); n = len(xs)
    if n < 6: return None
    # largest k with P(B < k) <= 0.025, B ~ Binom(n, 1/2)
    k, acc = 0, 0.0
    while True:
        p = comb(n, k) / 2**n
        if acc + p > 0.025: break
        acc += p; k += 1
    return xs[k - 1] if k else xs[0], xs[n - k] if k else xs[-1]
def med(xs):
    xs = sorted(xs); n = len(xs)
    return xs[n//2] if n % 2 else (xs[n//2-1] + xs[n//2]) / 2
by = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    if not line.strip(): continue
    r = json.loads(line)
    if not r.get("ok") or r.get("counters"): continue
    if "program" in r: by[(r["program"], r["arm"])][r["rep"]] = r["throughput"]
    elif r.get("kind") == "memcached": by[(f"memcached {r['threads']} thr {r['mix']}", r["arm"])][r["rep"]] = r["ops_per_s"]
groups = list(dict.fromkeys(g for g, _ in by))
for g in groups:
    out = [f"{g:34s}"]
    for pair in sys.argv[2:]:
        a, b = pair.split("/")
        A, B = by.get((g, a), {}), by.get((g, b), {})
        rs = [A[k] / B[k] for k in A if k in B and B[k]]
        c = ci(rs)
        out.append(f"{pair}: {med(rs):.3f} [{c[0]:.3f}-{c[1]:.3f}] n={len(rs)}" if c else f"{pair}: n={len(rs)}")
    print("  ".join(out))
