"""The markdown report, section by section: the machine and the run, how sure its figures are, the
targets, then a table per scenario (uncontended, handoff, contended, read/write mixes), with the
plots each contended table is drawn as (made by reporting.plots)."""

import math
import os
from collections import Counter

from reporting.results import EXCLUSIVE_REF, SHARED_REF, Results
from reporting.targets import judge_targets
from reporting.text import fmt, fmt_est, param_slug, param_text


class Report(Results):
    def __init__(self, ctx, kinds, fifo, results, errors, stats):
        super().__init__(ctx, kinds, fifo, results, errors, stats)
        self.lines = []
        self.plots = []  # (path, title, ylabel, logscale, {lock: {threads: (median, lo, hi)}})

    def out(self, s=""):
        self.lines.append(s)

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
        res = judge_targets(self)
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
