"""The input, read into one summary: a Google Benchmark JSON run of spinwise-bench (summarize_run) or
a summary.json this report wrote (read_input checks it); unpack() gives the report its cells, and
write_summary() writes the summary one benchmark a line."""

import json
import math
import os
import sys
from collections import defaultdict

import run_context  # the run context's one reader (bench/run_context.py)
from reporting import ReportError

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


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


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

