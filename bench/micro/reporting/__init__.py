"""bench/micro/report.py's parts, one job a module:

    estimates  spinwise's statistics, asked of `spinwise-bench --estimate`, and the targets' verdicts
    summary    the input: a Google Benchmark JSON run or a summary.json, read into one summary
    text       how a number, an interval and a benchmark's parameters are written
    results    one run's results, looked up by cell (samples, medians, the best lock, the one-way latency)
    targets    the bench targets, each judged against its interval
    tables     the markdown report, section by section
    plots      the PNG plots, through gnuplot

report.py is the command line over them.
"""

import os
import sys

# bench/plot.py and bench/run_context.py: the scripts' shared gnuplot driver and run-context reader.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


class ReportError(Exception):
    """A bad input, a missing tool or a refused request: report.py says it and exits 1."""
