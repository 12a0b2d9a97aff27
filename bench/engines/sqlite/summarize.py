#!/usr/bin/env python3
"""The SQLite side-by-side's arithmetic (bench/engines/sqlite/run.sh, docs/engines.md "SQLite").

  context   the machine's state before the runs, as JSON: the run context (bench/run_context.py),
            how busy the CPUs were over 2 s (/proc/stat) and the load average
  report    runs.jsonl (one spinwise-sqlite-bench line per run, with run.sh's "rep" and "cell")
            to README.md: per cell and arm the median ops/s with min-max, the ratio to the
            reference arm per repetition, p99, CPU per operation, spinwise's hottest SQLite mutex
            class, and where a kind collapses

Ratios are paired: each repetition's arm against the reference arm of the same repetition, which
ran seconds before or after it; the table gives the median of those ratios and their min-max. For n
repetitions min-max holds the true median ratio with probability 1 - 2^(1-n) (order statistics,
distribution-free: 75% for 3, 93.75% for 5), so with 3 a ratio whose range excludes 1 is a hint, not
a verdict (bench/micro/report.py asks four a side before it judges).

Python 3 standard library only.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "compare"))
import run_context  # noqa: E402  (the machine, named as spinwise's tools name it)
from compare import busy_share  # noqa: E402  (how busy the CPUs are now, as bench/compare.sh says it)

CELLS = ("private", "private-memstatus-off", "shared-cache", "serialized", "wal")
CELL_TEXT = {
    "private": "private: a `:memory:` database per thread; shared: SQLite's static mutexes, "
               "static_mem on every allocation (short sections)",
    "private-memstatus-off": "private, `SQLITE_CONFIG_MEMSTATUS` 0: the control, static_mem off the path",
    "shared-cache": "shared-cache: one shared-cache in-memory database, a connection per thread; "
                    "shared: the B-tree mutex, sqlite.fast (medium sections)",
    "serialized": "serialized: one `SQLITE_OPEN_FULLMUTEX` connection for every thread; shared: its "
                  "recursive mutex, sqlite.recursive (long sections)",
    "wal": "wal: one file database in WAL mode (synchronous=NORMAL), a connection per thread; shared: "
           "the WAL index's mutex, sqlite.fast, at each transaction, and one writer at a time (BUSY retries)",
}
COLLAPSE = 0.5  # a kind "collapses" in a cell where it does half the reference's operations or fewer


def fail(msg):
    print(f"summarize: {msg}", file=sys.stderr)
    sys.exit(1)


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def cmd_context(_):
    run = run_context.here()
    busy = busy_share()
    load = run_context.load_average()
    print(json.dumps({"run": run, "busy_share_2s": busy, "load_average": list(load) if load else None,
                      "started": time.strftime("%Y-%m-%d %H:%M:%S %Z")}))


def fmt_ops(x):
    return f"{x / 1e6:.3f}M" if x >= 1e6 else f"{x / 1e3:.1f}k"


def fmt_ratio(rs):
    if not rs:
        return "-"
    return f"{median(rs):.3f} [{min(rs):.3f}-{max(rs):.3f}]" if len(rs) > 1 else f"{rs[0]:.3f}"


def hot_class(runs):
    """The spinwise class with the most contended acquisitions over the runs: 'name a/op, c%'."""
    ops = sum(r["ops"] for r in runs)
    cpu_ns = 1e9 * sum(r["cpu_s"] for r in runs)
    acq, cont, spin = {}, {}, {}
    for r in runs:
        for c in (r.get("spinwise_stats") or {}).get("classes", []):
            acq[c["name"]] = acq.get(c["name"], 0) + c["acquisitions"]
            cont[c["name"]] = cont.get(c["name"], 0) + c["contended"]
            spin[c["name"]] = spin.get(c["name"], 0) + c["spin_ns"]
    if not acq or not ops:
        return "-"
    name = max(acq, key=lambda n: (cont[n], acq[n]))
    share = 100 * cont[name] / acq[name] if acq[name] else 0
    text = f"{name.removeprefix('sqlite.')} {acq[name] / ops:.1f}/op, {share:.3g}% contended"
    return text + (f", spinning {100 * spin[name] / cpu_ns:.3g}% of CPU" if cpu_ns > 0 and spin[name] > 0 else "")


def cell_table(cell, runs, arms, cpus, reps):
    """The markdown rows of one cell (a mode, memstatus on or off) over its thread counts."""
    ok = [r for r in runs if r["cell"] == cell and r.get("ok")]
    if not ok:
        return []
    retries = cell in ("shared-cache", "wal")
    head = ["threads", "arm", "ops/s median [min-max]", f"ratio to {arms[0]}", "p99 us", f"CPU/op ratio to {arms[0]}",
            "CPU ns/op", "spinwise's hottest class"]
    if retries:
        head.insert(6, "LOCKED/BUSY retries/op")
    head.append("note")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    threads = sorted({r["threads"] for r in ok})
    for t in threads:
        by = {(r["arm"], r["rep"]): r for r in ok if r["threads"] == t}
        for arm in arms:
            rs = [by[(arm, k)] for k in range(1, reps + 1) if (arm, k) in by]
            if not rs:
                continue
            ops = [r["ops_per_s"] for r in rs]
            pairs = [(by[(arm, k)], by[(arms[0], k)]) for k in range(1, reps + 1)
                     if (arm, k) in by and (arms[0], k) in by]
            ratio = [a["ops_per_s"] / b["ops_per_s"] for a, b in pairs if b["ops_per_s"] > 0]
            cpu_ratio = [a["cpu_ns_per_op"] / b["cpu_ns_per_op"] for a, b in pairs if b["cpu_ns_per_op"] > 0]
            row = [str(t), arm, f"{fmt_ops(median(ops))} [{fmt_ops(min(ops))}-{fmt_ops(max(ops))}]",
                   "(reference)" if arm == arms[0] else fmt_ratio(ratio),
                   f"{median([r['latency_ns']['p99'] for r in rs]) / 1e3:.1f}",
                   "(reference)" if arm == arms[0] else fmt_ratio(cpu_ratio),
                   f"{median([r['cpu_ns_per_op'] for r in rs]):.0f}",
                   hot_class(rs)]
            if retries:
                row.insert(6, f"{median([r['locked_retries_per_op'] for r in rs]):.3f}")
            notes = []
            if cpus and t > cpus:
                if arm != arms[0] and ratio and median(ratio) <= COLLAPSE:
                    notes.append(f"collapses: {median(ratio):.2f}x {arms[0]} with {t} threads on {cpus} CPUs")
                fewer = [median([r["ops_per_s"] for r in ok if r["arm"] == arm and r["threads"] == u])
                         for u in threads if u <= cpus and any(r["arm"] == arm and r["threads"] == u for r in ok)]
                if fewer and median(ops) <= COLLAPSE * max(fewer):
                    notes.append(f"{median(ops) / max(fewer):.2f}x its own best at <= {cpus} threads")
            if len(rs) < reps:
                notes.append(f"{reps - len(rs)} of {reps} repetitions failed")
            row.append("; ".join(notes))
            lines.append("| " + " | ".join(row) + " |")
    return lines


def cmd_report(a):
    try:
        runs = [json.loads(line) for line in open(a.runs) if line.strip()]
    except (OSError, ValueError) as e:
        fail(f"{a.runs}: {e}")
    if not runs:
        fail(f"{a.runs}: no runs")
    ctx = json.load(open(a.context)) if a.context and os.path.exists(a.context) else {}
    arms = []
    for r in runs:
        if r["arm"] not in arms:
            arms.append(r["arm"])
    if "sqlite" in arms:  # the reference first, the rest in the order they ran first
        arms.remove("sqlite")
        arms.insert(0, "sqlite")
    reps = max(r["rep"] for r in runs)
    good = [r for r in runs if r.get("ok")]
    first = good[0] if good else runs[0]
    machine = run_context.from_tool(first) if "run" in first else (ctx.get("run") or {})
    cpus = machine.get("cpus_allowed") or machine.get("cpus_online")
    sq = first.get("sqlite", {})
    own = next((r["sqlite"] for r in good if r["arm"] == "sqlite" and "sqlite" in r), {})
    failed = [r for r in runs if not r.get("ok")]
    out = ["# SQLite on its own mutexes and on spinwise's\n"]
    out.append(f"- machine: {run_context.describe(machine)}")
    if machine.get("relax_ns"):
        out.append(f"- relax: {machine.get('relax')} {machine['relax_ns']:.2f} ns (what the spinwise kinds "
                   f"convert their delays with, spinwise::relax_ns_here)")
    out.append(f"- SQLite {sq.get('version', '?')} ({sq.get('library', '?')}), threadsafe={sq.get('threadsafe', '?')}; "
               f"the sqlite arm keeps SQLite's own mutex methods (saved with SQLITE_CONFIG_GETMUTEX, in "
               f"{own.get('mutex_methods_from', '?')})")
    busy = ctx.get("busy_share_2s")
    load = (ctx.get("load_average") or [None])[0]
    out.append(f"- before the start: CPUs busy {'unknown' if busy is None else f'{100 * busy:.1f}%'} over 2 s; "
               f"load average (1 min) {'unknown' if load is None else f'{load:.2f}'}; "
               f"started {ctx.get('started', '?')}")
    seconds = first.get("seconds", first.get("ops_per_thread"))
    out.append(f"- {len(runs)} runs: {reps} repetitions of every cell and arm, {seconds} s measured after "
               f"{first.get('warmup_s')} s of warm-up each; arms in the order {' '.join(arms)}, the next cell "
               f"in reverse")
    out.append(f"- command: `{a.command}`")
    out.append(f"- failed runs: {len(failed)}" + ("" if not failed else ":"))
    for r in failed:
        out.append(f"  - repetition {r['rep']}, {r['cell']}, {r['threads']} threads, {r['arm']}: "
                   f"{'; '.join(r.get('failures', []))}")
    out.append("")
    out.append("An operation is one INSERT of a 32-byte row and one point SELECT by key, prepared statements. "
               "ops/s: operations in the measured window over its wall time, all threads. Ratio: per "
               f"repetition, the arm's ops/s over {arms[0]}'s in the same repetition; the median of those "
               f"ratios [their min-max] (with {reps} repetitions min-max holds the median ratio with "
               f"probability {100 * (1 - 2 ** (1 - reps)):.4g}%). p99: the median over repetitions of the "
               "99th percentile operation latency (all threads' operations merged; bucket upper bounds, at "
               "most 3.2% high). CPU/op: process CPU time (CLOCK_PROCESS_CPUTIME_ID) over operations, its "
               "ratio paired like ops/s (below 1: less CPU than SQLite's own mutexes). Hottest class: the "
               "spinwise statistics class (SQLite mutex type) with the most contended acquisitions over the "
               "repetitions, its acquisitions per operation, the share contended and the time its waiters "
               "spent in spin delays as a share of process CPU; every spinwise kind "
               f"counts its statistics, so their cost is in its figures. A note says where a kind collapses "
               f"(more threads than the {cpus} CPUs, and half the reference's operations or fewer, or half "
               "its own best at no more threads than CPUs).\n")
    for cell in CELLS:
        rows = cell_table(cell, runs, arms, cpus, reps)
        if rows:
            out.append(f"## {cell}\n")
            out.append(CELL_TEXT[cell] + "\n")
            out.extend(rows)
            out.append("")
    with open(a.out, "w") as f:
        f.write("\n".join(out))
    print("\n".join(out[:8]))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("context")
    r = sub.add_parser("report")
    r.add_argument("--runs", required=True)
    r.add_argument("--context", default="")
    r.add_argument("--command", default="bench/engines/sqlite/run.sh")
    r.add_argument("--out", required=True)
    a = p.parse_args()
    {"context": cmd_context, "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    main()
