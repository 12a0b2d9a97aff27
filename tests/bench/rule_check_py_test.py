#!/usr/bin/env python3
"""bench/engines/mariadb/analyze.py rule-check (issue 46, item 2): the advice against every sweep.

Synthetic sweeps give each verdict (within, beyond, cannot tell for too few passes, for overlapping
ranges and for a sweep without an advised delay) and the exit code; then every sweep kept under
bench/results must have no advice beyond 5% of its best (the rule, checked against the project's
sweeps; a miss an open issue reports is listed below as known)."""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
ANALYZE = os.path.join(ROOT, "bench", "engines", "mariadb", "analyze.py")


def point(delay, qps_by_pass):
    s = sorted(qps_by_pass)
    n = len(s)
    med = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    return {"delay": delay, "passes": n, "qps_median": med, "qps_min": s[0], "qps_max": s[-1]}


def sweep(d, name, advised, points, cpus=None):
    os.makedirs(os.path.join(d, name))
    machine = {"cpu_model": "Test CPU"}
    if cpus is not None:
        machine["cpu_count"] = cpus
    doc = {"mode": "sweep", "advised_delay": advised, "machine": machine,
           "workloads": [{"test": "oltp_read_write", "threads": 64, "points": points}]}
    json.dump(doc, open(os.path.join(d, name, "sweep.json"), "w"))


def run(results):
    p = subprocess.run([sys.executable, ANALYZE, "rule-check", "--results", results],
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


failures = []
checks = 0


def check(what, cond, out):
    global checks
    checks += 1
    if not cond:
        failures.append(f"{what}\n{out}")


with tempfile.TemporaryDirectory() as d:
    sweep(d, "within", 1, [point(1, [98, 99, 97, 98]), point(4, [100, 101, 99, 100])])
    rc, out = run(d)
    check("advice at 0.98x the best: within, exit 0", rc == 0 and "within 5%" in out, out)
with tempfile.TemporaryDirectory() as d:
    sweep(d, "beyond", 1, [point(1, [88, 89, 90, 87]), point(4, [100, 101, 99, 100])])
    rc, out = run(d)
    check("advice at 0.88x, 4 passes, disjoint: BEYOND, exit 1", rc == 1 and "BEYOND 5%" in out, out)
with tempfile.TemporaryDirectory() as d:
    sweep(d, "two-passes", 1, [point(1, [88, 89]), point(4, [100, 101])])
    sweep(d, "overlap", 1, [point(1, [80, 85, 90, 101]), point(4, [100, 101, 99, 100])])
    sweep(d, "no-advice", None, [point(1, [88, 89]), point(4, [100, 101])])
    rc, out = run(d)
    check("2 passes: cannot tell", "cannot tell (2 passes" in out, out)
    check("overlapping ranges: cannot tell", "cannot tell (the pass ranges overlap)" in out, out)
    check("no advised delay: cannot tell", "cannot tell (no advised delay" in out, out)
    check("cannot tell points at --tune", out.count("spinwise-calibrate --tune") == 3, out)
    check("cannot tell is not a failure", rc == 0 and "BEYOND" not in out, out)

# On a host of kAdviceFewCpus CPUs or fewer the advice says it cannot tell (engine_advice.hpp): a
# sweep of such a host is not judged, one of more CPUs is, whatever its ratio.
header = open(os.path.join(ROOT, "include", "spinwise", "runtime", "engine_advice.hpp")).read()
m = re.search(r"kAdviceFewCpus = (\d+);", header)
sys.path.insert(0, os.path.dirname(ANALYZE))
import analyze  # noqa: E402
check("analyze.py's ADVICE_FEW_CPUS is engine_advice.hpp's kAdviceFewCpus",
      m is not None and int(m.group(1)) == analyze.ADVICE_FEW_CPUS, m.group(0) if m else "no kAdviceFewCpus")
few = analyze.ADVICE_FEW_CPUS
with tempfile.TemporaryDirectory() as d:
    sweep(d, "few", 1, [point(1, [88, 89, 90, 87]), point(4, [100, 101, 99, 100])], cpus=few)
    rc, out = run(d)
    check("a host of kAdviceFewCpus CPUs: cannot tell, not a failure",
          rc == 0 and f"cannot tell (the advice says so on {few} CPUs" in out and "BEYOND" not in out
          and "0.885x" in out, out)
with tempfile.TemporaryDirectory() as d:
    sweep(d, "more", 1, [point(1, [88, 89, 90, 87]), point(4, [100, 101, 99, 100])], cpus=few + 1)
    rc, out = run(d)
    check("a host of one CPU more: judged, BEYOND", rc == 1 and "BEYOND 5%" in out, out)

# Sweeps whose advice the rule-check calls beyond 5%, each a miss an open issue reports (with its
# mechanism in the sweep's README): known, so the check still fails on any other sweep's miss, and
# on one of these that is no longer beyond (the list is then out of date). The tool itself exits 1
# on them: its verdict is the issue's, not this list's.
KNOWN_BEYOND = set()
rc, out = run(os.path.join(ROOT, "bench", "results"))
beyond = {line.split(" (")[0] for line in out.splitlines() if line.endswith("BEYOND 5%")}
check("the sweeps kept: none beyond 5% but the known misses, and at least one judged",
      beyond == KNOWN_BEYOND and rc == (1 if KNOWN_BEYOND else 0) and "within 5%" in out, out)

for f in failures:
    print("FAILED:", f)
print(f"rule-check: {checks - len(failures)} of {checks} checks passed")
sys.exit(1 if failures else 0)
