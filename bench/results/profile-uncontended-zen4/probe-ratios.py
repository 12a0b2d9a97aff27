"""probe-ratios.py FILE: from probe-pairs.sh's output, per library the statistics' throughput over
the statistics off (paired within a round), and each library over the first one per mode; medians
with a bootstrap 95% interval of the median (2000 resamples)."""
import random
import statistics as st
import sys

rows = [line.split() for line in open(sys.argv[1]) if len(line.split()) == 3]
libs = []
for _, lib, _ in rows:
    if lib not in libs:
        libs.append(lib)
n = len(libs) * 2
rounds = [rows[i:i + n] for i in range(0, len(rows) - n + 1, n)]


def get(r, mode, lib):
    return next(float(s) for m, l, s in r if m == mode and l == lib)


def ci(xs):
    b = sorted(st.median(random.choice(xs) for _ in xs) for _ in range(2000))
    return st.median(xs), b[50], b[1949]


for lib in libs:
    print(lib, "stats/off throughput: %.3f [%.3f-%.3f]" % ci([get(r, "off", lib) / get(r, "stats", lib) for r in rounds]))
for lib in libs[1:]:
    for m in ("off", "stats"):
        print(lib, "/", libs[0], m, "throughput: %.3f [%.3f-%.3f]" % ci([get(r, m, libs[0]) / get(r, m, lib) for r in rounds]))
