"""The PNG plots, one per scenario, parameter set, group of locks and metric, through bench/plot.py."""

import plot as gp  # bench/plot.py: the scripts' one way to gnuplot
from reporting import ReportError

# Solid saturated lines for spinwise's locks, dashed muted ones for the peers; each point the
# median with a bar over its interval (min..max below six repetitions), nudged sideways a little
# per lock so that bars at one thread count do not hide each other.
OURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#000000", "#e377c2", "#17becf", "#8c564b"]
PEERS = ["#7f7f7f", "#8c564b", "#bcbd22", "#17becf", "#e377c2", "#393b79", "#637939", "#843c39", "#d6616b"]
NUDGE = 0.012  # log2 units between neighbouring locks' points: 20 locks span +-12%


def plot(path, title, ylabel, logscale, series, kinds):
    data_path = path[:-4] + ".dat"
    threads = sorted({t for s in series.values() for t in s})

    def ok(v):
        return v is not None and (v[0] > 0 or (not logscale and v[0] == 0))

    locks = [l for l in series if any(ok(v) for v in series[l].values())]
    if not locks or not threads:
        return False
    with open(data_path, "w", encoding="utf-8") as f:
        f.write("# threads, then per lock: x (nudged), median, interval low, interval high: "
                + " ".join(l.replace(" ", "_") for l in locks) + "\n")
        for t in threads:
            row = [str(t)]
            for i, l in enumerate(locks):
                v = series[l].get(t)
                x = t * 2 ** ((i - (len(locks) - 1) / 2) * NUDGE)
                if ok(v):
                    med, lo, hi = (float(u) for u in v)
                    if logscale and lo <= 0:
                        lo = med
                    row += [repr(x), repr(med), repr(lo), repr(hi)]
                else:
                    row += [repr(x), "?", "?", "?"]
            f.write(" ".join(row) + "\n")
    cmds = [
        gp.terminal(1100, 650, font="sans,10"),
        f"set output {gp.quote(path)}",
        "set datafile missing '?'",
        f"set title {gp.quote(title + ' (bars: interval of the median over the repetitions)')} noenhanced",
        "set xlabel 'threads'",
        f"set ylabel {gp.quote(ylabel)} noenhanced",
        "set logscale x 2",
        "set xtics (" + ", ".join(f"'{t}' {t}" for t in threads) + ")",
        f"set xrange [{threads[0] * 0.85}:{threads[-1] * 1.15}]",
        "set grid",
        "set bars small",
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
        c = 2 + 4 * i
        style = f"with yerrorlines lw {2.5 if ours else 1.8} dt {1 if ours else 2} pt {pt} ps 0.9 lc rgb '{color}'"
        plots.append(f"{gp.quote(data_path)} using {c}:{c + 1}:{c + 2}:{c + 3} {style} title {gp.quote(lock)}")
    cmds.append("plot " + ", \\\n     ".join(plots))
    try:
        gp.run(cmds)
    except gp.PlotError as e:
        raise ReportError(f"gnuplot failed on {path}: {e}") from None
    return True
