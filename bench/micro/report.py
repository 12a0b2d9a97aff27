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
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # reporting/, also when loaded by path
from reporting import ReportError  # noqa: E402  (the parts, one job a module: reporting/__init__.py)
from reporting.estimates import (  # noqa: E402,F401  (bench/compare.py and the tests use them from here)
    BENCH_ENV, HIGHER, INSUFFICIENT, LOWER, MET, NOISE, NOT_MEASURED, NOT_MET, ONE_RUN, WITHIN_NOISE, Stats,
    combine, find_bench, judge)
from reporting.plots import plot  # noqa: E402
from reporting.summary import SUMMARY_FORMAT, read_input, summarize_run, unpack, write_summary  # noqa: E402
from reporting.tables import Report  # noqa: E402
from reporting.text import fmt_est  # noqa: E402,F401
import plot as gp  # noqa: E402  (bench/plot.py, on the path reporting/__init__.py puts it on)


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
