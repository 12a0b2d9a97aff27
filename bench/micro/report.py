#!/usr/bin/env python3
"""Turns one spinwise-bench JSON run into a markdown report and PNG plots.

    bench/micro/report.py RUN.json [--out DIR] [--no-plots]

Writes DIR/report.md (DIR defaults to the JSON's folder) and DIR/plots/*.png (gnuplot).
Every figure in the tables is a ratio against a lock measured in the same run: against
std::mutex (std::shared_mutex in the rw tables) and against the best peer of that scenario.
Ratios are speed-ups: above 1 means better than the reference, whatever the unit (time, latency
or throughput). Where a run has repetitions, each figure is the median of them.

Python 3 standard library only; gnuplot (Debian: gnuplot-nox) for the plots.
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
from collections import defaultdict

EXCLUSIVE_REF = "std::mutex"
SHARED_REF = "std::shared_mutex"
SCENARIOS = ("uncontended", "uncontended_shared", "handoff", "contended", "rw")
CONTENDED_COUNTERS = ("acq_per_s", "fair_cov", "fair_min", "fair_max", "cpu_ns_per_acq", "csw_per_acq")


class ReportError(Exception):
    pass


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
        elif k in ("cs_ns", "local_ns", "read_pct"):
            params.append((k, int(v)))
    return scenario, lock, tuple(params), threads


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise ReportError(f"{path}: cannot read a JSON benchmark run ({e})")
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise ReportError(f"{path}: no 'benchmarks' list; is this Google Benchmark JSON output?")
    ctx = data.get("context", {})
    kinds, fifo = {}, set()
    for k, v in ctx.items():
        if k.startswith("lock."):
            name = k[len("lock."):]
            kind, _, flag = v.partition(",")
            kinds[name] = kind
            if flag == "fifo":
                fifo.add(name)
    if not kinds:
        raise ReportError(f"{path}: the context names no locks; was it written by spinwise-bench?")

    # Group the iteration runs of one benchmark (repetitions) and keep each metric's median.
    runs = defaultdict(list)
    errors = []
    for b in data["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration":
            continue
        if b.get("error_occurred"):
            errors.append(f"{b.get('name')}: {b.get('error_message', 'error')}")
            continue
        parsed = parse_name(b.get("run_name", b.get("name", "")))
        if parsed is None:
            continue
        runs[parsed].append(b)
    results = {}
    for key, reps in runs.items():
        m = {"real_ns": statistics.median(to_ns(r["real_time"], r.get("time_unit", "ns")) for r in reps),
             "repetitions": len(reps)}
        for c in set().union(*(r.keys() for r in reps)):
            vals = [r[c] for r in reps if isinstance(r.get(c), (int, float)) and not isinstance(r.get(c), bool)]
            if c not in m and vals and c not in ("iterations", "real_time", "cpu_time", "threads",
                                                 "repetitions", "repetition_index", "family_index",
                                                 "per_family_instance_index"):
                m[c] = statistics.median(vals)
        results[key] = m
    if not results:
        raise ReportError(f"{path}: no spinwise-bench results in it")
    return ctx, kinds, fifo, results, errors


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


def ratio(num, den):
    if num is None or den is None or den == 0 or num == 0:
        return None
    return num / den


def fmt_ratio(r):
    return "–" if r is None else f"{r:.2f}x"


def param_text(params):
    names = {"cs_ns": "critical section", "local_ns": "local work", "read_pct": "reads"}
    out = []
    for k, v in params:
        out.append(f"{names[k]} {v}%" if k == "read_pct" else f"{names[k]} {v} ns")
    return ", ".join(out)


def param_slug(params):
    return "_".join(f"{k.replace('_ns', '').replace('_pct', '')}{v}" for k, v in params)


class Report:
    def __init__(self, ctx, kinds, fifo, results, errors):
        self.ctx, self.kinds, self.fifo, self.results, self.errors = ctx, kinds, fifo, results, errors
        self.lines = []
        self.plots = []  # (path, title, ylabel, logscale, {lock: {threads: value}})
        self.cpus = int(ctx.get("machine.cpus_allowed", ctx.get("num_cpus", 0)) or 0)

    def out(self, s=""):
        self.lines.append(s)

    def kind(self, lock):
        return self.kinds.get(lock, "peer")

    def locks_in(self, scenario, params=None):
        names = {k[1] for k in self.results if k[0] == scenario and (params is None or k[2] == params)}
        order = {"floor": 0, "spinwise": 1, "peer": 2}
        return sorted(names, key=lambda n: (order.get(self.kind(n), 3), n))

    def get(self, scenario, lock, params, threads, metric):
        m = self.results.get((scenario, lock, params, threads))
        return None if m is None else m.get(metric)

    def table(self, header, rows, text_columns=1):
        self.out("| " + " | ".join(header) + " |")
        self.out("|" + "|".join("---" if i < text_columns else "---:" for i in range(len(header))) + "|")
        for r in rows:
            self.out("| " + " | ".join(r) + " |")
        self.out()

    # -- sections ------------------------------------------------------------------------------
    def machine(self):
        c = self.ctx
        self.out("# spinwise-bench results")
        self.out()
        self.out(f"- **CPU:** {c.get('machine.cpu_model', '?')}, {c.get('num_cpus', '?')} CPUs "
                 f"({c.get('machine.cpus_allowed', '?')} allowed), {c.get('mhz_per_cpu', '?')} MHz reported")
        self.out(f"- **Kernel:** {c.get('machine.kernel', '?')}; glibc {c.get('machine.glibc', '?')}")
        self.out(f"- **Compiler:** {c.get('machine.compiler', '?')}; Google Benchmark library build: "
                 f"{c.get('library_build_type', '?')}")
        self.out(f"- **Date:** {c.get('date', '?')}; load average at start: {c.get('load_avg', '?')}")
        self.out(f"- **spinwise:** backend {c.get('spinwise.backend', '?')}, relax {c.get('spinwise.relax', '?')} "
                 f"= {fmt(float(c.get('spinwise.relax_ns', 'nan')))} ns, counter {c.get('spinwise.counter', '?')} "
                 f"at {fmt(float(c.get('spinwise.counter_hz', 'nan')))} Hz")
        self.out(f"- **Run:** mode {c.get('bench.mode', '?')}; `{c.get('bench.command', '?')}`; "
                 f"dependent work {fmt(float(c.get('bench.work_ns_per_iteration', 'nan')))} ns/iteration; "
                 f"handoff delay {c.get('bench.handoff_delay_ns', '?')} ns; "
                 f"libc single-threaded flag at measurement: {c.get('bench.libc_single_threaded', '?')}")
        self.out(f"- **Peers missing:** {c.get('bench.peers_missing', '?')}")
        spin = [n for n in sorted(self.kinds) if self.kinds[n] == "spinwise"]
        self.out(f"- **spinwise locks measured:** {', '.join(spin) if spin else 'none'}")
        capped = sorted(f"{k[0]}/{k[1]}" + "".join(f"/{a}:{b}" for a, b in k[2]) + f"/threads:{k[3]}"
                        for k, m in self.results.items() if m.get("capped", 0) > 0)
        if capped:
            self.out(f"- **Runs stopped at the time cap ({c.get('bench.max_run_ms', '?')} ms; marked * in the "
                     f"tables; they report what they did until then): {len(capped)}**")
        if self.errors:
            self.out(f"- **Benchmarks that failed ({len(self.errors)}):** " + "; ".join(self.errors))
        self.out()
        self.out("Ratios are speed-ups against a lock measured in the same run (above 1 = better than "
                 "the reference). *best peer* = the best non-spinwise lock of that scenario, floors excluded.")
        self.out()

    def oneway(self):
        """One-way core-to-core latency between the handoff's two CPUs, ns (None if not measured):
        the run's context (bench.c2c_oneway_ns); runs made before it was there have a c2c_oneway
        benchmark instead."""
        v = self.ctx.get("bench.c2c_oneway_ns")
        if v is None:
            return self.get("handoff", "c2c_oneway", (), 1, "p50_ns")
        try:
            v = float(v)
        except ValueError:
            return None
        return v if v > 0 else None

    def best(self, kind, scenario, params, threads, metric, higher_better):
        """(lock, value) of the best lock of `kind` ("peer" or "spinwise") in one cell, or None."""
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
            floor = self.get("uncontended", "xchg_floor", (), 1, "real_ns")
            ref = self.get(scenario, EXCLUSIVE_REF if scenario == "uncontended" else SHARED_REF, (), 1, "real_ns")
            best = self.best_peer(scenario, (), 1, "real_ns", False)
            rows = []
            for lock in locks:
                v = self.get(scenario, lock, (), 1, "real_ns")
                rows.append([lock, self.kind(lock), fmt(v), f"{v / floor:.2f}" if floor and v else "–",
                             fmt_ratio(ratio(ref, v)), fmt_ratio(ratio(best[1] if best else None, v))])
            refname = EXCLUSIVE_REF if scenario == "uncontended" else SHARED_REF
            self.table(["lock", "kind", "ns", "time ÷ xchg floor", f"vs {refname}",
                        f"vs best peer ({best[0] if best else '–'})"], rows, text_columns=2)

    def handoff(self):
        locks = [l for l in self.locks_in("handoff", ()) if l != "c2c_oneway"]
        if not locks:
            return
        oneway = self.oneway()
        old_p99 = self.get("handoff", "c2c_oneway", (), 1, "p99_ns")
        c2c = (f"(CAS ping-pong, half a round trip): p50 {fmt(oneway)} ns, p99 {fmt(old_p99)} ns" if old_p99 is not None
               else f"between the same two CPUs (half a round trip of one cache line, median of runs): {fmt(oneway)} ns")
        self.out("## Handoff latency")
        self.out()
        self.out(f"Release (stamped just before unlock) to acquire (stamped just after lock returns) between "
                 f"two pinned threads, the waiter already inside lock(). One-way core-to-core latency in the "
                 f"same run {c2c}. Ratios compare p50s.")
        self.out()
        ref = self.get("handoff", EXCLUSIVE_REF, (), 1, "p50_ns")
        best = self.best_peer("handoff", (), 1, "p50_ns", False)
        rows = []
        for lock in locks:
            g = lambda m: self.get("handoff", lock, (), 1, m)  # noqa: E731
            rows.append([lock, self.kind(lock), fmt(g("p50_ns")), fmt(g("p90_ns")), fmt(g("p99_ns")),
                         fmt(g("p999_ns")), f"{g('p50_ns') / oneway:.2f}" if oneway and g("p50_ns") else "–",
                         fmt_ratio(ratio(ref, g("p50_ns"))), fmt_ratio(ratio(best[1] if best else None, g("p50_ns")))])
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
            self.out(f"### {param_text(params)}")
            self.out()
            # throughput vs the reference and vs the best peer
            best = {t: self.best_peer(scenario, params, t, "acq_per_s", True) for t in threads}
            refv = {t: self.get(scenario, ref_name, params, t, "acq_per_s") for t in threads}
            self.out(f"Throughput, acquisitions/s (reference row: {ref_name}; best peer row: the best "
                     f"non-spinwise lock per thread count):")
            self.out()
            head = ["lock"] + [f"{t} thr" for t in threads]
            rows = [[f"**{ref_name}** (acq/s)"] + [fmt(refv[t]) for t in threads],
                    ["**best peer** (acq/s)"] + [f"{fmt(best[t][1])} {best[t][0]}" if best[t] else "–" for t in threads]]
            self.table(head, rows)
            self.out(f"Throughput ratio vs {ref_name} / vs the best peer:")
            self.out()
            rows = []
            for lock in locks:
                cells = [lock + (" (fifo)" if lock in self.fifo else "")]
                for t in threads:
                    v = self.get(scenario, lock, params, t, "acq_per_s")
                    mark = "*" if (self.get(scenario, lock, params, t, "capped") or 0) > 0 else ""
                    cells.append(f"{fmt_ratio(ratio(v, refv[t]))} / "
                                 f"{fmt_ratio(ratio(v, best[t][1] if best[t] else None))}{mark}")
                rows.append(cells)
            self.table(head, rows)
            for metric, title in (("fair_cov", "Fairness: coefficient of variation of per-thread acquisitions "
                                               "(0 = equal shares; min/max in the JSON)"),
                                  ("cpu_ns_per_acq", "CPU time per acquisition, ns (all threads)"),
                                  ("csw_per_acq", "Context switches per acquisition")):
                self.out(title + ":")
                self.out()
                rows = [[lock] + [fmt(self.get(scenario, lock, params, t, metric)) for t in threads] for lock in locks]
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
                    series = {lock: {t: self.get(scenario, lock, params, t, metric) for t in threads}
                              for lock in members}
                    path = os.path.join(plot_dir, f"{slug}_{group}_{metric}.png")
                    title = f"{heading}, {'policy variants' if group == 'policies' else 'locks'}: {param_text(params)}"
                    self.plots.append((path, title, what, log, series))
                    self.out(f"![{what}, {group}](plots/{os.path.basename(path)})")
                    self.out()

    def targets(self):
        """The bench targets (speed against the floor and the peers, fairness, parity with std::mutex,
        the cost of statistics), each judged from this run."""
        res = []

        def add(name, met, detail):
            res.append((name, "met" if met else ("not met" if met is not None else "not measured"), detail))

        floor = self.get("uncontended", "xchg_floor", (), 1, "real_ns")
        ttas = self.get("uncontended", "ttas_mutex", (), 1, "real_ns")
        stdm = self.get("uncontended", EXCLUSIVE_REF, (), 1, "real_ns")
        r = ratio(ttas, floor)
        add("uncontended ttas_mutex within 1.1x of the xchg floor", None if r is None else r <= 1.1,
            f"ttas_mutex {fmt(ttas)} ns / floor {fmt(floor)} ns = {fmt_ratio(r)}")
        r = ratio(stdm, ttas)
        add("uncontended ttas_mutex at least 2x faster than std::mutex", None if r is None else r >= 2.0,
            f"std::mutex {fmt(stdm)} ns / ttas_mutex {fmt(ttas)} ns = {fmt_ratio(r)}")

        keys = sorted({(k[2], k[3]) for k in self.results if k[0] == "contended"})
        misses, fair_misses, measured = [], [], 0
        for params, t in keys:
            bs = self.best("spinwise", "contended", params, t, "acq_per_s", True)
            bp = self.best_peer("contended", params, t, "acq_per_s", True)
            if not bs or not bp:
                continue
            measured += 1
            if bs[1] < bp[1]:
                misses.append(f"{param_text(params)}, {t} thr: {bs[0]} {fmt_ratio(bs[1] / bp[1])} of {bp[0]}")
            if bs[0] in self.fifo:
                cov = self.get("contended", bs[0], params, t, "fair_cov")
                if cov is not None and cov > 0.1:
                    fair_misses.append(f"{param_text(params)}, {t} thr: {bs[0]} CoV {fmt(cov)}")
        add("every contended scenario: best spinwise lock >= best peer throughput",
            None if not measured else not misses,
            f"{measured - len(misses)} of {measured} scenarios" + ("; misses: " + "; ".join(misses) if misses else ""))
        add("fairness CoV <= 0.1 where the best spinwise lock claims fairness (fifo)",
            None if not measured else not fair_misses, "; ".join(fair_misses) if fair_misses else "no violation")

        def vs(lock, ref, scenario_filter, at_least=1.0, prefix=""):
            """Contended cells of `lock` and `ref` that pass the filter: how many, and those where lock's
            throughput is below at_least x ref's."""
            out, n = [], 0
            for params, t in keys:
                if not scenario_filter(t):
                    continue
                a = self.get("contended", lock, params, t, "acq_per_s")
                b = self.get("contended", ref, params, t, "acq_per_s")
                if a is None or b is None:
                    continue
                n += 1
                if a < at_least * b:
                    out.append(f"{prefix}{param_text(params)}, {t} thr: {fmt_ratio(a / b)}")
            return n, out

        n, out = vs("hybrid_mutex", EXCLUSIVE_REF, lambda t: True)
        add("hybrid_mutex >= std::mutex in every contended scenario", None if not n else not out,
            f"{n - len(out)} of {n}" + ("; below: " + "; ".join(out) if out else ""))
        for scen, metric, what in (("uncontended", "real_ns", "ns"), ("handoff", "p50_ns", "p50 ns")):
            h = self.get(scen, "hybrid_mutex", (), 1, metric)
            m = self.get(scen, EXCLUSIVE_REF, (), 1, metric)
            r = ratio(m, h)
            add(f"hybrid_mutex at least matches std::mutex, {scen}", None if r is None else r >= 1.0,
                f"std::mutex {fmt(m)} {what} / hybrid_mutex {fmt(h)} {what} = {fmt_ratio(r)}")
        oversub16 = (lambda t: self.cpus and t >= 16 * self.cpus)
        n, out = vs("hybrid_mutex", "tbb::spin_mutex", oversub16)
        add(f"hybrid_mutex beats tbb::spin_mutex at 16x oversubscription ({16 * self.cpus} threads)",
            None if not n else not out, f"{n - len(out)} of {n}" + ("; below: " + "; ".join(out) if out else ""))
        for lock in ("ttas_mutex", "hybrid_mutex"):
            n, out = vs(lock, EXCLUSIVE_REF, lambda t: t == 2)
            add(f"locks: {lock} >= std::mutex at 2 threads", None if not n else not out,
                f"{n - len(out)} of {n}" + ("; below: " + "; ".join(out) if out else ""))
        oversub = (lambda t: self.cpus and t in (4 * self.cpus, 16 * self.cpus))
        n, out = vs("hybrid_mutex", EXCLUSIVE_REF, oversub)
        add("locks: hybrid_mutex >= std::mutex at 4x and 16x oversubscription", None if not n else not out,
            f"{n - len(out)} of {n}" + ("; below: " + "; ".join(out) if out else ""))
        below = []
        n = 0
        for lock in self.locks_in("contended"):
            if self.kind(lock) == "spinwise":
                k, out = vs(lock, EXCLUSIVE_REF, oversub, at_least=0.5, prefix=f"{lock} ")
                n += k
                below += out
        add("locks: no spinwise lock below 0.5x std::mutex at 4x and 16x oversubscription",
            None if not n else not below, "; ".join(below) if below else f"{n} checked")
        oneway = self.oneway()
        for lock in self.locks_in("handoff", ()):
            if self.kind(lock) != "spinwise":
                continue
            p50 = self.get("handoff", lock, (), 1, "p50_ns")
            r = ratio(p50, oneway)
            add(f"handoff p50 of {lock} within 3x one-way core-to-core", None if r is None else r <= 3.0,
                f"{fmt(p50)} ns / {fmt(oneway)} ns = {fmt_ratio(r)}")
        if not any(self.kind(l) == "spinwise" for l in self.locks_in("handoff", ())):
            add("handoff p50 within 3x one-way core-to-core", None, "no spinwise lock in this run")

        for lock in ("ttas_mutex", "hybrid_mutex"):
            on = self.get("uncontended", lock + "+stats", (), 1, "real_ns")
            off = self.get("uncontended", lock, (), 1, "real_ns")
            r = ratio(on, off)
            add(f"statistics: uncontended {lock} with statistics within 1.15x of without", None if r is None else r <= 1.15,
                f"{fmt(on)} ns / {fmt(off)} ns = {fmt_ratio(r)}")
            rs = []
            for params, t in keys:
                a = self.get("contended", lock + "+stats", params, t, "acq_per_s")
                b = self.get("contended", lock, params, t, "acq_per_s")
                if a and b:
                    rs.append((a / b, f"{param_text(params)}, {t} thr"))
            if rs:
                geo = math.exp(sum(math.log(x) for x, _ in rs) / len(rs))
                lo, hi = min(rs), max(rs)
                detail = (f"geometric mean of {len(rs)} scenarios {fmt_ratio(geo)} of the throughput without; "
                          f"range {fmt_ratio(lo[0])} ({lo[1]}) to {fmt_ratio(hi[0])} ({hi[1]}); "
                          f"{sum(1 for x, _ in rs if x < 0.95)} scenarios below 0.95x")
                add(f"statistics: contended {lock} with statistics within 5% of without (geometric mean)",
                    geo >= 0.95, detail)
            else:
                add(f"statistics: contended {lock} with statistics within 5% of without", None, "not in this run")

        self.out("## Targets, judged from this run")
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
# Solid saturated lines for spinwise's locks, dashed muted ones for the peers.
OURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#000000", "#e377c2", "#17becf", "#8c564b"]
PEERS = ["#7f7f7f", "#8c564b", "#bcbd22", "#17becf", "#e377c2", "#393b79", "#637939", "#843c39", "#d6616b"]


def gp_quote(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "''") + "'"


def plot(path, title, ylabel, logscale, series, kinds, gnuplot):
    data_path = path[:-4] + ".dat"
    threads = sorted({t for s in series.values() for t in s})
    locks = [l for l in series if any(v is not None and v > 0 or (not logscale and v == 0)
                                      for v in series[l].values())]
    if not locks or not threads:
        return False
    with open(data_path, "w", encoding="utf-8") as f:
        f.write("# threads " + " ".join(l.replace(" ", "_") for l in locks) + "\n")
        for t in threads:
            row = [str(t)]
            for l in locks:
                v = series[l].get(t)
                ok = v is not None and (v > 0 or (not logscale and v == 0))
                row.append(repr(float(v)) if ok else "?")
            f.write(" ".join(row) + "\n")
    cmds = [
        "set terminal pngcairo size 1100,650 enhanced font 'sans,10'",
        f"set output {gp_quote(path)}",
        "set datafile missing '?'",
        f"set title {gp_quote(title)} noenhanced",
        "set xlabel 'threads'",
        f"set ylabel {gp_quote(ylabel)} noenhanced",
        "set logscale x 2",
        "set xtics (" + ", ".join(f"'{t}' {t}" for t in threads) + ")",
        f"set xrange [{threads[0] * 0.9}:{threads[-1] * 1.1}]",
        "set grid",
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
        style = f"with linespoints lw {2.5 if ours else 1.8} dt {1 if ours else 2} pt {pt} ps 0.9 lc rgb '{color}'"
        plots.append(f"{gp_quote(data_path)} using 1:{i + 2} {style} title {gp_quote(lock)}")
    cmds.append("plot " + ", \\\n     ".join(plots))
    r = subprocess.run([gnuplot], input="\n".join(cmds) + "\n", text=True, capture_output=True)
    if r.returncode != 0:
        raise ReportError(f"gnuplot failed on {path}: {r.stderr.strip()}")
    return True


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", help="spinwise-bench --benchmark_out=... --benchmark_out_format=json output")
    ap.add_argument("--out", help="output folder (default: the JSON's folder)")
    ap.add_argument("--no-plots", action="store_true", help="tables only")
    args = ap.parse_args(argv)
    out_dir = args.out or os.path.dirname(os.path.abspath(args.json))
    plot_dir = os.path.join(out_dir, "plots")
    try:
        ctx, kinds, fifo, results, errors = load(args.json)
        gnuplot = None
        if not args.no_plots:
            gnuplot = shutil.which("gnuplot")
            if gnuplot is None:
                raise ReportError("gnuplot not found (Debian: gnuplot-nox); use --no-plots for tables only")
        rep = Report(ctx, kinds, fifo, results, errors)
        text = rep.render(plot_dir)
        os.makedirs(out_dir, exist_ok=True)
        made = 0
        if gnuplot:
            os.makedirs(plot_dir, exist_ok=True)
            for old in os.listdir(plot_dir):  # plots/ is ours: no stale plot outlives a re-run
                if old.endswith((".png", ".dat")):
                    os.remove(os.path.join(plot_dir, old))
            for path, title, ylabel, log, series in rep.plots:
                made += plot(path, title, ylabel, log, series, kinds, gnuplot)
        else:
            text = "\n".join(l for l in text.split("\n") if not l.startswith("![")) + "\n"
        with open(os.path.join(out_dir, "report.md"), "w", encoding="utf-8") as f:
            f.write(text)
    except (ReportError, OSError) as e:
        print(f"report.py: {e}", file=sys.stderr)
        return 1
    print(f"report.py: wrote {os.path.join(out_dir, 'report.md')} and {made} plots"
          + (f"; {len(errors)} benchmarks had failed" if errors else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
