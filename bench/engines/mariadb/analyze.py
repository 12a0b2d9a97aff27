#!/usr/bin/env python3
"""The MariaDB harness's arithmetic (bench/engines/mariadb/harness.sh, docs/engines.md).

  read-multiplier  my_cpu_relax_multiplier of a running mariadbd (an exported data symbol)
  run              one measured run as a JSON line: sysbench's figures, the server's CPU and context
                   switches from /proc, and the share of the server's cpu-clock samples in spin loops
  summarize        the runs of a sweep: per setting the median and range over passes, the drift
                   between passes, the best delay and the advised one; JSON, CSV and a PNG
  pause-windows    the spin-loop address ranges of a binary (for checking the classifier)
  rule-check       every sweep kept under bench/results: is the advised delay within --within (5%) of
                   each workload's best, or can the sweep not tell (then --tune measures it)?

A sample is in a spin loop when its address, in the server binary, lies within a few bytes of a
PAUSE instruction: MariaDB's delay loops (srw_pause, ut_delay, the inlined LF_BACKOFF) are each a
PAUSE, a decrement and a branch, and nothing else in mariadbd issues PAUSE. Debian strips mariadbd,
so function names are not available; the instruction is.
"""
import argparse
import bisect
import json
import math
import os
import re
import signal
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import plot as gnuplot  # noqa: E402  (bench/plot.py: the scripts' one way to gnuplot)
import run_context  # noqa: E402  (the machine, named as spinwise's tools name it)

WINDOW_BEFORE = 8  # bytes before a PAUSE: the loop's test and branch
WINDOW_AFTER = 12  # bytes after it: the decrement and the backward branch
MIN_PASSES_FOR_VERDICT = 4  # uncertainty.hpp's kMinRunsForVerdict: 2 / C(8, 4) = 2.9% false alarms
# engine_advice.hpp's kAdviceFewCpus: on a host of this many CPUs or fewer --advise says its rule
# cannot tell (and names --tune); tests/bench/rule_check_py_test.py checks the two agree.
ADVICE_FEW_CPUS = 4


def fail(msg):
    print(f"analyze: {msg}", file=sys.stderr)
    sys.exit(1)


def dynamic_symbol(binary, name):
    out = subprocess.run(["nm", "-D", "--defined-only", binary], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"nm -D {binary}: {out.stderr.strip()}")
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16)
    fail(f"{binary} exports no symbol {name}")


def load_base(pid, binary):
    real = os.path.realpath(binary)
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 6 and os.path.realpath(fields[5]) == real and int(fields[2], 16) == 0:
                return int(fields[0].split("-")[0], 16)
    fail(f"{binary} is not mapped in process {pid}")


def cmd_read_multiplier(a):
    addr = load_base(a.pid, a.binary) + dynamic_symbol(a.binary, "my_cpu_relax_multiplier")
    with open(f"/proc/{a.pid}/mem", "rb") as m:
        m.seek(addr)
        print(struct.unpack("<I", m.read(4))[0])


def pause_windows(binary, cache=None):
    """Sorted (start, end) address ranges around every PAUSE in the binary's code."""
    if cache and os.path.exists(cache):
        with open(cache) as f:
            return [tuple(x) for x in json.load(f)]
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"objdump -d {binary}: {out.stderr.strip()[:200]}")
    pauses = [int(m.group(1), 16) for m in re.finditer(r"^\s*([0-9a-f]+):\s+pause\s*$", out.stdout, re.M)]
    if not pauses:
        fail(f"{binary} has no PAUSE instruction: nothing to classify (not x86-64?)")
    windows = [(p - WINDOW_BEFORE, p + WINDOW_AFTER) for p in sorted(pauses)]
    if cache:
        with open(cache, "w") as f:
            json.dump(windows, f)
    return windows


MMAP_RE = re.compile(r"PERF_RECORD_MMAP2? (\d+)/\d+: \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (?:0x)?([0-9a-f]+).*\]: \S+ (\S+)")


def spin_samples(perf_data, pid, binary, windows):
    """(samples of the server, of it in spin loops, of the whole machine)."""
    real = os.path.realpath(binary)
    out = subprocess.run(["perf", "script", "-i", perf_data, "--show-mmap-events", "-F", "pid,ip,dso"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"perf script -i {perf_data}: {out.stderr.strip()[:300]}")
    maps = []  # (start, end, pgoff) of the server binary's mappings
    starts = [w[0] for w in windows]
    server = spin = total = 0
    for line in out.stdout.splitlines():
        if "PERF_RECORD_MMAP" in line:
            m = MMAP_RE.search(line)
            if m and int(m.group(1)) == pid and os.path.realpath(m.group(5)) == real:
                start, length, pgoff = int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16)
                maps.append((start, start + length, pgoff))
            continue
        fields = line.split()
        if len(fields) < 2 or not fields[0].isdigit():
            continue
        total += 1
        if int(fields[0]) != pid:
            continue
        server += 1
        ip = int(fields[1], 16)
        for start, end, pgoff in maps:
            if start <= ip < end:
                addr = ip - start + pgoff  # mariadbd's code segment has vaddr == file offset
                i = bisect.bisect_right(starts, addr) - 1
                if i >= 0 and addr < windows[i][1]:
                    spin += 1
                break
    return server, spin, total


def parse_sysbench(path):
    text = open(path).read()

    def grab(pattern, what):
        m = re.search(pattern, text)
        if not m:
            fail(f"{path}: no {what} in sysbench's output")
        return float(m.group(1))

    return {
        "qps": grab(r"queries:\s+\d+\s+\(([\d.]+) per sec", "queries per second"),
        "tps": grab(r"transactions:\s+\d+\s+\(([\d.]+) per sec", "transactions per second"),
        "p95_ms": grab(r"95th percentile:\s+([\d.]+)", "95th percentile"),
        "errors": grab(r"ignored errors:\s+(\d+)", "ignored errors"),
        "reconnects": grab(r"reconnects:\s+(\d+)", "reconnects"),
    }


def cmd_run(a):
    r = {"test": a.test, "threads": a.threads, "delay": a.delay, "pass": a.pass_, "spin_loops": a.spin_loops}
    r.update(parse_sysbench(a.sysbench))
    wall = a.wall[1] - a.wall[0]
    r["wall_s"] = round(wall, 3)
    r["server_cpus"] = round((a.cpu_ticks[1] - a.cpu_ticks[0]) / a.clk_tck / wall, 3)
    r["server_cpu_share"] = round(r["server_cpus"] / a.ncpu, 4)
    ctx_wall = a.ctx_wall[1] - a.ctx_wall[0]
    r["voluntary_ctx_per_s"] = round((a.ctx[2] - a.ctx[0]) / ctx_wall, 1)
    r["involuntary_ctx_per_s"] = round((a.ctx[3] - a.ctx[1]) / ctx_wall, 1)
    cache = os.path.join(os.path.dirname(os.path.abspath(a.perf)), "pause-windows.json")
    windows = pause_windows(a.binary, cache)
    server, spin, total = spin_samples(a.perf, a.server_pid, a.binary, windows)
    if server == 0:
        fail(f"{a.perf}: no sample of the server (pid {a.server_pid}) among {total}")
    r["samples_machine"] = total
    r["samples_server"] = server
    r["samples_spin"] = spin
    r["spin_share"] = round(spin / server, 5)
    print(json.dumps(r))


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def cmd_summarize(a):
    runs = [json.loads(line) for line in open(a.runs) if line.strip()]
    if not runs:
        fail(f"{a.runs}: no runs")
    advised = None if a.advised in ("", "none") else int(a.advised)
    groups = {}
    for r in runs:
        groups.setdefault((r["test"], r["threads"], r["spin_loops"]), {}).setdefault(r["delay"], []).append(r)
    workloads = []
    for (test, threads, loops), by_delay in sorted(groups.items()):
        points = []
        for delay in sorted(by_delay):
            rs = by_delay[delay]
            q = [r["qps"] for r in rs]
            points.append({
                "delay": delay, "passes": len(rs),
                "qps_median": median(q), "qps_min": min(q), "qps_max": max(q),
                "qps_by_pass": [r["qps"] for r in sorted(rs, key=lambda r: r["pass"])],
                "p95_ms_median": median([r["p95_ms"] for r in rs]),
                "spin_share_median": median([r["spin_share"] for r in rs]),
                "spin_share_min": min(r["spin_share"] for r in rs),
                "spin_share_max": max(r["spin_share"] for r in rs),
                "server_cpus_median": median([r["server_cpus"] for r in rs]),
                "voluntary_ctx_per_s_median": median([r["voluntary_ctx_per_s"] for r in rs]),
                "involuntary_ctx_per_s_median": median([r["involuntary_ctx_per_s"] for r in rs]),
            })
        best = max(points, key=lambda p: p["qps_median"])
        # Noise: the spread of one setting between passes, relative to its median; the median over
        # the settings is the harness's run-to-run spread for this workload.
        spreads = [(p["qps_max"] - p["qps_min"]) / p["qps_median"] for p in points if p["passes"] > 1]
        # Drift: the ratio of the later pass to the first, per setting (passes run in reverse order,
        # so a steady drift shows as a ratio that moves with the order, not the setting).
        drift = [p["qps_by_pass"][-1] / p["qps_by_pass"][0] for p in points if p["passes"] > 1]
        w = {"test": test, "threads": threads, "spin_loops": loops, "points": points,
             "best_delay": best["delay"], "best_qps": best["qps_median"],
             "spread_median": round(median(spreads), 4) if spreads else None,
             "spread_max": round(max(spreads), 4) if spreads else None,
             "drift_last_over_first_median": round(median(drift), 4) if drift else None}
        if advised is not None and advised in by_delay:
            adv = next(p for p in points if p["delay"] == advised)
            ratio = adv["qps_median"] / best["qps_median"]
            w["advised"] = {"delay": advised, "qps_median": adv["qps_median"], "over_best": round(ratio, 4),
                            "within_5pct": ratio >= 0.95,
                            "gap_within_spread": w["spread_median"] is not None and 1 - ratio <= w["spread_median"]}
        workloads.append(w)
    doc = {"harness": "bench/engines/mariadb/harness.sh", "mode": a.mode, "server": a.version,
           "my_cpu_relax_multiplier": None if a.relax_multiplier == "null" else int(a.relax_multiplier),
           "advised_delay": advised, "started": a.started, "load_average_at_start": a.load,
           "run": run_context.here(), "passes": max(r["pass"] for r in runs), "workloads": workloads, "runs": runs}
    os.makedirs(a.out, exist_ok=True)
    stem = os.path.join(a.out, {"sweep": "sweep", "smoke": "smoke", "spin-loops-probe": "spin-loops"}[a.mode])
    with open(stem + ".json", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    cols = ["test", "threads", "spin_loops", "delay", "pass", "qps", "tps", "p95_ms", "errors", "server_cpus",
            "voluntary_ctx_per_s", "involuntary_ctx_per_s", "samples_server", "samples_spin", "spin_share"]
    with open(stem + ".csv", "w") as f:
        f.write(",".join(cols) + "\n")
        for r in runs:
            f.write(",".join(str(r[c]) for c in cols) + "\n")
    for w in workloads:
        line = f"{w['test']} {w['threads']} thr (spin loops {w['spin_loops']}): best delay {w['best_delay']} " \
               f"{w['best_qps']:.0f} qps; spread between passes median {fmt_pct(w['spread_median'])}"
        if "advised" in w:
            line += f"; advised {w['advised']['delay']}: {w['advised']['over_best']:.3f}x the best"
        print(line)
    if a.mode == "sweep":
        plot(doc, stem)


def fmt_pct(x):
    return "-" if x is None else f"{100 * x:.1f}%"


def plot(doc, stem):
    """QPS (relative to each workload's best) and spin share against the delay; the advised value marked."""
    dat = stem + ".dat"
    blocks = []
    with open(dat, "w") as f:
        for w in doc["workloads"]:
            f.write(f"# {w['test']} {w['threads']}\n")
            for p in w["points"]:
                f.write(f"{p['delay']} {p['qps_median'] / w['best_qps']:.4f} {p['qps_min'] / w['best_qps']:.4f} "
                        f"{p['qps_max'] / w['best_qps']:.4f} {100 * p['spin_share_median']:.2f}\n")
            f.write("\n\n")
            blocks.append(f"{w['test']} {w['threads']} thr")
    adv = doc["advised_delay"]
    run = run_context.from_tool(doc)  # "run", or an older file's "machine"
    machine = f"{run['cpu_model']}, {run['cpus_allowed']} CPUs"
    title = (f"MariaDB {doc['server']} (my_cpu_relax_multiplier {doc['my_cpu_relax_multiplier']}), "
             f"{machine}; median of {doc['passes']} passes, bars: min..max" if doc.get("passes") else
             f"MariaDB {doc['server']}, {machine}")
    gp = [
        gnuplot.terminal(1100, 800),
        f"set output {gnuplot.quote(stem + '.png')}", f"set multiplot layout 2,1 title {gnuplot.quote(title)}",
        "set logscale x 2", "set xrange [0.7:80]", "set grid", "set key bottom left",
        "set xlabel 'innodb_spin_wait_delay (0 drawn at 0.8)'",
        "set ylabel 'QPS / best QPS of the workload'",
        (f"set arrow from {max(adv, 0.8)},graph 0 to {max(adv, 0.8)},graph 1 nohead dt 2 lc rgb 'red'; "
         f"set label 'advised {adv}' at {max(adv, 0.8)},graph 0.55 offset 0.5,0 tc rgb 'red'") if adv is not None else "",
        "plot " + ", ".join(
            f"'{dat}' index {i} using ($1==0?0.8:$1):2:3:4 with yerrorlines title '{b}'" for i, b in enumerate(blocks)),
        "set ylabel 'server CPU in spin loops (%)'", "set key top left",
        "plot " + ", ".join(f"'{dat}' index {i} using ($1==0?0.8:$1):5 with linespoints title '{b}'"
                            for i, b in enumerate(blocks)),
        "unset multiplot",
    ]
    try:
        gnuplot.run(gp)
    except gnuplot.PlotError as e:
        print(f"analyze: gnuplot failed, no plot: {e}", file=sys.stderr)
    finally:
        os.remove(dat)


def cmd_replot(a):
    doc = json.load(open(a.json))
    plot(doc, os.path.splitext(a.json)[0])


def cmd_pause_windows(a):
    for s, e in pause_windows(a.binary):
        print(f"{s:x}-{e:x}")


def cmd_rule_check(a):
    """The advice's rule against every sweep kept: per workload, the QPS at the advised delay over
    the best delay's (medians over passes). Within `within` of the best: met. Further: beyond, only
    when both settings have MIN_PASSES_FOR_VERDICT passes and their ranges do not overlap (the
    range rule of spinwise/runtime/uncertainty.hpp: with 2 passes a side, disjoint ranges happen
    by chance 1 time in 3); else the sweep cannot tell, and so does one with no advised delay:
    spinwise-calibrate --tune measures on the server instead. On a host of ADVICE_FEW_CPUS CPUs or
    fewer (the sweep's machine.cpu_count) the advice itself says it cannot tell and names --tune:
    its ratio is printed and not judged. A sweep that did not record its CPUs is judged. Exit 1
    when one is beyond. A CPU with no sweep kept is not listed: the sweeps name their CPU by its
    model string only."""
    beyond = 0
    swept = set()
    for dirpath, _, files in sorted(os.walk(a.results)):
        if "sweep.json" not in files:
            continue
        path = os.path.join(dirpath, "sweep.json")
        doc = json.load(open(path))
        if doc.get("mode") != "sweep" or "workloads" not in doc:
            continue
        cpu = doc.get("machine", {}).get("cpu_model", "?")
        cpus = doc.get("machine", {}).get("cpu_count") or 0
        swept.add(cpu)
        advised = doc.get("advised_delay")
        for w in doc["workloads"]:
            pts = {p["delay"]: p for p in w["points"]}
            best = max(pts.values(), key=lambda p: p["qps_median"])
            head = f"{os.path.relpath(path, a.results)} ({cpu}): {w['test']} {w['threads']} threads"
            if advised is None or advised not in pts:
                print(f"{head}: cannot tell (no advised delay in this sweep); spinwise-calibrate --tune measures it")
                continue
            at = pts[advised]
            ratio = at["qps_median"] / best["qps_median"]
            if 0 < cpus <= ADVICE_FEW_CPUS:
                verdict = (f"cannot tell (the advice says so on {cpus} CPUs, {ADVICE_FEW_CPUS} or fewer); "
                           "spinwise-calibrate --tune measures it")
            elif ratio >= 1 - a.within:
                verdict = "within"
            elif min(at["passes"], best["passes"]) < MIN_PASSES_FOR_VERDICT:
                verdict = (f"cannot tell ({min(at['passes'], best['passes'])} passes; {MIN_PASSES_FOR_VERDICT} a side "
                           "decide); spinwise-calibrate --tune measures it")
            elif at["qps_max"] >= best["qps_min"]:
                verdict = "cannot tell (the pass ranges overlap); spinwise-calibrate --tune measures it"
            else:
                verdict = "BEYOND"
                beyond += 1
            print(f"{head}: advised {advised} gives {ratio:.3f}x the best (delay {best['delay']}): {verdict}"
                  f"{f' {a.within:.0%}' if verdict in ('within', 'BEYOND') else ''}")
    sys.exit(1 if beyond else 0)


def main():
    signal.signal(signal.SIGINT, lambda *_: sys.exit(130))  # the harness reports the interruption
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("read-multiplier")
    m.add_argument("--pid", type=int, required=True)
    m.add_argument("--binary", required=True)
    r = sub.add_parser("run")
    r.add_argument("--perf", required=True)
    r.add_argument("--sysbench", required=True)
    r.add_argument("--server-pid", type=int, required=True)
    r.add_argument("--binary", required=True)
    r.add_argument("--test", required=True)
    r.add_argument("--threads", type=int, required=True)
    r.add_argument("--delay", type=int, required=True)
    r.add_argument("--pass", dest="pass_", type=int, required=True)
    r.add_argument("--spin-loops", type=int, required=True)
    r.add_argument("--wall", type=float, nargs=2, required=True)
    r.add_argument("--cpu-ticks", type=float, nargs=2, required=True)
    r.add_argument("--clk-tck", type=float, required=True)
    r.add_argument("--ncpu", type=int, required=True)
    r.add_argument("--ctx", type=float, nargs=4, required=True)
    r.add_argument("--ctx-wall", type=float, nargs=2, required=True)
    s = sub.add_parser("summarize")
    s.add_argument("--runs", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--advised", default="")
    s.add_argument("--version", default="")
    s.add_argument("--relax-multiplier", default="null")
    s.add_argument("--started", default="")
    s.add_argument("--load", default="")
    s.add_argument("--mode", choices=["sweep", "smoke", "spin-loops-probe"], default="sweep")
    rp = sub.add_parser("replot")
    rp.add_argument("--json", required=True)
    w = sub.add_parser("pause-windows")
    w.add_argument("--binary", required=True)
    rc = sub.add_parser("rule-check")
    rc.add_argument("--results", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                      "results"))
    rc.add_argument("--within", type=float, default=0.05)
    a = p.parse_args()
    {"read-multiplier": cmd_read_multiplier, "run": cmd_run, "summarize": cmd_summarize,
     "pause-windows": cmd_pause_windows, "replot": cmd_replot, "rule-check": cmd_rule_check}[a.cmd](a)


if __name__ == "__main__":
    main()
