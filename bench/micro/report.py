#!/usr/bin/env python3
"""Turns one spinwise-bench run into a markdown report, PNG plots and a compact summary.

    bench/micro/report.py RUN.json|summary.json [--out DIR] [--no-plots] [--bench PATH]

Reads Google Benchmark's JSON from spinwise-bench (--benchmark_out=RUN.json
--benchmark_out_format=json), or a summary.json this script wrote, and writes DIR/report.md,
DIR/summary.json and DIR/plots/*.png (DIR defaults to the input's folder).

Every figure in the tables is a ratio against a lock measured in the same run: against
std::mutex (std::shared_mutex in the rw tables) and against the best peer of that scenario.
Ratios are speed-ups: above 1 means better than the reference, whatever the unit (time, latency
or throughput). Each is the ratio of the medians of the run's repetitions with its 95% interval,
and each target is judged against that interval: met, not met, or within noise. The rule is
spinwise's own (include/spinwise/runtime/uncertainty.hpp), and so are the numbers: every median,
interval and verdict is answered by the runtime through `spinwise-bench --estimate` (--bench PATH,
else $SPINWISE_BENCH, else a spinwise-bench next to the input, in the repository's build folders or
on PATH; without one the script stops), so this report and spinwise-stress --compare say the same
thing about the same runs.

summary.json holds, per benchmark, the repetitions of every metric the report reads (six
significant digits), the headline metric's median, extremes and interval, and the run's context,
in well under a megabyte; the report made from it is the report made from the run.

Python 3 standard library and spinwise-bench; gnuplot (Debian: gnuplot-nox) for the plots.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
from collections import Counter, defaultdict, namedtuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plot as gp  # noqa: E402  (bench/plot.py: the scripts' one way to gnuplot)
import run_context  # noqa: E402  (the run context's one reader)

EXCLUSIVE_REF = "std::mutex"
SHARED_REF = "std::shared_mutex"
SCENARIOS = ("uncontended", "uncontended_shared", "handoff", "contended", "rw")
PARAMS = ("cs_ns", "local_ns", "read_pct")

# What the report reads of each scenario, headline first, and the headline's unit. Nothing else
# goes into summary.json, and a report from run.json reads only this too: the two are the same.
METRICS = {
    "uncontended": ("real_ns",),
    "uncontended_shared": ("real_ns",),
    "handoff": ("p50_ns", "p90_ns", "p99_ns", "p999_ns", "c2c_ns", "capped"),
    "contended": ("acq_per_s", "fair_cov", "fair_min", "fair_max", "fair_window_acq", "fair_window_ms",
                  "fair_window_open", "fair_min_cpu_ms", "fair_max_cpu_ms", "cpu_ns_per_acq", "csw_per_acq", "capped"),
    "rw": ("acq_per_s", "fair_cov", "cpu_ns_per_acq", "csw_per_acq", "capped"),
}
UNITS = {"real_ns": "ns per lock+unlock", "p50_ns": "ns", "acq_per_s": "acquisitions/s"}
SUMMARY_FORMAT = "spinwise-bench-summary"
SUMMARY_VERSION = 1
DIGITS = 6  # significant digits kept per value: far below any run's noise


class ReportError(Exception):
    pass


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


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


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
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
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


# -- formatting --------------------------------------------------------------------------------
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


# -- input: Google Benchmark JSON or summary.json, both into one summary ------------------------
def to_ns(value, unit):
    return value * {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]


def parse_name(name):
    """'contended/std::mutex/cs_ns:100/local_ns:100/real_time/threads:4' ->
    ('contended', 'std::mutex', (('cs_ns', 100), ('local_ns', 100)), 4)"""
    parts = name.split("/")
    if len(parts) < 2 or parts[0] not in SCENARIOS:
        return None
    scenario, lock = parts[0], parts[1]
    params, threads = [], 1
    for p in parts[2:]:
        if ":" not in p:
            continue  # real_time
        k, v = p.split(":", 1)
        if k == "threads":
            threads = int(v)
        elif k in PARAMS:
            params.append((k, int(v)))
    return scenario, lock, tuple(params), threads


def rounded(v):
    """DIGITS significant digits; integral values as ints (shorter JSON, the same numbers)."""
    r = float(f"{float(v):.{DIGITS}g}")
    return int(r) if r.is_integer() and abs(r) < 1e15 else r


def summary_entry(stats, scenario, lock, params, threads, values):
    """One benchmark of summary.json: the repetitions of each metric, the headline's statistics."""
    headline = METRICS[scenario][0]
    m = stats.median_ci(values.get(headline, []))
    entry = {"scenario": scenario, "lock": lock, "params": dict(params), "threads": threads,
             "metric": headline, "unit": UNITS[headline], "n": m.n}
    if m.n:
        entry.update({"median": rounded(m.median), "min": m.min, "max": m.max, "interval": [m.lo, m.hi],
                      "coverage": round(m.coverage, 4)})
    entry["values"] = values
    return entry


def summarize_run(data, path, stats):
    """The summary of a Google Benchmark JSON run (its iteration entries; aggregates ignored)."""
    ctx = data.get("context", {})
    if not isinstance(ctx, dict) or not any(k.startswith("lock.") for k in ctx):
        raise ReportError(f"{path}: the context names no locks; was it written by spinwise-bench?")
    runs = defaultdict(list)
    errors, expected = [], {}
    for b in data["benchmarks"]:
        if not isinstance(b, dict) or b.get("run_type", "iteration") != "iteration":
            continue
        if b.get("error_occurred"):
            errors.append(f"{b.get('name')}: {b.get('error_message', 'error')}")
            continue
        parsed = parse_name(b.get("run_name", b.get("name", "")))
        if parsed is None:
            continue
        runs[parsed].append(b)
        expected[parsed] = b.get("repetitions", 1)
    short = [f"{'/'.join([k[0], k[1]] + [f'{a}:{v}' for a, v in k[2]])}/threads:{k[3]}: "
             f"{len(runs[k])} of {n}" for k, n in expected.items() if len(runs[k]) < n]
    if short:
        print(f"report.py: {len(short)} benchmarks have fewer repetitions than asked: "
              + "; ".join(short[:5]), file=sys.stderr)
    entries = []
    for key in sorted(runs, key=sort_key):
        scenario, lock, params, threads = key
        reps = sorted(runs[key], key=lambda r: r.get("repetition_index", 0))
        values = {}
        for metric in METRICS[scenario]:
            if metric == "real_ns":
                vals = [to_ns(r["real_time"], r.get("time_unit", "ns")) for r in reps if is_number(r.get("real_time"))]
            else:
                vals = [r[metric] for r in reps if is_number(r.get(metric))]
            vals = [rounded(v) for v in vals if math.isfinite(v)]
            if vals and not (metric == "capped" and not any(vals)):  # capped: only where it happened
                values[metric] = vals
        entries.append((scenario, lock, params, threads, values))
    stats.prefetch(values[METRICS[scenario][0]] for scenario, _, _, _, values in entries
                   if METRICS[scenario][0] in values)  # one request line for every headline
    benchmarks = [summary_entry(stats, *e) for e in entries]
    if not benchmarks:
        raise ReportError(f"{path}: no spinwise-bench results in it")
    reps = max(e["n"] for e in benchmarks)
    run = {"machine": run_context.describe(run_context.from_tool(ctx)), "date": ctx.get("date", "?"), "mode": ctx.get("bench.mode", "?"), "repetitions": reps}
    return {"format": SUMMARY_FORMAT, "version": SUMMARY_VERSION,
            "about": "spinwise-bench run summarised by bench/micro/report.py: per benchmark the repetitions "
                     "of each metric the report reads, the headline metric's median, min, max and "
                     f"order-statistics interval of the median (coverage given); {DIGITS} significant digits",
            "source": os.path.basename(path), "run": run, "context": ctx, "errors": errors,
            "benchmarks": benchmarks}


def sort_key(key):
    scenario, lock, params, threads = key
    return SCENARIOS.index(scenario), lock, params, threads


def read_input(path):
    """The JSON of `path`, checked: a spinwise-bench JSON run (summarize_run makes its summary) or a
    summary.json."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise ReportError(f"{path}: cannot read a JSON benchmark run ({e})")
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise ReportError(f"{path}: no 'benchmarks' list; is this Google Benchmark JSON output "
                          "or a report.py summary.json?")
    if data.get("format") != SUMMARY_FORMAT:
        return data
    if data.get("version") != SUMMARY_VERSION:
        raise ReportError(f"{path}: summary version {data.get('version')}; this report.py reads {SUMMARY_VERSION}")
    if not isinstance(data.get("context"), dict):
        raise ReportError(f"{path}: summary without a 'context' object")
    return data


def unpack(summary, path="summary"):
    """(context, kinds, fifo, results, errors) of a summary; results: key -> {metric: [values]}."""
    ctx = summary["context"]
    kinds, fifo = {}, set()
    for k, v in ctx.items():
        if k.startswith("lock."):
            name = k[len("lock."):]
            kind, _, flag = str(v).partition(",")
            kinds[name] = kind
            if flag == "fifo":
                fifo.add(name)
    if not kinds:
        raise ReportError(f"{path}: the context names no locks; was it written by spinwise-bench?")
    results = {}
    for i, e in enumerate(summary["benchmarks"]):
        try:
            scenario, lock, threads = e["scenario"], e["lock"], int(e["threads"])
            params = tuple((k, int(v)) for k, v in e["params"].items())
            values = {m: [float(v) for v in vals] for m, vals in e["values"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as ex:
            raise ReportError(f"{path}: benchmark {i} is malformed ({ex!r})")
        if scenario not in SCENARIOS:
            raise ReportError(f"{path}: benchmark {i} has an unknown scenario '{scenario}'")
        results[(scenario, lock, params, threads)] = values
    if not results:
        raise ReportError(f"{path}: no spinwise-bench results in it")
    return ctx, kinds, fifo, results, list(summary.get("errors", []))


def write_summary(path, summary):
    """One benchmark a line: small diffs between runs, and still plain JSON."""
    head = {k: v for k, v in summary.items() if k != "benchmarks"}
    lines = ["{"]
    for k, v in head.items():
        lines.append(f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)},")
    lines.append('  "benchmarks": [')
    bs = summary["benchmarks"]
    for i, b in enumerate(bs):
        comma = "," if i + 1 < len(bs) else ""
        lines.append("    " + json.dumps(b, separators=(",", ":"), ensure_ascii=False) + comma)
    lines += ["  ]", "}"]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


# -- the report --------------------------------------------------------------------------------
class Report:
    def __init__(self, ctx, kinds, fifo, results, errors, stats):
        self.ctx, self.kinds, self.fifo, self.results, self.errors = ctx, kinds, fifo, results, errors
        self.stats = stats
        stats.prefetch(v for m in results.values() for v in m.values())  # every median, one request line
        self.lines = []
        self.plots = []  # (path, title, ylabel, logscale, {lock: {threads: (median, lo, hi)}})
        self.run = run_context.from_tool(ctx)
        self.cpus = int(self.run["cpus_allowed"] or ctx.get("num_cpus", 0) or 0)
        self.reps = max((len(v) for m in results.values() for v in m.values()), default=0)

    def out(self, s=""):
        self.lines.append(s)

    def kind(self, lock):
        return self.kinds.get(lock, "peer")

    def locks_in(self, scenario, params=None):
        names = {k[1] for k in self.results if k[0] == scenario and (params is None or k[2] == params)}
        order = {"floor": 0, "spinwise": 1, "peer": 2}
        return sorted(names, key=lambda n: (order.get(self.kind(n), 3), n))

    def sample(self, scenario, lock, params, threads, metric):
        """The repetitions of one metric of one benchmark, or None."""
        m = self.results.get((scenario, lock, params, threads))
        return None if m is None or not m.get(metric) else m[metric]

    def get(self, scenario, lock, params, threads, metric):
        """The median of the repetitions, or None."""
        s = self.sample(scenario, lock, params, threads, metric)
        return None if s is None else self.stats.median(s)

    def fmt_ci(self, sample):
        """`8.89 [8.80–9.01]` of a sample, or – without one."""
        return fmt_ci(self.stats.median_ci(sample) if sample else None)

    def capped(self, scenario, lock, params, threads):
        return any(v > 0 for v in (self.sample(scenario, lock, params, threads, "capped") or []))

    def table(self, header, rows, text_columns=1):
        self.out("| " + " | ".join(header) + " |")
        self.out("|" + "|".join("---" if i < text_columns else "---:" for i in range(len(header))) + "|")
        for r in rows:
            self.out("| " + " | ".join(r) + " |")
        self.out()

    # -- sections ------------------------------------------------------------------------------
    def machine(self):
        c, r = self.ctx, {k: "?" if v is None else v for k, v in self.run.items()}
        self.out("# spinwise-bench results")
        self.out()
        self.out(f"- **CPU:** {r['cpu_model']}, {c.get('num_cpus', '?')} CPUs "
                 f"({r['cpus_allowed']} allowed), {c.get('mhz_per_cpu', '?')} MHz reported")
        self.out(f"- **Kernel:** {r['kernel']}{'' if r['kernel_arch'] == '?' else ' ' + r['kernel_arch']}; "
                 f"glibc {c.get('bench.glibc', c.get('machine.glibc', '?'))}")
        self.out(f"- **Compiler:** {r['compiler']}; Google Benchmark library build: "
                 f"{c.get('library_build_type', '?')}")
        self.out(f"- **Date:** {c.get('date', '?')}; load average at start: {c.get('load_avg', '?')}")
        self.out(f"- **spinwise:** backend {r['arch']}, relax {r['relax']} "
                 f"= {fmt(float(self.run['relax_ns'] or 'nan'))} ns, counter {r['counter']} "
                 f"at {fmt(float(self.run['counter_hz'] or 'nan'))} Hz")
        self.out(f"- **Run:** mode {c.get('bench.mode', '?')}; `{c.get('bench.command', '?')}`; "
                 f"dependent work {fmt(float(c.get('bench.work_ns_per_iteration', 'nan')))} ns/iteration; "
                 f"handoff delay {c.get('bench.handoff_delay_ns', '?')} ns; "
                 f"libc single-threaded flag at measurement: {c.get('bench.libc_single_threaded', '?')}")
        counts = Counter(len(next(iter(m.values()))) for m in self.results.values() if m)
        reps = ", ".join(f"{n} ({k} benchmarks)" for n, k in sorted(counts.items()))
        self.out(f"- **Repetitions per benchmark:** {reps}" + ("; in random interleaving" if self.reps > 1 else ""))
        self.out(f"- **Peers missing:** {c.get('bench.peers_missing', '?')}")
        # The locks with results in this run: a run filtered to two locks lists those two (the
        # catalogue of every lock the binary has is in the context, not here).
        ran = {lock for (_, lock, _, _) in self.results}
        spin = [n for n in sorted(self.kinds) if self.kinds[n] == "spinwise" and n in ran]
        self.out(f"- **spinwise locks measured:** {', '.join(spin) if spin else 'none'}")
        capped = [k for k in self.results if self.capped(*k)]
        if capped:
            self.out(f"- **Benchmarks with a repetition stopped at the time cap ({c.get('bench.max_run_ms', '?')} ms; "
                     f"marked * in the tables; such a run reports what it did until then): {len(capped)}**")
        if self.errors:
            self.out(f"- **Benchmarks that failed ({len(self.errors)}):** " + "; ".join(self.errors))
        self.out()
        self.out("Ratios are speed-ups against a lock measured in the same run (above 1 = better than "
                 "the reference). *best peer* = the best non-spinwise lock of that scenario by median, floors "
                 "excluded.")
        self.out()
        self.legend()

    def legend(self):
        if self.reps < 2:
            self.out("**How sure:** this run has one repetition per benchmark, so no figure has a spread: each "
                     "is one run's, and a target is judged on it alone (said as \"one run: no spread\"). "
                     "`spinwise-bench --repetitions N` (N >= 3) gives the intervals, N >= 4 the verdicts on ratios.")
            self.out()
            return
        cov = self.stats.coverage(self.reps, 1)
        min_runs = self.stats.min_runs  # the runtime's kMinRunsForVerdict
        too_few = ("" if self.reps >= min_runs else
                   f" With {self.reps} repetitions no ratio is judged against 1 (a verdict needs {min_runs} a side: "
                   f"two samples of {self.reps} runs of one lock have disjoint ranges "
                   f"{2 / math.comb(2 * self.reps, self.reps):.0%} of the time, {min_runs} a side "
                   f"{2 / math.comb(2 * min_runs, min_runs):.1%}), so every ratio "
                   "carries `≈` (not shown to differ from 1); read the interval, or run "
                   f"`spinwise-bench --repetitions {min_runs}` or more.")
        self.out(f"**How sure:** each figure comes from the {self.reps} repetitions of each benchmark. A ratio "
                 "is written `1.23x [1.10–1.31]`: the ratio of the two medians and its 95% bootstrap "
                 f"interval ({self.stats.resamples} resamples, fixed seed). A leading `≈` marks a ratio not shown "
                 "to differ from 1: the interval holds 1, or with fewer than six repetitions a side the two locks' "
                 "min..max ranges overlap, or there are too few repetitions to judge (the rule of `include/spinwise/runtime/uncertainty.hpp`, the one "
                 f"`spinwise-stress --compare` applies).{too_few} An absolute figure is written `median [lo–hi]`, "
                 "lo–hi the median's distribution-free interval: below six repetitions that is min..max, "
                 f"which for {self.reps} repetitions holds the true median with probability {cov:.4g}, not 95%. "
                 "A target is *met* only when its whole interval is on the right side of the bound (and, "
                 "below six repetitions, both ranges too), *not met* only when it is wholly on the wrong "
                 "side, and *within noise* otherwise. Per-repetition values: `summary.json`.")
        self.out()

    def oneway(self):
        """The one-way core-to-core latency between the handoff's two CPUs: (samples, None) when the
        run has a c2c_oneway benchmark (runs before bench.c2c_oneway_ns), (None, ns) from the
        context, (None, None) when not measured."""
        s = self.sample("handoff", "c2c_oneway", (), 1, "p50_ns")
        if s is not None:
            return s, None
        try:
            v = float(self.ctx.get("bench.c2c_oneway_ns", "nan"))
        except ValueError:
            return None, None
        return None, (v if v > 0 else None)

    def over_oneway(self, sample):
        samples, const = self.oneway()
        if samples is not None:
            return self.stats.ratio(sample, samples)
        return self.stats.scaled(sample, const)

    def own_oneway(self, lock):
        """The one-way latency spinwise-bench measured right after each of `lock`'s handoff
        repetitions (c2c_ns), or None where a repetition lacks one (runs before it, or 0: not
        measured)."""
        p50 = self.sample("handoff", lock, (), 1, "p50_ns")
        own = self.sample("handoff", lock, (), 1, "c2c_ns")
        if p50 and own and len(own) == len(p50) and all(c > 0 for c in own):
            return own
        return None

    def handoff_over_oneway(self, lock):
        """A handoff's p50 over the one-way latency: each repetition over its own (the host may move
        a VM's vCPUs between repetitions, and the latency with them), else over the run's figure."""
        p50 = self.sample("handoff", lock, (), 1, "p50_ns")
        own = self.own_oneway(lock)
        if own is not None:
            return self.stats.scaled([p / c for p, c in zip(p50, own)], 1.0)
        return self.over_oneway(p50)

    def best(self, kind, scenario, params, threads, metric, higher_better):
        """(lock, median) of the best lock of `kind` ("peer" or "spinwise") in one cell, or None."""
        best = None
        for lock in self.locks_in(scenario, params):
            if self.kind(lock) != kind:
                continue
            v = self.get(scenario, lock, params, threads, metric)
            if v is None or v <= 0:
                continue
            if best is None or (v > best[1] if higher_better else v < best[1]):
                best = (lock, v)
        return best

    def best_peer(self, scenario, params, threads, metric, higher_better):
        return self.best("peer", scenario, params, threads, metric, higher_better)

    def uncontended(self):
        for scenario, title in (("uncontended", "Uncontended lock + unlock"),
                                ("uncontended_shared", "Uncontended lock_shared + unlock_shared")):
            locks = self.locks_in(scenario, ())
            if not locks:
                continue
            self.out(f"## {title}")
            self.out()
            self.out("One thread, in a process that has already started a thread (so glibc takes its "
                     "atomic paths). Time per pair; ratios are reference time / lock time.")
            self.out()
            refname = EXCLUSIVE_REF if scenario == "uncontended" else SHARED_REF
            s = lambda lock, scen=scenario: self.sample(scen, lock, (), 1, "real_ns")  # noqa: E731
            floor = self.sample("uncontended", "xchg_floor", (), 1, "real_ns")
            ref = s(refname)
            best = self.best_peer(scenario, (), 1, "real_ns", False)
            bestv = s(best[0]) if best else None
            rows = []
            for lock in locks:
                v = s(lock)
                rows.append([lock, self.kind(lock), self.fmt_ci(v), fmt_est(self.stats.ratio(v, floor), unit=""),
                             fmt_est(self.stats.ratio(ref, v)), fmt_est(self.stats.ratio(bestv, v))])
            self.table(["lock", "kind", "ns", "time ÷ xchg floor", f"vs {refname}",
                        f"vs best peer ({best[0] if best else '–'})"], rows, text_columns=2)

    def handoff(self):
        locks = [l for l in self.locks_in("handoff", ()) if l != "c2c_oneway"]
        if not locks:
            return
        samples, const = self.oneway()
        if samples is not None:
            c2c = (f"(CAS ping-pong, half a round trip): p50 {self.fmt_ci(samples)} ns, p99 "
                   f"{self.fmt_ci(self.sample('handoff', 'c2c_oneway', (), 1, 'p99_ns'))} ns")
        else:
            c2c = f"between the same two CPUs (half a round trip of one cache line, median of runs): {fmt(const)} ns"
        own = [c for lock in locks for c in (self.own_oneway(lock) or [])]
        if own:
            c2c = (f"between the same two CPUs, measured right after each repetition (half a round trip of one "
                   f"cache line): {fmt(min(own))}–{fmt(max(own))} ns over the handoff repetitions, "
                   f"{fmt(const)} ns at the run's start; *p50 ÷ one-way* divides each repetition's p50 by "
                   f"the latency measured after it")
        self.out("## Handoff latency")
        self.out()
        self.out(f"Release (stamped just before unlock) to acquire (stamped just after lock returns) between "
                 f"two pinned threads, the waiter already inside lock(). One-way core-to-core latency in the "
                 f"same run {c2c}. Ratios compare p50s.")
        self.out()
        ref = self.sample("handoff", EXCLUSIVE_REF, (), 1, "p50_ns")
        best = self.best_peer("handoff", (), 1, "p50_ns", False)
        bestv = self.sample("handoff", best[0], (), 1, "p50_ns") if best else None
        rows = []
        for lock in locks:
            g = lambda m: self.sample("handoff", lock, (), 1, m)  # noqa: E731
            mark = "*" if self.capped("handoff", lock, (), 1) else ""
            rows.append([lock + mark, self.kind(lock), self.fmt_ci(g("p50_ns")), self.fmt_ci(g("p90_ns")),
                         self.fmt_ci(g("p99_ns")),
                         self.fmt_ci(g("p999_ns")), fmt_est(self.handoff_over_oneway(lock), unit=""),
                         fmt_est(self.stats.ratio(ref, g("p50_ns"))), fmt_est(self.stats.ratio(bestv, g("p50_ns")))])
        self.table(["lock", "kind", "p50 ns", "p90 ns", "p99 ns", "p99.9 ns", "p50 ÷ one-way",
                    f"vs {EXCLUSIVE_REF}", f"vs best peer ({best[0] if best else '–'})"], rows, text_columns=2)

    def contended_like(self, scenario, heading, ref_name, plot_dir):
        param_sets = sorted({k[2] for k in self.results if k[0] == scenario})
        if not param_sets:
            return
        self.out(f"## {heading}")
        self.out()
        if scenario == "contended":
            self.out("abseil's BM_Contended shape: each thread takes the lock, does the critical section "
                     "(dependent work on data the lock guards), drops it, does local work; real time. "
                     f"Threads above {self.cpus or 'the CPU count'} are oversubscribed.")
        else:
            self.out("Each operation is a read (lock_shared) with the given probability, else a write "
                     "(exclusive); the critical section and local work as in the contended scenario.")
        self.out()
        for params in param_sets:
            locks = self.locks_in(scenario, params)
            threads = sorted({k[3] for k in self.results if k[0] == scenario and k[2] == params})
            s = lambda lock, t, m="acq_per_s": self.sample(scenario, lock, params, t, m)  # noqa: E731
            self.out(f"### {param_text(params)}")
            self.out()
            best = {t: self.best_peer(scenario, params, t, "acq_per_s", True) for t in threads}
            refv = {t: s(ref_name, t) for t in threads}
            bestv = {t: s(best[t][0], t) if best[t] else None for t in threads}
            self.out(f"Throughput, acquisitions/s (reference row: {ref_name}; best peer row: the best "
                     f"non-spinwise lock per thread count by median):")
            self.out()
            head = ["lock"] + [f"{t} thr" for t in threads]
            rows = [[f"**{ref_name}** (acq/s)"] + [self.fmt_ci(refv[t]) for t in threads],
                    ["**best peer** (acq/s)"] + [f"{self.fmt_ci(bestv[t])} {best[t][0]}" if best[t] else "–"
                                                 for t in threads]]
            self.table(head, rows)
            for title, against in ((f"Throughput ratio vs {ref_name}", refv),
                                   ("Throughput ratio vs the best peer", bestv)):
                self.out(title + ":")
                self.out()
                rows = []
                for lock in locks:
                    cells = [lock + (" (fifo)" if lock in self.fifo else "")]
                    for t in threads:
                        mark = "*" if self.capped(scenario, lock, params, t) else ""
                        cells.append(fmt_est(self.stats.ratio(s(lock, t), against[t])) + mark)
                    rows.append(cells)
                self.table(head, rows)
            for metric, title in (("fair_cov", "Fairness: coefficient of variation of per-thread acquisitions "
                                               "(0 = equal shares; per-thread min/max in the run's raw JSON)"),
                                  ("cpu_ns_per_acq", "CPU time per acquisition, ns (all threads)"),
                                  ("csw_per_acq", "Context switches per acquisition")):
                self.out(title + ":")
                self.out()
                rows = [[lock] + [self.fmt_ci(s(lock, t, metric)) for t in threads] for lock in locks]
                self.table(head, rows)
            # One plot of the locks with their default policies beside the peers, and, where
            # there are policy variants, one of those with the reference: 20 lines do not read.
            variants = [l for l in locks if "<" in l or "+" in l]
            groups = [("locks", [l for l in locks if l not in variants])]
            if variants:
                bases = {v.split("<")[0].split("+")[0] for v in variants}
                groups.append(("policies", sorted(bases & set(locks)) + variants + [ref_name]))
            slug = f"{scenario}_{param_slug(params)}"
            for group, members in groups:
                for metric, what, log in (("acq_per_s", "throughput (acquisitions/s)", True),
                                          ("fair_cov", "fairness (CoV of per-thread acquisitions)", False)):
                    series = {}
                    for lock in members:
                        series[lock] = {}
                        for t in threads:
                            v = s(lock, t, metric)
                            m = self.stats.median_ci(v) if v else None
                            series[lock][t] = (m.median, m.lo, m.hi) if m and m.n else None
                    path = os.path.join(plot_dir, f"{slug}_{group}_{metric}.png")
                    title = f"{heading}, {'policy variants' if group == 'policies' else 'locks'}: {param_text(params)}"
                    self.plots.append((path, title, what, log, series))
                    self.out(f"![{what}, {group}](plots/{os.path.basename(path)})")
                    self.out()

    def targets(self):
        """The bench targets (speed against the floor and the peers, fairness, parity with std::mutex,
        the cost of statistics), each judged against its interval."""
        res = []

        def add(name, judgement, detail):
            res.append((name, judgement, detail))

        def cells(found, what="cells"):
            """(judgement, detail) of a target over cells: found = [(label, figure, judgement)]."""
            j = combine([x[2] for x in found])
            if j == NOT_MEASURED:
                return j, "not in this run"
            plain = [(label, text, jj.replace(ONE_RUN, "")) for label, text, jj in found]
            tally = Counter(jj for _, _, jj in plain)
            detail = f"{what}: {len(found)}; " + ", ".join(f"{tally[k]} {k}" for k in (MET, NOISE, NOT_MET) if tally[k])
            for k in (NOT_MET, NOISE):
                bad = [f"{label}: {text}" for label, text, jj in plain if jj == k]
                if bad:
                    detail += f"; {k}: " + "; ".join(bad)
            return j, detail

        un = lambda lock: self.sample("uncontended", lock, (), 1, "real_ns")  # noqa: E731
        floor, ttas, stdm = un("xchg_floor"), un("ttas_mutex"), un(EXCLUSIVE_REF)
        e = self.stats.ratio(ttas, floor)
        add("uncontended ttas_mutex within 1.1x of the xchg floor", judge(e, 1.1, at_least=False),
            f"ttas_mutex {self.fmt_ci(ttas)} ns / floor {self.fmt_ci(floor)} ns = {fmt_target(e)}")
        e = self.stats.ratio(stdm, ttas)
        add("uncontended ttas_mutex at least 2x faster than std::mutex", judge(e, 2.0),
            f"std::mutex {self.fmt_ci(stdm)} ns / ttas_mutex {self.fmt_ci(ttas)} ns = {fmt_target(e)}")

        keys = sorted({(k[2], k[3]) for k in self.results if k[0] == "contended"})
        con = lambda lock, params, t, m="acq_per_s": self.sample("contended", lock, params, t, m)  # noqa: E731
        best_cells, fair_cells = [], []
        for params, t in keys:
            bs = self.best("spinwise", "contended", params, t, "acq_per_s", True)
            bp = self.best_peer("contended", params, t, "acq_per_s", True)
            if not bs or not bp:
                continue
            e = self.stats.ratio(con(bs[0], params, t), con(bp[0], params, t))
            best_cells.append((f"{param_text(params)}, {t} thr: {bs[0]} vs {bp[0]}", fmt_target(e),
                               judge(e, 1.0)))
            if bs[0] in self.fifo:
                cov = con(bs[0], params, t, "fair_cov")
                if cov is not None:
                    fair_cells.append((f"{param_text(params)}, {t} thr: {bs[0]} CoV", self.fmt_ci(cov),
                                       judge(self.stats.scaled(cov, 0.1), 1.0, at_least=False)))
        add("every contended scenario: best spinwise lock >= best peer throughput", *cells(best_cells, "scenarios"))
        if fair_cells:
            add("fairness CoV <= 0.1 where the best spinwise lock claims fairness (fifo)",
                *cells(fair_cells, "scenarios whose best spinwise lock is FIFO"))
        else:
            add("fairness CoV <= 0.1 where the best spinwise lock claims fairness (fifo)",
                MET if best_cells else NOT_MEASURED,
                "no scenario's best spinwise lock is FIFO" if best_cells else "not in this run")

        def vs(lock, ref, scenario_filter, at_least=1.0, prefix=""):
            """Contended cells of `lock` against `ref` that pass the filter, each judged lock/ref >= at_least."""
            found = []
            for params, t in keys:
                if not scenario_filter(t):
                    continue
                e = self.stats.ratio(con(lock, params, t), con(ref, params, t))
                if e is not None:
                    found.append((f"{prefix}{param_text(params)}, {t} thr", fmt_target(e), judge(e, at_least)))
            return found

        def geo_vs(a_lock, b_lock, scenario, bound):
            """(judgement, detail): the geometric mean over `scenario`'s cells of a_lock's throughput
            over b_lock's, with its bootstrap interval, judged against >= bound."""
            pairs, per = [], []
            for params, t in sorted({(k[2], k[3]) for k in self.results if k[0] == scenario}):
                a = self.sample(scenario, a_lock, params, t, "acq_per_s")
                b = self.sample(scenario, b_lock, params, t, "acq_per_s")
                e = self.stats.ratio(a, b) if a and b else None
                if e is not None:
                    pairs.append((a, b))
                    per.append((e, f"{param_text(params)}, {t} thr"))
            if not per:
                return NOT_MEASURED, "not in this run"
            geo = self.stats.geomean(pairs)
            lo = min(per, key=lambda x: x[0].value)
            hi = max(per, key=lambda x: x[0].value)
            below = Counter(judge(x, bound).replace(ONE_RUN, "") for x, _ in per)
            detail = (f"{a_lock} / {b_lock}: geometric mean of {len(per)} cells {fmt_target(geo)} (bootstrap "
                      f"over all their runs); range {fmt_target(lo[0])} ({lo[1]}) to {fmt_target(hi[0])} "
                      f"({hi[1]}); cells below {bound:g}x: {below[NOT_MET]} beyond noise, {below[NOISE]} "
                      f"within noise")
            return judge(geo, bound), detail

        add("hybrid_mutex >= std::mutex in every contended scenario",
            *cells(vs("hybrid_mutex", EXCLUSIVE_REF, lambda t: True), "scenarios"))
        for scen, metric, what in (("uncontended", "real_ns", "ns"), ("handoff", "p50_ns", "p50 ns")):
            h = self.sample(scen, "hybrid_mutex", (), 1, metric)
            m = self.sample(scen, EXCLUSIVE_REF, (), 1, metric)
            e = self.stats.ratio(m, h)
            add(f"hybrid_mutex at least matches std::mutex, {scen}", judge(e, 1.0),
                f"std::mutex {self.fmt_ci(m)} {what} / hybrid_mutex {self.fmt_ci(h)} {what} = {fmt_target(e)}")
        oversub16 = (lambda t: self.cpus and t >= 16 * self.cpus)
        add(f"hybrid_mutex beats tbb::spin_mutex at 16x oversubscription ({16 * self.cpus} threads)",
            *cells(vs("hybrid_mutex", "tbb::spin_mutex", oversub16), "scenarios"))
        for lock in ("ttas_mutex", "hybrid_mutex"):
            add(f"locks: {lock} >= std::mutex at 2 threads",
                *cells(vs(lock, EXCLUSIVE_REF, lambda t: t == 2), "scenarios"))
        oversub = (lambda t: self.cpus and t in (4 * self.cpus, 16 * self.cpus))
        add("locks: hybrid_mutex >= std::mutex at 4x and 16x oversubscription",
            *cells(vs("hybrid_mutex", EXCLUSIVE_REF, oversub), "scenarios"))
        found = []
        for lock in self.locks_in("contended"):
            if self.kind(lock) == "spinwise":
                found += vs(lock, EXCLUSIVE_REF, oversub, at_least=0.5, prefix=f"{lock} ")
        add("locks: no spinwise lock below 0.5x std::mutex at 4x and 16x oversubscription", *cells(found))

        # The adaptive policy: no knob against the fixed default, and against tbb::spin_mutex
        # where hybrid_mutex trailed it (16x oversubscription, 1000 ns critical sections).
        for lock in ("hybrid_mutex", "ttas_mutex"):
            add(f"adaptive: {lock}<adaptive> >= {lock} (the fixed default) over the contended cells "
                f"(geometric mean)", *geo_vs(lock + "<adaptive>", lock, "contended", 1.0))
        long_cs = (lambda t: self.cpus and t >= 16 * self.cpus)
        found = [c for c in vs("hybrid_mutex<adaptive>", "tbb::spin_mutex", long_cs)
                 if c[0].startswith("critical section 1000 ns")]
        add(f"adaptive: hybrid_mutex<adaptive> >= tbb::spin_mutex at 16x oversubscription, 1000 ns critical "
            f"sections ({16 * self.cpus} threads)", *cells(found, "scenarios"))

        # Starvation: the slowest thread's acquisitions over the fastest's, per repetition, and beside
        # it the same two threads' CPU time in the window (where the run has it): a starved thread
        # that had as much CPU as the fastest was refused the lock; one that had none was off its
        # CPU. A repetition whose fastest thread shows no CPU time (its clock unread) has no CPU ratio.
        def min_over_max(lock, params, t, low="fair_min", high="fair_max", skip_zero=False):
            mn = self.sample("contended", lock, params, t, low)
            mx = self.sample("contended", lock, params, t, high)
            if not mn or not mx:
                return None
            return [a / b if b > 0 else 0.0 for a, b in zip(mn, mx) if b > 0 or not skip_zero] or None

        for lock in ("ttas_mutex", "hybrid_mutex", "ttas_mutex<adaptive>", "hybrid_mutex<adaptive>"):
            found = []
            for params, t in keys:
                if not (self.cpus and t >= 16 * self.cpus):
                    continue
                r = min_over_max(lock, params, t)
                if r:
                    cpu = min_over_max(lock, params, t, "fair_min_cpu_ms", "fair_max_cpu_ms", skip_zero=True)
                    # How long the windows lasted: a window shorter than the scheduler's round over
                    # 16 threads a CPU leaves some threads no turn in it, whatever the lock.
                    # A window that never opened counts from each thread's start: say how many.
                    win = self.sample("contended", lock, params, t, "fair_window_ms")
                    shut = sum(1 for o in self.sample("contended", lock, params, t, "fair_window_open") or [] if o == 0)
                    notes = ([f"CPU time ratio {self.fmt_ci(cpu)}"] if cpu else []) + (
                        [f"window {fmt(min(win))}–{fmt(max(win))} ms"
                         + (f", {shut} from each thread's start" if shut else "")] if win else [])
                    text = self.fmt_ci(r) + (f" ({'; '.join(notes)})" if notes else "")
                    found.append((f"{param_text(params)}, {t} thr", text, judge(self.stats.scaled(r, 0.3), 1.0)))
            add(f"starvation: {lock} slowest/fastest thread's acquisitions >= 0.3 at 16x oversubscription",
                *cells(found, "scenarios"))

        for lock in self.locks_in("handoff", ()):
            if self.kind(lock) != "spinwise":
                continue
            p50 = self.sample("handoff", lock, (), 1, "p50_ns")
            e = self.handoff_over_oneway(lock)
            own = self.own_oneway(lock)
            samples, const = self.oneway()
            ref = own or samples  # per repetition, else the run's c2c_oneway benchmark
            c2c = self.fmt_ci(ref) if ref is not None else fmt(const)
            how = ", each repetition over the latency measured after it" if own else ""
            add(f"handoff p50 of {lock} within 3x one-way core-to-core", judge(e, 3.0, at_least=False),
                f"{self.fmt_ci(p50)} ns / {c2c} ns = {fmt_target(e)}{how}")
        if not any(self.kind(l) == "spinwise" for l in self.locks_in("handoff", ())):
            add("handoff p50 within 3x one-way core-to-core", NOT_MEASURED, "no spinwise lock in this run")

        for lock in ("ttas_mutex", "hybrid_mutex"):
            on, off = un(lock + "+stats"), un(lock)
            e = self.stats.ratio(on, off)
            add(f"statistics: uncontended {lock} with statistics within 1.15x of without",
                judge(e, 1.15, at_least=False), f"{self.fmt_ci(on)} ns / {self.fmt_ci(off)} ns = {fmt_target(e)}")
            add(f"statistics: contended {lock} with statistics within 5% of without (geometric mean)",
                *geo_vs(lock + "+stats", lock, "contended", 0.95))

        # The run-time switches: counting switched off costs what no_stats costs (within 2%);
        # tracking on is reported, with no bound but its own.
        on, off = un("hybrid_mutex+stats_off"), un("hybrid_mutex")
        e = self.stats.ratio(on, off)
        add("statistics: uncontended hybrid_mutex with statistics switched off at run time within 1.02x "
            "of no_stats", judge(e, 1.02, at_least=False),
            f"{self.fmt_ci(on)} ns / {self.fmt_ci(off)} ns = {fmt_target(e)}")
        on = un("hybrid_mutex+tracking")
        e = self.stats.ratio(on, off)
        add("statistics: uncontended hybrid_mutex with holder tracking on (cost, no target)",
            "reported" if e is not None else NOT_MEASURED,
            f"{self.fmt_ci(on)} ns / {self.fmt_ci(off)} ns = {fmt_target(e)}")

        # The shared latches' default became time_policy after 0.2.0; <innodb> is the old default (the
        # InnoDB replay) in the same run, so this is the change of default, before/after.
        for lock in ("hybrid_shared_mutex", "sx_lock"):
            add(f"shared latches: {lock} (time, the default) loses no throughput to {lock}<innodb> "
                f"(geometric mean over the rw cells)", *geo_vs(lock, lock + "<innodb>", "rw", 1.0))

        self.out("## Targets, judged from this run")
        self.out()
        self.out("Each target is judged against the interval of its ratio (see *How sure* above): met, "
                 "not met, or within noise when the interval straddles the bound.")
        self.out()
        self.table(["target", "result", "detail"], [[a, b, c] for a, b, c in res], text_columns=3)

    def render(self, plot_dir):
        self.machine()
        self.targets()
        self.uncontended()
        self.handoff()
        self.contended_like("contended", "Contended", EXCLUSIVE_REF, plot_dir)
        self.contended_like("rw", "Read/write mixes", SHARED_REF, plot_dir)
        return "\n".join(self.lines).rstrip() + "\n"


# -- plots -------------------------------------------------------------------------------------
# Solid saturated lines for spinwise's locks, dashed muted ones for the peers; each point the
# median with a bar over its interval (min..max below six repetitions), nudged sideways a little
# per lock so that bars at one thread count do not hide each other.
OURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#000000", "#e377c2", "#17becf", "#8c564b"]
PEERS = ["#7f7f7f", "#8c564b", "#bcbd22", "#17becf", "#e377c2", "#393b79", "#637939", "#843c39", "#d6616b"]
NUDGE = 0.012  # log2 units between neighbouring locks' points: 20 locks span +-12%


def plot(path, title, ylabel, logscale, series, kinds):
    data_path = path[:-4] + ".dat"
    threads = sorted({t for s in series.values() for t in s})

    def ok(v):
        return v is not None and (v[0] > 0 or (not logscale and v[0] == 0))

    locks = [l for l in series if any(ok(v) for v in series[l].values())]
    if not locks or not threads:
        return False
    with open(data_path, "w", encoding="utf-8") as f:
        f.write("# threads, then per lock: x (nudged), median, interval low, interval high: "
                + " ".join(l.replace(" ", "_") for l in locks) + "\n")
        for t in threads:
            row = [str(t)]
            for i, l in enumerate(locks):
                v = series[l].get(t)
                x = t * 2 ** ((i - (len(locks) - 1) / 2) * NUDGE)
                if ok(v):
                    med, lo, hi = (float(u) for u in v)
                    if logscale and lo <= 0:
                        lo = med
                    row += [repr(x), repr(med), repr(lo), repr(hi)]
                else:
                    row += [repr(x), "?", "?", "?"]
            f.write(" ".join(row) + "\n")
    cmds = [
        gp.terminal(1100, 650, font="sans,10"),
        f"set output {gp.quote(path)}",
        "set datafile missing '?'",
        f"set title {gp.quote(title + ' (bars: interval of the median over the repetitions)')} noenhanced",
        "set xlabel 'threads'",
        f"set ylabel {gp.quote(ylabel)} noenhanced",
        "set logscale x 2",
        "set xtics (" + ", ".join(f"'{t}' {t}" for t in threads) + ")",
        f"set xrange [{threads[0] * 0.85}:{threads[-1] * 1.15}]",
        "set grid",
        "set bars small",
        "set key outside right top noenhanced",
        "set format y '%.2s%c'" if logscale else "set yrange [0:*]",
    ]
    if logscale:
        cmds.append("set logscale y 10")
    plots = []
    n_ours = n_peers = 0
    for i, lock in enumerate(locks):
        ours = kinds.get(lock) == "spinwise"
        if ours:
            color, pt = OURS[n_ours % len(OURS)], 7 + 2 * (n_ours // len(OURS))
            n_ours += 1
        else:
            color, pt = PEERS[n_peers % len(PEERS)], 4 + 2 * (n_peers // len(PEERS))
            n_peers += 1
        c = 2 + 4 * i
        style = f"with yerrorlines lw {2.5 if ours else 1.8} dt {1 if ours else 2} pt {pt} ps 0.9 lc rgb '{color}'"
        plots.append(f"{gp.quote(data_path)} using {c}:{c + 1}:{c + 2}:{c + 3} {style} title {gp.quote(lock)}")
    cmds.append("plot " + ", \\\n     ".join(plots))
    try:
        gp.run(cmds)
    except gp.PlotError as e:
        raise ReportError(f"gnuplot failed on {path}: {e}") from None
    return True


def make_report(summary, out_dir, stats, plots=False, source="summary"):
    """Writes out_dir/report.md and, with gnuplot, out_dir/plots/*; returns (report text, plots made).
    `stats`: a Stats, the runtime that answers every estimate."""
    ctx, kinds, fifo, results, errors = unpack(summary, source)
    plot_dir = os.path.join(out_dir, "plots")
    rep = Report(ctx, kinds, fifo, results, errors, stats)
    text = rep.render(plot_dir)
    os.makedirs(out_dir, exist_ok=True)
    made = 0
    if plots:
        os.makedirs(plot_dir, exist_ok=True)
        for old in os.listdir(plot_dir):  # plots/ is ours: no stale plot outlives a re-run
            if old.endswith((".png", ".dat")):
                os.remove(os.path.join(plot_dir, old))
        for path, title, ylabel, log, series in rep.plots:
            made += plot(path, title, ylabel, log, series, kinds)
    else:
        text = "\n".join(l for l in text.split("\n") if not l.startswith("![")) + "\n"
    with open(os.path.join(out_dir, "report.md"), "w", encoding="utf-8") as f:
        f.write(text)
    return text, made


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", help="spinwise-bench --benchmark_out=... --benchmark_out_format=json output, "
                                 "or a summary.json written by this script")
    ap.add_argument("--out", help="output folder (default: the input's folder)")
    ap.add_argument("--no-plots", action="store_true", help="tables only")
    ap.add_argument("--bench", metavar="PATH",
                    help=f"the spinwise-bench whose --estimate answers the statistics (default: ${BENCH_ENV}, "
                         "else one next to the input, in the repository's build folders or on PATH)")
    args = ap.parse_args(argv)
    out_dir = args.out or os.path.dirname(os.path.abspath(args.json))
    try:
        plots = not args.no_plots
        if plots and not gp.available():
            raise ReportError("gnuplot not found (Debian: gnuplot-nox); use --no-plots for tables only")
        data = read_input(args.json)  # a bad input is said first, whatever the spinwise-bench
        with Stats(find_bench(args.bench, args.json)) as stats:
            summary = data if data.get("format") == SUMMARY_FORMAT else summarize_run(data, args.json, stats)
            _, made = make_report(summary, out_dir, stats, plots, args.json)
        write_summary(os.path.join(out_dir, "summary.json"), summary)
    except (ReportError, OSError) as e:
        print(f"report.py: {e}", file=sys.stderr)
        return 1
    errors = summary.get("errors", [])
    print(f"report.py: wrote {os.path.join(out_dir, 'report.md')}, summary.json and {made} plots"
          + (f"; {len(errors)} benchmarks had failed" if errors else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
