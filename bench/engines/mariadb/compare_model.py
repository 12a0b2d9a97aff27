#!/usr/bin/env python3
"""The real MariaDB's delay curve beside spinwise-stress's model of it (docs/engines.md, "Does the
model predict the engine?").

  compare_model.py --engine bench/results/engines/sweep.json \
                   --model bench/results/engines/model/sweep-stats-lock.csv --out bench/results/engines/model

Both curves as throughput relative to their own best, and spin CPU share, against
innodb_spin_wait_delay. The model's rows: --cpu-model native, --policy innodb (the rows whose
policy is innodb). Writes model-vs-engine.png and model-vs-engine.json (the best delay of each,
the slope of the loss from the best to delay 50, and the rank correlation of the two curves).
"""
import argparse
import csv
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import plot as gnuplot  # noqa: E402  (bench/plot.py: the scripts' one way to gnuplot)


def model_points(path, cpu_model):
    by_delay = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["policy"] != "innodb" or row["cpu_model"] != cpu_model:
                continue
            d = int(row["spin_wait_delay"])
            by_delay[d] = {"delay": d, "threads": int(row["threads"]), "rps_median": float(row["requests_per_s_median"]),
                           "rps_min": float(row["requests_per_s_min"]), "rps_max": float(row["requests_per_s_max"]),
                           "spin_share_median": float(row["spin_cpu_share_median"])}
    if not by_delay:
        sys.exit(f"compare_model: no innodb rows for cpu_model {cpu_model} in {path}")
    return [by_delay[d] for d in sorted(by_delay)]


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = math.sqrt(sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb))
    return num / den if den else float("nan")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--engine", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--cpu-model", default="native")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    eng = json.load(open(a.engine))
    model = model_points(a.model, a.cpu_model)
    mbest = max(model, key=lambda q: q["rps_median"])
    mdelays = {q["delay"]: q for q in model}
    out = {"engine": a.engine, "model": a.model, "model_cpu_model": a.cpu_model,
           "model_threads": model[0]["threads"], "model_best_delay": mbest["delay"],
           "model_loss_at_50": round(mdelays[50]["rps_median"] / mbest["rps_median"], 4) if 50 in mdelays else None,
           "model_spin_share_at_30": mdelays.get(30, {}).get("spin_share_median"),
           "workloads": []}
    dat = os.path.join(a.out, "model-vs-engine.dat")
    os.makedirs(a.out, exist_ok=True)
    titles = []
    with open(dat, "w") as f:
        for q in model:
            f.write(f"{q['delay']} {q['rps_median'] / mbest['rps_median']:.4f} {q['rps_min'] / mbest['rps_median']:.4f} "
                    f"{q['rps_max'] / mbest['rps_median']:.4f} {100 * q['spin_share_median']:.2f}\n")
        f.write("\n\n")
        titles.append(f"spinwise-stress stats-lock, innodb policy, {a.cpu_model} relax, {model[0]['threads']} threads")
        for w in eng["workloads"]:
            pts = {q["delay"]: q for q in w["points"]}
            common = [d for d in sorted(pts) if d in mdelays]
            rho = spearman([pts[d]["qps_median"] for d in common], [mdelays[d]["rps_median"] for d in common])
            rho_spin = spearman([pts[d]["spin_share_median"] for d in common],
                                [mdelays[d]["spin_share_median"] for d in common])
            out["workloads"].append({
                "test": w["test"], "threads": w["threads"], "engine_best_delay": w["best_delay"],
                "engine_loss_at_50": round(pts[50]["qps_median"] / w["best_qps"], 4) if 50 in pts else None,
                "engine_spin_share_at_30": pts.get(30, {}).get("spin_share_median"),
                "spread_median": w["spread_median"],
                "rank_correlation_throughput": round(rho, 3), "rank_correlation_spin_share": round(rho_spin, 3)})
            for d in sorted(pts):
                q = pts[d]
                f.write(f"{d} {q['qps_median'] / w['best_qps']:.4f} {q['qps_min'] / w['best_qps']:.4f} "
                        f"{q['qps_max'] / w['best_qps']:.4f} {100 * q['spin_share_median']:.2f}\n")
            f.write("\n\n")
            titles.append(f"MariaDB {w['test']} {w['threads']} thr")
    with open(os.path.join(a.out, "model-vs-engine.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    gp = [gnuplot.terminal(1100, 800), f"set output {gnuplot.quote(os.path.join(a.out, 'model-vs-engine.png'))}",
          "set multiplot layout 2,1 title 'The model (spinwise-stress) beside the real engine, one machine, one session'",
          "set logscale x 2", "set xrange [0.7:80]", "set grid", "set key bottom left",
          "set xlabel 'innodb_spin_wait_delay (0 drawn at 0.8)'", "set ylabel 'throughput / its own best'",
          "plot " + ", ".join(f"'{dat}' index {i} using ($1==0?0.8:$1):2:3:4 with yerrorlines lw {3 if i == 0 else 1} title '{t}'"
                              for i, t in enumerate(titles)),
          "set ylabel 'CPU in spin delays (%)'", "set key top left", "set logscale y", "set yrange [0.01:100]",
          "plot " + ", ".join(f"'{dat}' index {i} using ($1==0?0.8:$1):($5>0?$5:0.01) with linespoints lw {3 if i == 0 else 1} title '{t}'"
                              for i, t in enumerate(titles)),
          "unset multiplot"]
    try:
        gnuplot.run(gp)
    except gnuplot.PlotError as e:
        sys.exit(f"compare_model: gnuplot failed: {e}")
    finally:
        os.remove(dat)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
