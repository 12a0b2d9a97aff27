#!/usr/bin/env python3
"""Runs two builds of spinwise-cell (bench/compare/cell.cpp) paired and interleaved, and says per
cell whether B differs from A beyond the noise.

    bench/compare/compare.py --a CELL_A --b CELL_B [--label-a A] [--label-b B] [--locks L,...]
                             [--cells C,...] [--pairs N] [--ms N] [--out FILE.md] [--json FILE]

bench/compare.sh builds the two binaries from two revisions and calls this; it can also be run on
any two builds by hand.

How it decides. Each (cell, lock) runs once per build per round, A and B back to back, seconds
apart, in an order that alternates from one lock and round to the next (A B, then B A), so slow
drift (the host moving the vCPUs between core complexes, a neighbour's load) falls on both sides
of a pair. The ratio B/A is taken per pair, and the report gives the median of the pair ratios
with its distribution-free 95% interval (order statistics: the rule of
include/spinwise/runtime/uncertainty.hpp, answered by the runtime through `spinwise-bench
--estimate` as report.py asks it; --bench PATH or $SPINWISE_BENCH says which spinwise-bench, else
report.py's search finds one in the repository's build folders or on PATH). A verdict needs at
least six pairs, the fewest whose min..max covers the median at 95% or more (96.9%); with fewer it
says "too few pairs". Otherwise
"higher" or "lower" when the interval excludes 1, "within noise" when it holds it.

The peers (std_mutex, tbb_spin_mutex) run in both builds too: their code is the same on both sides,
so their B/A is an A/A control measured in the same run, and any verdict on them is a false alarm
that says how far to trust the others. Each lock is also set against each peer within build B
(the ratio per round, the same rule).

Python 3 standard library and spinwise-bench (for --estimate).
"""

import argparse
import atexit
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "micro"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import report  # noqa: E402  (the runtime's statistics, as report.py asks for them)
import run_context  # noqa: E402  (the machine, named as spinwise's tools name it)

MIN_PAIRS = 6
PEERS = ("std_mutex", "tbb_spin_mutex")
# Per cell kind: the metrics read, and for each whether higher is better.
METRICS = {
    "uncontended": (("mops", True),),
    "contended": (("mops", True), ("cpu_ns_per_op", False), ("jain", True)),
    "handoff": (("handoff_ns", False),),
}
WORDS = {  # what a verdict means, per metric: (when B is higher, when B is lower)
    "mops": ("faster", "slower"),
    "cpu_ns_per_op": ("more CPU", "less CPU"),
    "jain": ("fairer", "less fair"),
    "handoff_ns": ("slower handoff", "faster handoff"),
}


class CompareError(Exception):
    pass


def cell_kind(cell):
    if cell == "uncontended":
        return "uncontended"
    if cell == "handoff":
        return "handoff"
    return "contended"


def listing(binary):
    out = subprocess.run([binary, "--list"], check=True, capture_output=True, text=True).stdout
    locks = [l.split(None, 1)[1] for l in out.splitlines() if l.startswith("lock ")]
    cells = [l.split(None, 1)[1] for l in out.splitlines() if l.startswith("cell ")]
    return locks, cells


def run_cell(binary, lock, cell, ms):
    p = subprocess.run([binary, "--lock", lock, "--cell", cell, "--ms", str(ms)], capture_output=True, text=True,
                       timeout=60 + ms / 1000 * 10)
    if p.returncode != 0:
        raise CompareError(f"{binary} --lock {lock} --cell {cell} failed ({p.returncode}): {p.stderr.strip()}")
    return json.loads(p.stdout)


def verdict(ci, higher_is_better, metric):
    if ci.n < MIN_PAIRS:
        return "too few pairs", 0
    if ci.lo > 1:
        return WORDS[metric][0], 1 if higher_is_better else -1
    if ci.hi < 1:
        return WORDS[metric][1], -1 if higher_is_better else 1
    return "within noise", 0


def busy_share(seconds=2.0):
    """The share of CPU time not idle over `seconds` (all CPUs, /proc/stat): what else runs now.
    The load average lags by minutes and counts a previous run's threads; this does not."""
    def snap():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + (v[4] if len(v) > 4 else 0)  # total, idle + iowait
    try:
        t0, i0 = snap()
        time.sleep(seconds)
        t1, i1 = snap()
    except (OSError, ValueError, IndexError):
        return None
    return 1.0 - (i1 - i0) / (t1 - t0) if t1 > t0 else None


def relax_ns(binary):
    vals = []
    for _ in range(5):
        out = subprocess.run([binary, "--relax-ns"], check=True, capture_output=True, text=True).stdout
        vals.append(float(out))
    return sorted(vals)[len(vals) // 2]


BENCH = None  # --bench: the spinwise-bench whose --estimate answers; None: report.find_bench's search
_stats = []


def median_ci(sample):
    """The median of a sample with its interval, the runtime's (one spinwise-bench --estimate for
    the whole comparison, started at the first use)."""
    if not _stats:
        _stats.append(report.Stats(report.find_bench(BENCH)))
        atexit.register(_stats[0].close)
    return _stats[0].median_ci(sample)


def paired(num, den, metric):
    """The median of the per-round ratios num/den of `metric`, with its interval (rounds where
    either side is missing or the denominator is 0 are left out)."""
    return median_ci([n[metric] / d[metric] for n, d in zip(num, den) if n and d and d[metric] > 0])


def analyse(runs, cells, locks, peers):
    """runs[(cell, lock, side)] = list of per-round results (None where missing)."""
    rows = []
    for cell in cells:
        for lock in locks:
            a, b = runs.get((cell, lock, "a")), runs.get((cell, lock, "b"))
            if not a or not b:
                continue
            for metric, higher in METRICS[cell_kind(cell)]:
                ci = paired(b, a, metric)
                word, sign = verdict(ci, higher, metric)
                rows.append({"cell": cell, "lock": lock, "metric": metric, "peer": lock in peers,
                             "n": ci.n, "ratio": ci.median, "lo": ci.lo, "hi": ci.hi, "coverage": ci.coverage,
                             "verdict": word, "sign": sign,
                             "a_median": median_ci([r[metric] for r in a if r]).median,
                             "b_median": median_ci([r[metric] for r in b if r]).median})
    return rows


def against_peers(runs, cells, locks, peers, side="b"):
    rows = []
    for cell in cells:
        if cell_kind(cell) == "uncontended" or cell_kind(cell) == "handoff":
            metric, higher = ("mops", True) if cell_kind(cell) == "uncontended" else ("handoff_ns", False)
        else:
            metric, higher = "mops", True
        for lock in locks:
            if lock in peers:
                continue
            mine = runs.get((cell, lock, side))
            for peer in peers:
                theirs = runs.get((cell, peer, side))
                if not mine or not theirs:
                    continue
                # A speed-up: above 1 is better, so a lower-is-better metric is theirs / mine.
                ci = paired(mine, theirs, metric) if higher else paired(theirs, mine, metric)
                word = ("too few pairs" if ci.n < MIN_PAIRS else
                        "ahead" if ci.lo > 1 else "behind" if ci.hi < 1 else "within noise")
                rows.append({"cell": cell, "lock": lock, "peer": peer, "metric": metric, "n": ci.n,
                             "speedup": ci.median, "lo": ci.lo, "hi": ci.hi, "verdict": word})
    return rows


def variants(runs, cells, locks, side="b"):
    """Each policy variant (`<lock>_<policy>`, e.g. ttas_mutex_prompt) against its default lock
    within one build, per round: what choosing the variant by name trades."""
    rows = []
    for lock in locks:
        base = next((b for b in locks if lock.startswith(b + "_")), None)
        if base is None:
            continue
        for cell in cells:
            mine, theirs = runs.get((cell, lock, side)), runs.get((cell, base, side))
            if not mine or not theirs:
                continue
            for metric, higher in METRICS[cell_kind(cell)]:
                ci = paired(mine, theirs, metric)
                word, _ = verdict(ci, higher, metric)
                rows.append({"cell": cell, "lock": lock, "base": base, "metric": metric, "n": ci.n,
                             "ratio": ci.median, "lo": ci.lo, "hi": ci.hi, "verdict": word})
    return rows


def turns_kept(runs, cells, locks):
    """Turns kept (the share of acquisitions made by the thread that held the lock last), the
    median of each side, in the contended cells: an order measure with no verdict (near 0 for a FIFO
    lock while the others wait, so a ratio says little)."""
    rows = []
    for cell in cells:
        if cell_kind(cell) != "contended":
            continue
        for lock in locks:
            a, b = runs.get((cell, lock, "a")), runs.get((cell, lock, "b"))
            kept_a = [r["kept"] for r in a or [] if r and "kept" in r]
            kept_b = [r["kept"] for r in b or [] if r and "kept" in r]
            if kept_a and kept_b:
                rows.append({"cell": cell, "lock": lock, "a": median_ci(kept_a), "b": median_ci(kept_b)})
    return rows


def interval(r, value="ratio"):
    """A row's figure with its 95% interval: "1.002 [0.990-1.013]"."""
    return f"{r[value]:.3f} [{r['lo']:.3f}-{r['hi']:.3f}]"


def table(columns, rows, cells):
    """A markdown table: a header of `columns`, then cells(r) for each row."""
    return (["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)] +
            ["| " + " | ".join(cells(r)) + " |" for r in rows])


def markdown(ctx, rows, peer_rows, variant_rows=(), order_rows=()):
    out = []
    out.append(f"# {ctx['label_b']} against {ctx['label_a']}\n")
    out.append(f"- machine: {run_context.describe(ctx['run'])}")
    out.append(f"- relax: {ctx['relax_ns_a']:.2f} ns ({ctx['label_a']} build), {ctx['relax_ns_b']:.2f} ns "
               f"({ctx['label_b']} build), one relax as the locks convert it")
    busy = "unknown" if ctx["busy_start"] is None else f"{100 * ctx['busy_start']:.1f}%"
    out.append(f"- before the start: CPUs busy {busy} over 2 s; load average (1 min) {ctx['load_start']} "
               f"(at the end {ctx['load_end']}, which counts the runs' own threads)")
    out.append(f"- {ctx['pairs']} rounds, {ctx['ms']} ms a run, pairs interleaved (A B / B A alternating); "
               f"{ctx['started']}, {ctx['seconds']:.0f} s")
    out.append(f"- compiler: {ctx['run']['compiler']}\n")
    out.append("B/A per pair: the median with its 95% interval (order statistics). Higher mops is faster; "
               "cpu_ns_per_op is process CPU per acquisition; jain is Jain's fairness index of the "
               "per-thread counts; handoff_ns is the median release-to-acquire time. Peers are A/A controls.\n")
    out += table(["cell", "lock", "metric", "A", "B", "B/A [95%]", "verdict"], rows, lambda r: [
        r["cell"], r["lock"] + (" (peer: A/A)" if r["peer"] else ""), r["metric"], f"{r['a_median']:.4g}",
        f"{r['b_median']:.4g}", interval(r), r["verdict"]])
    ours = [r for r in rows if not r["peer"]]
    worse = [r for r in ours if r["sign"] < 0]
    better = [r for r in ours if r["sign"] > 0]
    alarms = [r for r in rows if r["peer"] and r["sign"] != 0]
    controls = [r for r in rows if r["peer"]]
    out.append("")
    expected = sum(1 - r["coverage"] for r in rows if r["n"] >= MIN_PAIRS)
    out.append(f"**Summary:** {len(ours)} figures of spinwise locks: {len(better)} better, {len(worse)} worse, "
               f"{len(ours) - len(better) - len(worse)} within noise or too few pairs. "
               f"A/A controls (peers): {len(alarms)} of {len(controls)} called different. Each interval "
               f"misses the truth with probability 1 - coverage, so with no difference at all about "
               f"{expected:.1f} of these {len(rows)} figures would be called different: read a lone verdict "
               f"near 1 with that in mind.")
    if worse:
        out.append("")
        out.append("Worse beyond the noise: " + "; ".join(
            f"{r['lock']} {r['cell']} {r['metric']} {interval(r)}" for r in worse))
    sections = [
        (f"{ctx['label_b']}: each lock against the peers (speed-up, above 1 is better)",
         ["cell", "lock", "peer", "speed-up [95%]", "verdict"], peer_rows,
         lambda r: [r["cell"], r["lock"], r["peer"], interval(r, "speedup"), r["verdict"]]),
        (f"{ctx['label_b']}: each policy variant against its default lock (variant / default)",
         ["cell", "variant", "metric", "ratio [95%]", "verdict"], variant_rows,
         lambda r: [r["cell"], r["lock"], r["metric"], interval(r), r["verdict"]]),
        ("Order: turns kept (share of acquisitions by the last holder; medians, min-max of the runs)",
         ["cell", "lock", ctx["label_a"], ctx["label_b"]], order_rows,
         lambda r: [r["cell"], r["lock"]] + [f"{c.median:.3f} ({c.min:.3f}-{c.max:.3f})" for c in (r["a"], r["b"])]),
    ]
    for heading, columns, section_rows, cells in sections:
        if section_rows:
            out += ["", f"## {heading}\n"] + table(columns, section_rows, cells)
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="spinwise-cell built from revision A")
    ap.add_argument("--b", required=True, help="spinwise-cell built from revision B")
    ap.add_argument("--label-a", default="A")
    ap.add_argument("--label-b", default="B")
    ap.add_argument("--locks", help="comma-separated; default: every lock both builds have")
    ap.add_argument("--cells", help="comma-separated; default: every cell")
    ap.add_argument("--pairs", type=int, default=12, help="rounds, each one pair per cell and lock (default 12)")
    ap.add_argument("--ms", type=int, default=200, help="length of one run (default 200)")
    ap.add_argument("--out", help="write the markdown report here too")
    ap.add_argument("--json", help="write every run and the analysis here")
    ap.add_argument("--compiler", default="unknown")
    ap.add_argument("--bench", metavar="PATH", help="the spinwise-bench whose --estimate gives the intervals "
                                                   "(default: $SPINWISE_BENCH, else the build folders, else PATH)")
    args = ap.parse_args(argv)
    global BENCH
    BENCH = args.bench
    median_ci([1.0])  # a missing spinwise-bench is said before the runs, not after them
    if args.pairs < 1 or args.pairs > 1000:
        raise CompareError("--pairs must be in 1..1000")
    if args.ms < 10 or args.ms > 60000:
        raise CompareError("--ms must be in 10..60000")
    if args.pairs < MIN_PAIRS:
        print(f"compare: {args.pairs} pairs give no verdict (at least {MIN_PAIRS}); running anyway", file=sys.stderr)

    locks_a, cells_a = listing(args.a)
    locks_b, cells_b = listing(args.b)
    both = [l for l in locks_b if l in locks_a]
    wanted = args.locks.split(",") if args.locks else locks_b
    unknown = [l for l in wanted if l not in locks_a and l not in locks_b]
    if unknown:
        raise CompareError(f"unknown lock(s) {', '.join(unknown)} (known: {', '.join(locks_b)})")
    locks = [l for l in wanted if l in both]
    # Locks only B has (a policy variant new in B) run on B's side alone: set against the peers and
    # their default lock within B, with no B/A.
    b_only = [l for l in wanted if l in locks_b and l not in locks_a]
    left_out = [l for l in wanted if l in locks_a and l not in locks_b]
    if b_only:
        print(f"compare: only in B, measured there alone: {', '.join(b_only)}", file=sys.stderr)
    if left_out:
        print(f"compare: left out, only in A: {', '.join(left_out)}", file=sys.stderr)
    cells = args.cells.split(",") if args.cells else [c for c in cells_b if c in cells_a]
    unknown = [c for c in cells if c not in cells_a or c not in cells_b]
    if unknown:
        raise CompareError(f"unknown cell(s) {', '.join(unknown)} (known: {', '.join(cells_b)})")
    peers = [p for p in PEERS if p in locks]

    total = args.pairs * len(cells) * (len(locks) * 2 + len(b_only))
    print(f"compare: {total} runs of {args.ms} ms (about {total * (args.ms + 60) / 1000:.0f} s)", file=sys.stderr)
    run = run_context.here()
    run["compiler"] = args.compiler
    ctx = {"label_a": args.label_a, "label_b": args.label_b, "run": run, "pairs": args.pairs,
           "ms": args.ms, "busy_start": busy_share(), "load_start": run["load_average"][0],
           "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
           "relax_ns_a": relax_ns(args.a), "relax_ns_b": relax_ns(args.b)}
    t0 = time.time()
    runs = {}
    for rnd in range(args.pairs):
        for cell in cells:
            for i, lock in enumerate(locks + b_only):
                order = ("a", "b") if (rnd + i) % 2 == 0 else ("b", "a")
                if lock in b_only:
                    order = ("b",)
                for side in order:
                    r = run_cell(args.a if side == "a" else args.b, lock, cell, args.ms)
                    runs.setdefault((cell, lock, side), [None] * args.pairs)[rnd] = r
        print(f"compare: round {rnd + 1}/{args.pairs} done, {time.time() - t0:.0f} s", file=sys.stderr)
    ctx["seconds"] = time.time() - t0
    ctx["load_end"] = (run_context.load_average() or [None])[0]
    rows = analyse(runs, cells, locks, peers)
    peer_rows = against_peers(runs, cells, locks + b_only, peers)
    variant_rows = variants(runs, cells, locks + b_only)
    kept_rows = turns_kept(runs, cells, locks)
    text = markdown(ctx, rows, peer_rows, variant_rows, kept_rows)
    sys.stdout.write(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"context": ctx, "rows": rows, "against_peers": peer_rows,
                       "runs": [{"cell": c, "lock": l, "side": s, "round": i, **(r or {})}
                                for (c, l, s), rs in runs.items() for i, r in enumerate(rs)]}, f, indent=1)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (CompareError, report.ReportError) as e:
        print(f"compare: {e}", file=sys.stderr)
        sys.exit(2)
