"""median_ci.py runs.jsonl [arm]: per cell and thread count, the arm's ops/s over sqlite's paired by rep:
median and the distribution-free 95% interval of the median (order statistics of the binomial)."""
import json, sys, math, collections
arm = sys.argv[2] if len(sys.argv) > 2 else "hybrid"
d = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r = json.loads(line)
    d[(r["cell"], r["threads"])].setdefault(r["rep"], {})[r["arm"]] = (r["ops_per_s"], r["cpu_ns_per_op"])
def med_ci(xs):
    xs = sorted(xs); n = len(xs)
    # largest k with P(Bin(n,.5) < k) <= 0.025: interval [x_k, x_{n-k+1}] (1-based)
    cum = 0.0; k = 0
    for i in range(n + 1):
        p = math.comb(n, i) / 2 ** n
        if cum + p > 0.025: break
        cum += p; k = i + 1
    k = max(k, 1)
    m = xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
    return m, xs[k - 1], xs[n - k], 1 - 2 * cum
for key in sorted(d):
    reps = d[key]
    r = [v[arm][0] / v["sqlite"][0] for v in reps.values() if arm in v and "sqlite" in v]
    c = [v[arm][1] / v["sqlite"][1] for v in reps.values() if arm in v and "sqlite" in v]
    m, lo, hi, conf = med_ci(r)
    cm, clo, chi, _ = med_ci(c)
    print("%-22s %2d thr  n=%2d  ratio %.3f [%.3f-%.3f] (%.1f%%)  CPU/op %.3f [%.3f-%.3f]" % (key[0], key[1], len(r), m, lo, hi, conf * 100, cm, clo, chi))
