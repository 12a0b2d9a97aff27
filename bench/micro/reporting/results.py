"""One run's results, looked up by cell (scenario, lock, parameters, threads): the repetitions of a
metric, their median, the best lock of a kind, the one-way core-to-core latency a handoff is held
against. The tables and the targets both read the run through this."""

import run_context
from reporting.text import fmt_ci

EXCLUSIVE_REF = "std::mutex"
SHARED_REF = "std::shared_mutex"


class Results:
    def __init__(self, ctx, kinds, fifo, results, errors, stats):
        self.ctx, self.kinds, self.fifo, self.results, self.errors = ctx, kinds, fifo, results, errors
        self.stats = stats
        stats.prefetch(v for m in results.values() for v in m.values())  # every median, one request line
        self.run = run_context.from_tool(ctx)
        self.cpus = int(self.run["cpus_allowed"] or ctx.get("num_cpus", 0) or 0)
        self.reps = max((len(v) for m in results.values() for v in m.values()), default=0)

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
