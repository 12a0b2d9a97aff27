"""spinwise's statistics as the report asks for them: one `spinwise-bench --estimate` process answers
every median, interval, ratio and verdict; judge() and combine() turn them into the targets' verdicts."""

import json
import math
import os
import shutil
import subprocess
from collections import namedtuple

from reporting import ReportError

# -- spinwise's statistics, from the runtime ---------------------------------------------------
# Every median, interval, ratio and verdict in the report is spinwise::runtime's
# (include/spinwise/runtime/uncertainty.hpp, src/runtime/statistics/uncertainty.cpp): `spinwise-bench --estimate`
# answers them, one process for the whole report, asked as the report goes (which lock is the best
# peer and which cells enter a geometric mean depend on earlier answers), each sample's median
# asked once up front in one batch. This file keeps no copy of the rule, so it cannot drift from
# spinwise-stress --compare: the same runs get the same intervals and verdicts. In short: the
# median with its distribution-free interval (min..max below six runs, at its true coverage); B/A
# as the ratio of medians with a percentile bootstrap interval and a verdict (beyond the noise
# when the interval excludes 1 and, below six runs a side, the ranges do not overlap either; no
# verdict below four runs a side).

WITHIN_NOISE = "within noise"  # to_string(difference), as the runtime answers them
HIGHER = "higher, beyond noise"
LOWER = "lower, beyond noise"
INSUFFICIENT = "too few runs to judge"

BENCH_ENV = "SPINWISE_BENCH"
# Where run.sh, the docs and the CI build spinwise-bench, from the repository root.
BUILD_DIRS = ("build-bench-run/release", "build/release", "build")

MedianInterval = namedtuple("MedianInterval", "n median min max lo hi coverage")
RatioInterval = namedtuple("RatioInterval", "ratio lo hi confidence verdict")

# value with its interval [lo, hi]; range_lo..range_hi the ratio's extremes over the runs (A's max
# against B's min and the reverse), which the rule demands clear of a bound below six runs
# (`few`); `single`: one run on a side, no spread; verdict: against 1, as compare_medians says.
Estimate = namedtuple("Estimate", "value lo hi range_lo range_hi few single verdict")

MET, NOT_MET, NOISE, NOT_MEASURED = "met", "not met", "within noise", "not measured"
ONE_RUN = " (one run: no spread)"


def find_bench(explicit=None, near=None):
    """spinwise-bench's path: `explicit` (--bench), else $SPINWISE_BENCH, else next to `near` (the
    input), in the repository's usual build folders, or on PATH. ReportError when none is there:
    the report has no numbers of its own."""
    if explicit or os.environ.get(BENCH_ENV):
        path = explicit or os.environ[BENCH_ENV]
        how = "--bench" if explicit else f"${BENCH_ENV}"
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise ReportError(f"{how} {path}: not an executable spinwise-bench")
        return path
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")  # the repository
    tried = [os.path.join(os.path.dirname(os.path.abspath(near)), "spinwise-bench")] if near else []
    tried += [os.path.normpath(os.path.join(root, d, "bench", "micro", "spinwise-bench")) for d in BUILD_DIRS]
    for path in tried:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    on_path = shutil.which("spinwise-bench")
    if on_path:
        return on_path
    raise ReportError("spinwise-bench not found: the report's medians, intervals and verdicts are "
                      "spinwise's runtime's, answered by `spinwise-bench --estimate`; give --bench PATH or "
                      f"{BENCH_ENV}=PATH (looked next to the input, in {', '.join(BUILD_DIRS)} and on PATH)")


def _num(x):
    """A number of an answer: non-finite ones come as "inf", "-inf" or "nan"."""
    return float(x)


def _sample(values):
    """A sample for a request: non-finite values as null (the runtime drops them)."""
    out = []
    for v in values:
        v = float(v)
        out.append(v if math.isfinite(v) else None)
    return out


class Stats:
    """spinwise's statistics, answered by one `spinwise-bench --estimate` process (JSON Lines: a
    list of requests a line, a list of answers a line back). Answers are kept: each sample and
    pair is asked once."""

    def __init__(self, bench):
        self.bench = bench
        try:
            self.proc = subprocess.Popen([bench, "--estimate"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True, encoding="utf-8")
        except OSError as e:
            raise ReportError(f"cannot run {bench} --estimate ({e})")
        self.medians, self.ratios, self.geomeans, self.coverages = {}, {}, {}, {}
        rule = self.ask([{"rule": {}}])[0]
        self.min_runs = int(rule["min_runs_for_verdict"])  # below this many a side, no verdict
        self.few_runs = int(rule["range_rule_below_runs"])  # below this many, the ranges decide too
        self.resamples = int(rule["resamples"])

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()
            self.proc.stdout.close()
            self.proc.stderr.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def ask(self, requests):
        """The runtime's answers to a list of requests, in order."""
        if not requests:
            return []
        try:
            self.proc.stdin.write(json.dumps(requests, allow_nan=False, separators=(",", ":")) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except OSError:
            line = ""
        if not line:
            self.proc.kill()
            err = self.proc.stderr.read().strip()
            raise ReportError(f"{self.bench} --estimate gave no answer (exit {self.proc.wait()}): "
                              f"{err or 'nothing on stderr'}; is it a spinwise-bench with --estimate?")
        answers = json.loads(line)
        if not isinstance(answers, list) or len(answers) != len(requests):
            raise ReportError(f"{self.bench} --estimate answered {len(requests)} requests with: {line[:200]}")
        for a in answers:
            if "error" in a:
                raise ReportError(f"{self.bench} --estimate refused a request: {a['error']}")
        return answers

    def prefetch(self, samples):
        """The median intervals of many samples in one request line."""
        keys = list(dict.fromkeys(tuple(s) for s in samples if s and tuple(s) not in self.medians))
        for key, a in zip(keys, self.ask([{"median_ci": _sample(k)} for k in keys])):
            self.medians[key] = MedianInterval(int(a["n"]), _num(a["median"]), _num(a["min"]), _num(a["max"]),
                                               _num(a["lo"]), _num(a["hi"]), _num(a["coverage"]))

    def median_ci(self, sample):
        """The median of a sample with its 95% interval (n = 0 for an empty one)."""
        key = tuple(sample or ())
        if key not in self.medians:
            if not key:
                return MedianInterval(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            self.prefetch([key])
        return self.medians[key]

    def median(self, sample):
        return self.median_ci(sample).median

    def compare_medians(self, a, b):
        """B/A: the ratio of medians, its bootstrap interval and verdict."""
        key = (tuple(a), tuple(b))
        if key not in self.ratios:
            r = self.ask([{"compare_medians": [_sample(a), _sample(b)]}])[0]
            self.ratios[key] = RatioInterval(_num(r["ratio"]), _num(r["lo"]), _num(r["hi"]), _num(r["confidence"]),
                                             r["verdict"])
        return self.ratios[key]

    def coverage(self, n, k):
        """The coverage of [x(k), x(n+1-k)] for n repeats."""
        if (n, k) not in self.coverages:
            self.coverages[(n, k)] = _num(self.ask([{"coverage": [n, k]}])[0]["coverage"])
        return self.coverages[(n, k)]

    # -- estimates the report prints and judges ----------------------------------------------------
    def ratio(self, num, den):
        """median(num) / median(den): compare_medians(den, num). None when a side is missing or 0."""
        if not num or not den:
            return None
        mn, md = self.median_ci(num), self.median_ci(den)
        if not mn.median or not md.median:
            return None
        value = mn.median / md.median
        if len(num) < 2 or len(den) < 2:
            return Estimate(value, value, value, value, value, True, True, INSUFFICIENT)
        r = self.compare_medians(den, num)
        range_lo = mn.min / md.max if md.max > 0 else math.inf
        range_hi = mn.max / md.min if md.min > 0 else math.inf
        few = len(num) < self.few_runs or len(den) < self.few_runs
        return Estimate(value, r.lo, r.hi, range_lo, range_hi, few, False, r.verdict)

    def scaled(self, sample, c):
        """median(sample) / c for a constant c > 0, with the median's own interval (min..max below six
        runs, so the range rule is in it already)."""
        if not sample or not c or c <= 0:
            return None
        m = self.median_ci(sample)
        if m.n == 0:
            return None
        value, lo, hi = m.median / c, m.lo / c, m.hi / c
        if m.n < 2:
            return Estimate(value, value, value, value, value, True, True, INSUFFICIENT)
        verdict = HIGHER if lo > 1.0 else LOWER if hi < 1.0 else WITHIN_NOISE
        return Estimate(value, lo, hi, m.min / c, m.max / c, m.n < self.few_runs, False, verdict)

    def geomean(self, pairs):
        """The geometric mean over cells of median(num) / median(den), pairs = [(num, den)], with the
        runtime's bootstrap interval (runtime::geomean_ratio: every cell resampled, the interval of the
        resampled geometric means). It pools all the cells' runs, so the bootstrap alone decides: the
        range rule is for one cell of fewer than six runs. None when no cell has both medians above 0."""
        key = tuple((tuple(n), tuple(d)) for n, d in pairs)
        if key not in self.geomeans:
            g = self.ask([{"geomean": [[_sample(d), _sample(n)] for n, d in pairs]}])[0]
            value, lo, hi = _num(g["ratio"]), _num(g["lo"]), _num(g["hi"])
            if not g["cells"]:
                est = None
            elif g["min_runs"] < 2:
                est = Estimate(value, value, value, value, value, True, True, INSUFFICIENT)
            else:
                est = Estimate(value, lo, hi, lo, hi, False, False, g["verdict"])
            self.geomeans[key] = est
        return self.geomeans[key]


def judge(est, bound, at_least=True):
    """A target `value >= bound` (at_least) or `value <= bound` against the estimate: met only if
    the whole interval is on the right side (below six runs a side, the ranges too, as in the
    verdict), not met only if it is wholly on the wrong side, else within noise."""
    if est is None:
        return NOT_MEASURED
    if est.single:
        ok = est.value >= bound if at_least else est.value <= bound
        return (MET if ok else NOT_MET) + ONE_RUN
    if at_least:
        good = est.lo >= bound and (not est.few or est.range_lo >= bound)
        bad = est.hi < bound and (not est.few or est.range_hi < bound)
    else:
        good = est.hi <= bound and (not est.few or est.range_hi <= bound)
        bad = est.lo > bound and (not est.few or est.range_lo > bound)
    return MET if good else NOT_MET if bad else NOISE


def combine(judgements):
    """A target over many cells: not met if one is, else within noise if one is, else met."""
    js = [j for j in judgements if j != NOT_MEASURED]
    if not js:
        return NOT_MEASURED
    suffix = ONE_RUN if any(j.endswith(ONE_RUN) for j in js) else ""
    plain = {j[:-len(ONE_RUN)] if j.endswith(ONE_RUN) else j for j in js}
    for worst in (NOT_MET, NOISE):
        if worst in plain:
            return worst + suffix
    return MET + suffix

