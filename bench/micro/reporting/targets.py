"""The bench targets: speed against the xchg floor and the peers, fairness and starvation, parity
with std::mutex, the adaptive policy, the handoff against the one-way latency, the cost of
statistics, the shared latches' default; each judged against the interval of its figure."""

from collections import Counter

from reporting.estimates import MET, NOISE, NOT_MEASURED, NOT_MET, ONE_RUN, combine, judge
from reporting.results import EXCLUSIVE_REF
from reporting.text import fmt, fmt_target, param_text


def judge_targets(run):
    """[(target, judgement, detail)] of a Results, in the report's order."""
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

    un = lambda lock: run.sample("uncontended", lock, (), 1, "real_ns")  # noqa: E731
    floor, ttas, stdm = un("xchg_floor"), un("ttas_mutex"), un(EXCLUSIVE_REF)
    e = run.stats.ratio(ttas, floor)
    add("uncontended ttas_mutex within 1.1x of the xchg floor", judge(e, 1.1, at_least=False),
        f"ttas_mutex {run.fmt_ci(ttas)} ns / floor {run.fmt_ci(floor)} ns = {fmt_target(e)}")
    e = run.stats.ratio(stdm, ttas)
    add("uncontended ttas_mutex at least 2x faster than std::mutex", judge(e, 2.0),
        f"std::mutex {run.fmt_ci(stdm)} ns / ttas_mutex {run.fmt_ci(ttas)} ns = {fmt_target(e)}")

    keys = sorted({(k[2], k[3]) for k in run.results if k[0] == "contended"})
    con = lambda lock, params, t, m="acq_per_s": run.sample("contended", lock, params, t, m)  # noqa: E731
    best_cells, fair_cells = [], []
    for params, t in keys:
        bs = run.best("spinwise", "contended", params, t, "acq_per_s", True)
        bp = run.best_peer("contended", params, t, "acq_per_s", True)
        if not bs or not bp:
            continue
        e = run.stats.ratio(con(bs[0], params, t), con(bp[0], params, t))
        best_cells.append((f"{param_text(params)}, {t} thr: {bs[0]} vs {bp[0]}", fmt_target(e),
                           judge(e, 1.0)))
        if bs[0] in run.fifo:
            cov = con(bs[0], params, t, "fair_cov")
            if cov is not None:
                fair_cells.append((f"{param_text(params)}, {t} thr: {bs[0]} CoV", run.fmt_ci(cov),
                                   judge(run.stats.scaled(cov, 0.1), 1.0, at_least=False)))
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
            e = run.stats.ratio(con(lock, params, t), con(ref, params, t))
            if e is not None:
                found.append((f"{prefix}{param_text(params)}, {t} thr", fmt_target(e), judge(e, at_least)))
        return found

    def geo_vs(a_lock, b_lock, scenario, bound):
        """(judgement, detail): the geometric mean over `scenario`'s cells of a_lock's throughput
        over b_lock's, with its bootstrap interval, judged against >= bound."""
        pairs, per = [], []
        for params, t in sorted({(k[2], k[3]) for k in run.results if k[0] == scenario}):
            a = run.sample(scenario, a_lock, params, t, "acq_per_s")
            b = run.sample(scenario, b_lock, params, t, "acq_per_s")
            e = run.stats.ratio(a, b) if a and b else None
            if e is not None:
                pairs.append((a, b))
                per.append((e, f"{param_text(params)}, {t} thr"))
        if not per:
            return NOT_MEASURED, "not in this run"
        geo = run.stats.geomean(pairs)
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
        h = run.sample(scen, "hybrid_mutex", (), 1, metric)
        m = run.sample(scen, EXCLUSIVE_REF, (), 1, metric)
        e = run.stats.ratio(m, h)
        add(f"hybrid_mutex at least matches std::mutex, {scen}", judge(e, 1.0),
            f"std::mutex {run.fmt_ci(m)} {what} / hybrid_mutex {run.fmt_ci(h)} {what} = {fmt_target(e)}")
    oversub16 = (lambda t: run.cpus and t >= 16 * run.cpus)
    add(f"hybrid_mutex beats tbb::spin_mutex at 16x oversubscription ({16 * run.cpus} threads)",
        *cells(vs("hybrid_mutex", "tbb::spin_mutex", oversub16), "scenarios"))
    for lock in ("ttas_mutex", "hybrid_mutex"):
        add(f"locks: {lock} >= std::mutex at 2 threads",
            *cells(vs(lock, EXCLUSIVE_REF, lambda t: t == 2), "scenarios"))
    oversub = (lambda t: run.cpus and t in (4 * run.cpus, 16 * run.cpus))
    add("locks: hybrid_mutex >= std::mutex at 4x and 16x oversubscription",
        *cells(vs("hybrid_mutex", EXCLUSIVE_REF, oversub), "scenarios"))
    found = []
    for lock in run.locks_in("contended"):
        if run.kind(lock) == "spinwise":
            found += vs(lock, EXCLUSIVE_REF, oversub, at_least=0.5, prefix=f"{lock} ")
    add("locks: no spinwise lock below 0.5x std::mutex at 4x and 16x oversubscription", *cells(found))

    # The adaptive policy: no knob against the fixed default, and against tbb::spin_mutex
    # where hybrid_mutex trailed it (16x oversubscription, 1000 ns critical sections).
    for lock in ("hybrid_mutex", "ttas_mutex"):
        add(f"adaptive: {lock}<adaptive> >= {lock} (the fixed default) over the contended cells "
            f"(geometric mean)", *geo_vs(lock + "<adaptive>", lock, "contended", 1.0))
    long_cs = (lambda t: run.cpus and t >= 16 * run.cpus)
    found = [c for c in vs("hybrid_mutex<adaptive>", "tbb::spin_mutex", long_cs)
             if c[0].startswith("critical section 1000 ns")]
    add(f"adaptive: hybrid_mutex<adaptive> >= tbb::spin_mutex at 16x oversubscription, 1000 ns critical "
        f"sections ({16 * run.cpus} threads)", *cells(found, "scenarios"))

    # Starvation: the slowest thread's acquisitions over the fastest's, per repetition, and beside
    # it the same two threads' CPU time in the window (where the run has it): a starved thread
    # that had as much CPU as the fastest was refused the lock; one that had none was off its
    # CPU. A repetition whose fastest thread shows no CPU time (its clock unread) has no CPU ratio.
    def min_over_max(lock, params, t, low="fair_min", high="fair_max", skip_zero=False):
        mn = run.sample("contended", lock, params, t, low)
        mx = run.sample("contended", lock, params, t, high)
        if not mn or not mx:
            return None
        return [a / b if b > 0 else 0.0 for a, b in zip(mn, mx) if b > 0 or not skip_zero] or None

    for lock in ("ttas_mutex", "hybrid_mutex", "ttas_mutex<adaptive>", "hybrid_mutex<adaptive>"):
        found = []
        for params, t in keys:
            if not (run.cpus and t >= 16 * run.cpus):
                continue
            r = min_over_max(lock, params, t)
            if r:
                cpu = min_over_max(lock, params, t, "fair_min_cpu_ms", "fair_max_cpu_ms", skip_zero=True)
                # How long the windows lasted: a window shorter than the scheduler's round over
                # 16 threads a CPU leaves some threads no turn in it, whatever the lock.
                # A window that never opened counts from each thread's start: say how many.
                win = run.sample("contended", lock, params, t, "fair_window_ms")
                shut = sum(1 for o in run.sample("contended", lock, params, t, "fair_window_open") or [] if o == 0)
                notes = ([f"CPU time ratio {run.fmt_ci(cpu)}"] if cpu else []) + (
                    [f"window {fmt(min(win))}–{fmt(max(win))} ms"
                     + (f", {shut} from each thread's start" if shut else "")] if win else [])
                text = run.fmt_ci(r) + (f" ({'; '.join(notes)})" if notes else "")
                found.append((f"{param_text(params)}, {t} thr", text, judge(run.stats.scaled(r, 0.3), 1.0)))
        add(f"starvation: {lock} slowest/fastest thread's acquisitions >= 0.3 at 16x oversubscription",
            *cells(found, "scenarios"))

    for lock in run.locks_in("handoff", ()):
        if run.kind(lock) != "spinwise":
            continue
        p50 = run.sample("handoff", lock, (), 1, "p50_ns")
        e = run.handoff_over_oneway(lock)
        own = run.own_oneway(lock)
        samples, const = run.oneway()
        ref = own or samples  # per repetition, else the run's c2c_oneway benchmark
        c2c = run.fmt_ci(ref) if ref is not None else fmt(const)
        how = ", each repetition over the latency measured after it" if own else ""
        add(f"handoff p50 of {lock} within 3x one-way core-to-core", judge(e, 3.0, at_least=False),
            f"{run.fmt_ci(p50)} ns / {c2c} ns = {fmt_target(e)}{how}")
    if not any(run.kind(l) == "spinwise" for l in run.locks_in("handoff", ())):
        add("handoff p50 within 3x one-way core-to-core", NOT_MEASURED, "no spinwise lock in this run")

    for lock in ("ttas_mutex", "hybrid_mutex"):
        on, off = un(lock + "+stats"), un(lock)
        e = run.stats.ratio(on, off)
        add(f"statistics: uncontended {lock} with statistics within 1.15x of without",
            judge(e, 1.15, at_least=False), f"{run.fmt_ci(on)} ns / {run.fmt_ci(off)} ns = {fmt_target(e)}")
        add(f"statistics: contended {lock} with statistics within 5% of without (geometric mean)",
            *geo_vs(lock + "+stats", lock, "contended", 0.95))

    # The run-time switches: counting switched off costs what no_stats costs (within 2%);
    # tracking on is reported, with no bound but its own.
    on, off = un("hybrid_mutex+stats_off"), un("hybrid_mutex")
    e = run.stats.ratio(on, off)
    add("statistics: uncontended hybrid_mutex with statistics switched off at run time within 1.02x "
        "of no_stats", judge(e, 1.02, at_least=False),
        f"{run.fmt_ci(on)} ns / {run.fmt_ci(off)} ns = {fmt_target(e)}")
    on = un("hybrid_mutex+tracking")
    e = run.stats.ratio(on, off)
    add("statistics: uncontended hybrid_mutex with holder tracking on (cost, no target)",
        "reported" if e is not None else NOT_MEASURED,
        f"{run.fmt_ci(on)} ns / {run.fmt_ci(off)} ns = {fmt_target(e)}")

    # The shared latches' default became time_policy after 0.2.0; <innodb> is the old default (the
    # InnoDB replay) in the same run, so this is the change of default, before/after.
    for lock in ("hybrid_shared_mutex", "sx_lock"):
        add(f"shared latches: {lock} (time, the default) loses no throughput to {lock}<innodb> "
            f"(geometric mean over the rw cells)", *geo_vs(lock, lock + "<innodb>", "rw", 1.0))
    return res
