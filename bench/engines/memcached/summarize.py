#!/usr/bin/env python3
"""memcached under libspinwise-preload.so: records one run (--record, --record-sysbench, called by
run.sh) and writes <out>/README.md from <out>/runs.jsonl and <out>/context.json (summarize.py OUT).
Exit 1 when a run failed (the README lists it)."""
import json
import math
import os
import re
import statistics as st
import sys
from collections import defaultdict


def preload_counters(stats_path):
    """Sums of the preload.* classes of spinwise's statistics report (None: no file or unreadable).
    The one place that knows the file's layout: numeric fields of each class named preload.*;
    "parks" counts as "os_waits" should the report name them so."""
    if not os.path.exists(stats_path):
        return None
    try:
        d = json.load(open(stats_path))
    except (OSError, ValueError):
        return None
    keys = ("acquisitions", "contended", "os_waits", "spin_ticks", "yields")
    alias = {"parks": "os_waits"}
    tot = {k: 0 for k in keys}
    for c in d.get("classes", []):
        if str(c.get("name", "")).startswith("preload."):
            for k, v in c.items():
                k = alias.get(k, k)
                if k in tot and isinstance(v, (int, float)):
                    tot[k] += v
    tot["counter_hz"] = d.get("counter_hz", 0)
    return tot


def p99_upper_us(text):
    """Upper bound of the 99th percentile from memcaslap's Total Statistics log2 distribution:
    row "b:" lists the counts of [2^b, 2^(b+1)) us, [2^(b+1), ...) and so on."""
    m = re.search(r"Total Statistics \((\d+) events\)(.*?)(?:\n\s*\n|\Z)", text, re.S)
    if not m:
        return None
    buckets = {}
    for row in re.finditer(r"^\s*(\d+):\s+([\d\s]+)$", m.group(2), re.M):
        base = int(row.group(1))
        for i, n in enumerate(row.group(2).split()):
            buckets[base + i] = int(n)
    total = sum(buckets.values())
    if total == 0:
        return None
    acc = 0
    for b in sorted(buckets):
        acc += buckets[b]
        if acc >= 0.99 * total:
            return float(2 ** (b + 1))
    return None


def record(args):
    log, stats, rc, rep, t, c, mix, arm, secs, ticks, hz, cs = args
    text = open(log, errors="replace").read()
    m = re.search(r"Run time: ([\d.]+)s Ops: (\d+) TPS: (\d+)", text)
    r = {"kind": "memcached", "rep": int(rep), "threads": int(t), "conns": int(c), "mix": mix, "arm": arm,
         "seconds": int(secs), "rc": int(rc)}
    avg = re.search(r"Total Statistics \(\d+ events\).*?Avg:\s+(\d+)", text, re.S)
    if m:
        r.update(run_s=float(m.group(1)), ops=int(m.group(2)), ops_per_s=int(m.group(2)) / float(m.group(1)))
    r["avg_us"] = float(avg.group(1)) if avg else None
    r["p99_us_upper"] = p99_upper_us(text)
    r["server_cpu_s"] = int(ticks) / int(hz)
    r["ctx_switches"] = int(cs)
    r["preload"] = preload_counters(stats)
    r["ok"] = int(rc) == 0 and bool(m) and r.get("ops", 0) > 0
    if not r["ok"]:
        r["log_tail"] = text[-400:]
    print(json.dumps(r))


def record_sysbench(args):
    log, timef, stats, rep, test, arm = args
    text = open(log, errors="replace").read()
    wall, user, sys_ = (float(x) for x in open(timef).read().split()[-3:])
    ev = re.search(r"total number of events:\s+(\d+)", text)
    tt = re.search(r"total time:\s+([\d.]+)s", text)
    r = {"kind": "sysbench", "rep": int(rep), "test": test, "arm": arm, "wall_s": wall, "cpu_s": user + sys_,
         "events": int(ev.group(1)) if ev else None, "total_time_s": float(tt.group(1)) if tt else None,
         "preload": preload_counters(stats)}
    r["ok"] = ev is not None
    print(json.dumps(r))


def med_range(xs):
    return f"{st.median(xs):.3f} [{min(xs):.3f}-{max(xs):.3f}]"


def summarize(out):
    ctx = json.load(open(os.path.join(out, "context.json")))
    runs = [json.loads(l) for l in open(os.path.join(out, "runs.jsonl")) if l.strip()]
    mc = [r for r in runs if r["kind"] == "memcached"]
    sb = [r for r in runs if r["kind"] == "sysbench"]
    failed = [r for r in runs if not r.get("ok")]
    reps = sorted({r["rep"] for r in runs})
    L = [f"# memcached on glibc's locks and on spinwise's (libspinwise-preload.so)", ""]
    L += [f"- machine: {ctx['cpu']} ({ctx['cpu_id']}), {ctx['cpus']} CPUs, Linux {ctx['kernel']}",
          f"- {ctx['memcached']}, {ctx.get('memcaslap', 'memcaslap (libmemcached-tools)')} on the same machine, 2 client threads",
          f"- before the start: CPUs {ctx['busy_percent_2s']}% busy over 2 s; load average (1 min) "
          f"{ctx['load_average'][0]:.2f}; started {ctx['start_utc']} UTC",
          f"- {len(runs)} runs, {len(reps)} repetitions; arms interleaved A B C D D C B A per cell",
          f"- command: `{ctx['command'].strip()}`",
          f"- failed runs: {len(failed)}", ""]
    L += ["ops/s: memcaslap's operations over its run time. Ratio: per repetition, the arm's over the "
          "`glibc` arm's of the same repetition (the interposer passing every call through), median "
          "[min-max]; `glibc` is itself paired with `none` (no preload): the interposer's own cost. "
          "p99: an upper bound from memcaslap's log2 latency histogram (a power of two, in us); where "
          "memcaslap printed no histogram, its average latency instead, marked `avg`. "
          "Server CPU/op: memcached's utime+stime over the window per operation, paired like ops/s. "
          "cs/op: memcached's context switches (all threads) per operation. Counters: spinwise's "
          "preload.* statistics classes (acquisitions per operation, share contended, OS waits per "
          "operation).", ""]
    by = defaultdict(dict)
    for r in mc:
        by[(r["mix"], r["conns"], r["threads"], r["rep"])][r["arm"]] = r
    arms_seen = []
    for r in runs:
        if r["arm"] not in arms_seen:
            arms_seen.append(r["arm"])
    geo = []
    for mix in sorted({r["mix"] for r in mc}):
        L += [f"## {mix} mix", "",
              "| server threads | conns | arm | ops/s median [min-max] | ratio to glibc | CPU/op ratio to glibc | p99 us (<=) | server CPU ns/op | cs/op | acquisitions/op, contended, OS waits/op |",
              "|---|---|---|---|---|---|---|---|---|---|"]
        for c in sorted({r["conns"] for r in mc}):
            for t in sorted({r["threads"] for r in mc}):
                keys = [k for k in by if k[:3] == (mix, c, t)]
                if not keys:
                    continue
                for arm in arms_seen:
                    rs = [by[k][arm] for k in keys if arm in by[k] and by[k][arm].get("ok")]
                    if not rs:
                        continue
                    ops = [r["ops_per_s"] for r in rs]
                    ref = "glibc" if arm != "glibc" else "none"
                    pair = [(by[k][arm], by[k][ref]) for k in keys
                            if arm in by[k] and ref in by[k] and by[k][arm].get("ok") and by[k][ref].get("ok")]
                    if arm == "none" or not pair:
                        rat = cpu = "(reference)" if arm == "none" else "-"
                    else:
                        q = [a["ops_per_s"] / b["ops_per_s"] for a, b in pair]
                        cp = [(a["server_cpu_s"] / a["ops"]) / max(1e-12, b["server_cpu_s"] / b["ops"]) for a, b in pair]
                        rat = med_range(q) + (" (vs none)" if arm == "glibc" else "")
                        cpu = med_range(cp) + (" (vs none)" if arm == "glibc" else "")
                        if arm == "adaptive":  # the default kind
                            geo.append(st.median(q))
                    p99 = [r["p99_us_upper"] for r in rs if r.get("p99_us_upper")]
                    avg = [r["avg_us"] for r in rs if r.get("avg_us") is not None]
                    lat = f"{st.median(p99):g}" if p99 else (f"avg {st.median(avg):g}" if avg else "-")
                    cns = st.median(1e9 * r["server_cpu_s"] / r["ops"] for r in rs)
                    csop = st.median(r["ctx_switches"] / r["ops"] for r in rs)
                    pc = [r["preload"] for r in rs if r.get("preload")]
                    if pc:
                        acq = st.median(p["acquisitions"] / r["ops"] for p, r in zip(pc, rs))
                        con = st.median(p["contended"] / max(1, p["acquisitions"]) for p in pc)
                        ow = st.median(p["os_waits"] / r["ops"] for p, r in zip(pc, rs))
                        cnt = f"{acq:.2f}, {100 * con:.2f}%, {ow:.4f}"
                    else:
                        cnt = "-"
                    L.append(f"| {t} | {c} | {arm} | {st.median(ops) / 1000:.1f}k [{min(ops) / 1000:.1f}k-{max(ops) / 1000:.1f}k] "
                             f"| {rat} | {cpu} | {lat} | {cns:.0f} | {csop:.3f} | {cnt} |")
        L.append("")
    if geo:
        L += [f"Geometric mean of the default kind's (adaptive) median ratio to glibc over the {len(geo)} cells: "
              f"{math.exp(sum(math.log(x) for x in geo) / len(geo)):.3f}.", ""]
    if sb:
        L += ["## sysbench", "",
              "`sysbench mutex` (16 threads, 4 mutexes, 100000 locks each, 200 loops outside): its total time; "
              "`sysbench threads` (16 threads, 4 locks, 100 yields a request, fixed time): events. "
              "Ratio per repetition against the glibc arm (for mutex: glibc's time over the arm's, higher is faster).", "",
              "| test | arm | result median [min-max] | ratio to glibc | CPU s | acquisitions |", "|---|---|---|---|---|---|"]
        sby = defaultdict(dict)
        for r in sb:
            sby[(r["test"], r["rep"])][r["arm"]] = r
        for test in ("mutex", "threads"):
            for arm in arms_seen:
                rs = [sby[k][arm] for k in sby if k[0] == test and arm in sby[k] and sby[k][arm].get("ok")]
                if not rs:
                    continue
                val = [r["total_time_s"] if test == "mutex" else r["events"] for r in rs]
                unit = "s" if test == "mutex" else " events"
                ks = [k for k in sby if k[0] == test and arm in sby[k] and "glibc" in sby[k]]
                if arm == "glibc" or not ks:
                    rat = "(reference)" if arm == "glibc" else "-"
                elif test == "mutex":
                    rat = med_range([sby[k]["glibc"]["total_time_s"] / sby[k][arm]["total_time_s"] for k in ks])
                else:
                    rat = med_range([sby[k][arm]["events"] / max(1, sby[k]["glibc"]["events"]) for k in ks])
                acq = [r["preload"]["acquisitions"] for r in rs if r.get("preload")]
                L.append(f"| {test} | {arm} | {st.median(val):g}{unit} [{min(val):g}-{max(val):g}] | {rat} | "
                         f"{st.median(r['cpu_s'] for r in rs):.2f} | {st.median(acq) if acq else '-'} |")
        L.append("")
    if failed:
        L += ["## Failed runs", ""] + [f"- {json.dumps({k: v for k, v in r.items() if k != 'preload'})[:300]}" for r in failed] + [""]
    open(os.path.join(out, "README.md"), "w").write("\n".join(L))
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--record":
        record(sys.argv[2:])
    elif len(sys.argv) > 1 and sys.argv[1] == "--record-sysbench":
        record_sysbench(sys.argv[2:])
    elif len(sys.argv) == 2:
        sys.exit(summarize(sys.argv[1]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
