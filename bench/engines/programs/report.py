#!/usr/bin/env python3
"""The real-program harness's tables: <out>/README.md from <out>/context.json, <out>/runs.jsonl and,
where run.py ran it, <out>/memcached/runs.jsonl (run.py calls this; `report.py OUT` redoes it).

Every ratio is paired: per repetition, the arm's throughput over the reference arm's in the same
repetition, then the median of those ratios with its interval from spinwise's own statistics
(spinwise-bench --estimate, as bench/compare.sh; with fewer than 6 repetitions the interval is the
range). The targets (issue 43): the default kind (adaptive) at least 0.97x glibc's throughput on
every program, at least 1.10x on one where the lock is the bottleneck, and the interposer's own cost
(`glibc` against `none`) within 2%. Exit 1 when a run failed."""
import json
import math
import os
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "bench", "micro"))
import run_context  # noqa: E402
import report as micro_report  # noqa: E402  (spinwise's statistics, through spinwise-bench --estimate)

DEFAULT_KIND = "adaptive"  # the interposer's kind when SPINWISE_PRELOAD_LOCK is unset
FLOOR, OWN_COST_FLOOR, BOTTLENECK_GAIN = 0.97, 0.98, 1.10


class Intervals:
    """median [lo-hi] of a sample: spinwise's statistics where a spinwise-bench is built, else the
    sample's range (said so in the README)."""

    def __init__(self):
        try:
            self.stats = micro_report.Stats(micro_report.find_bench())
            self.source = ("95% intervals of the median from spinwise's statistics (spinwise-bench --estimate); "
                           "below 6 repetitions that is the range of the ratios")
        except micro_report.ReportError:
            self.stats = None
            self.source = "the range of the ratios (no spinwise-bench was built to estimate intervals)"

    def median(self, xs):
        xs = [x for x in xs if x is not None and math.isfinite(x)]
        if not xs:
            return None
        if self.stats is None:
            s = sorted(xs)
            mid = (s[(len(s) - 1) // 2] + s[len(s) // 2]) / 2
            return mid, s[0], s[-1]
        m = self.stats.median_ci(xs)
        return m.median, m.lo, m.hi

    def close(self):
        if self.stats:
            self.stats.close()


def fmt(m, digits=3):
    return "-" if m is None else f"{m[0]:.{digits}f} [{m[1]:.{digits}f}-{m[2]:.{digits}f}]"


def paired(by_rep, arm, ref, key):
    return [r[arm][key] / r[ref][key] for r in by_rep.values()
            if arm in r and ref in r and r[ref].get(key)]


def verdict(m, floor):
    if m is None:
        return "no runs"
    if m[1] >= floor:
        return "met"
    if m[2] < floor:
        return "**missed**"
    return "met (median), interval spans it" if m[0] >= floor else "**missed (median)**, interval spans it"


def main(argv):
    if len(argv) != 1:
        print("usage: report.py OUT", file=sys.stderr)
        return 2
    out = argv[0]
    ctx = json.load(open(os.path.join(out, "context.json")))
    runs = [json.loads(l) for l in open(os.path.join(out, "runs.jsonl")) if l.strip()]
    timed = [r for r in runs if not r.get("counters")]
    failed = [r for r in runs if not r.get("ok")]
    arms = [a for a in ctx["arms"]]
    iv = Intervals()
    L = ["# Real programs on glibc's locks and under libspinwise-preload.so", "",
         f"- machine: {run_context.describe(ctx)}; relax (PAUSE) {ctx.get('relax_ns') or '?'} ns; before the start CPUs {ctx.get('busy_percent_2s')}% busy over 2 s, "
         f"load average {', '.join(f'{x:.2f}' for x in ctx['load_average'] if x is not None)}; {ctx['date']}",
         f"- command: `{ctx['command'].strip()}`; {ctx['reps']} repetitions, arms interleaved "
         "(A B C D E, then E D C B A for the next program)",
         "- tools: " + "; ".join(f"{v}" for v in ctx["versions"].values() if v),
         f"- failed runs (a program that exited non-zero or whose output was wrong): {len(failed)}",
         f"- intervals: {iv.source}", "",
         "Throughput: the program's work over its wall time (the bounded buffer's and sysbench's own "
         "timers where they have one). `vs none`: per repetition, the arm's throughput over the same "
         "repetition's run with no preload (what a user sees); `glibc` is the interposer passing every "
         "call through (its own cost). CPU/unit: the process's user+system time per unit of work, over "
         "`none`'s. Counters: one more, untimed run with SPINWISE_PRELOAD_STATS (acquisitions per unit, "
         "share contended, parks and yields per 1000 acquisitions).", ""]
    targets = []
    for name, what in ctx["programs"].items():
        rs = [r for r in timed if r["program"] == name and r.get("ok")]
        for arm, label in ((DEFAULT_KIND, name), ("glibc", name + " (the interposer's own cost: glibc vs none)")):
            if arm in arms and not any(r["arm"] == arm for r in rs):
                targets.append((label, None))  # no successful run: the table says so
        if not rs:
            continue
        unit = ctx["units"][name]
        by_rep = defaultdict(dict)
        for r in rs:
            r["cpu_per_unit"] = r["cpu_s"] / r["work"]
            by_rep[r["rep"]][r["arm"]] = r
        counters = {r["arm"]: r for r in runs if r["program"] == name and r.get("counters") and r.get("ok")}
        base_col = any(x.endswith("@base") for x in arms)
        L += [f"## {name}", "", what + ".", "",
              f"| arm | {unit}/s median [interval] | vs none | vs glibc | {'vs KIND@base | ' if base_col else ''}"
              f"CPU/unit vs none | cs per 1000 {unit} | counters |",
              "|---|---|---|---|---|---|---|" + ("---|" if base_col else "")]
        for arm in arms:
            mine = [r for r in rs if r["arm"] == arm]
            if not mine:
                continue
            thr = iv.median([r["throughput"] for r in mine])
            vs_none = iv.median(paired(by_rep, arm, "none", "throughput")) if arm != "none" else None
            vs_glibc = iv.median(paired(by_rep, arm, "glibc", "throughput")) if arm not in ("none", "glibc") else None
            cpu = iv.median([by_rep[k][arm]["cpu_per_unit"] / by_rep[k]["none"]["cpu_per_unit"]
                             for k in by_rep if arm in by_rep[k] and "none" in by_rep[k]]) if arm != "none" else None
            cs = sorted(1000 * r["ctx_switches"] / r["work"] for r in mine)[len(mine) // 2]
            c = counters.get(arm, {}).get("preload")
            if c and c.get("acquisitions"):
                work = counters[arm]["work"]
                cnt = (f"{c['acquisitions'] / work:.2f}/unit, {100 * c['contended'] / c['acquisitions']:.1f}%, "
                       f"parks {1000 * c['os_waits'] / c['acquisitions']:.1f}, yields {1000 * c['yields'] / c['acquisitions']:.1f}")
            else:
                cnt = "-"
            scale, suffix = (1e-6, "M") if thr[0] >= 1e6 else (1e-3, "k") if thr[0] >= 1e4 else (1, "")
            thr_s = f"{thr[0] * scale:.3g}{suffix} [{thr[1] * scale:.3g}-{thr[2] * scale:.3g}]"
            vs_base = ""
            if base_col:
                m = iv.median(paired(by_rep, arm, arm + "@base", "throughput")) if arm + "@base" in arms else None
                vs_base = f"{fmt(m)} | "
            L.append(f"| {arm} | {thr_s} | {fmt(vs_none) if arm != 'none' else '(reference)'} | "
                     f"{fmt(vs_glibc) if vs_glibc else '-'} | {vs_base}{fmt(cpu) if cpu else '-'} | {cs:.1f} | {cnt} |")
            if arm == DEFAULT_KIND:
                targets.append((name, vs_none))
            if arm == "glibc":
                targets.append((name + " (the interposer's own cost: glibc vs none)", vs_none))
        L.append("")
    mc = os.path.join(out, "memcached", "runs.jsonl")
    if os.path.exists(mc):
        mruns = [json.loads(l) for l in open(mc) if l.strip()]
        failed += [r for r in mruns if not r.get("ok")]
        by = defaultdict(dict)
        for r in mruns:
            if r.get("kind") == "memcached" and r.get("ok"):
                by[(r["mix"], r["conns"], r["threads"], r["rep"])][r["arm"]] = r
        L += ["## memcached", "", "The memcached grid (bench/engines/memcached/run.sh, its own tables in "
              "[memcached/README.md](memcached/README.md)): ops/s, paired per repetition.", "",
              "| mix | conns | server threads | arm | vs none | vs glibc |", "|---|---|---|---|---|---|"]
        for cell in sorted({k[:3] for k in by}):
            reps = {k[3]: by[k] for k in by if k[:3] == cell}
            for arm in arms:
                if arm == "none" or not any(arm in r for r in reps.values()):
                    continue
                vn = iv.median(paired(reps, arm, "none", "ops_per_s"))
                vg = iv.median(paired(reps, arm, "glibc", "ops_per_s")) if arm != "glibc" else None
                L.append(f"| {cell[0]} | {cell[1]} | {cell[2]} | {arm} | {fmt(vn)} | {fmt(vg) if vg else '-'} |")
                if arm == DEFAULT_KIND:
                    targets.append((f"memcached {cell[0]}, {cell[1]} conns, {cell[2]} threads", vn))
                if arm == "glibc":
                    targets.append((f"memcached {cell[0]}, {cell[1]} conns, {cell[2]} threads "
                                    "(the interposer's own cost: glibc vs none)", vn))
        L.append("")
    if targets:
        L += ["## Targets", "", f"The default kind (`{DEFAULT_KIND}`) at least {FLOOR}x no preload's throughput on "
              f"every program; the interposer's own cost within {100 * (1 - OWN_COST_FLOOR):.0f}% "
              f"(`glibc` at least {OWN_COST_FLOOR}x); at least {BOTTLENECK_GAIN}x on a program whose lock is its "
              "bottleneck. Met: the interval's low end clears the floor; missed: its high end is below it.", "",
              "| program | ratio vs none [interval] | verdict |", "|---|---|---|"]
        best = None
        for name, m in targets:
            own = "own cost" in name
            L.append(f"| {name} | {fmt(m)} | {verdict(m, OWN_COST_FLOOR if own else FLOOR)} |")
            if not own and m and (best is None or m[0] > best[1][0]):
                best = (name, m)
        if best:
            L += ["", f"Largest gain of the default kind: {best[0]}, {fmt(best[1])}: "
                  f"{verdict(best[1], BOTTLENECK_GAIN)} against {BOTTLENECK_GAIN}x."]
        L.append("")
    if failed:
        L += ["## Failed runs", ""] + [f"- {r.get('program', r.get('kind'))} {r.get('arm')} rep {r.get('rep')}: "
                                       f"{r.get('error', 'failed')}" for r in failed] + [""]
    iv.close()
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("\n".join(L))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
