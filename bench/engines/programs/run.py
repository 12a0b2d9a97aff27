#!/usr/bin/env python3
"""Real programs on glibc's locks and under libspinwise-preload.so, side by side: the interposer's
promise that an unmodified program gets glibc's results, never slower (docs/engines.md, "Real
programs under the interposer").

    bench/engines/programs/run.py [--preload PATH] [--out DIR] [--reps N] [--scale X]
        [--programs "NAME ..."] [--arms "none glibc hybrid adaptive ttas"] [--no-memcached]
        [--no-counters] [--baseline PATH] [--smoke] [--force]

Each program runs once per arm and repetition, arms interleaved (A B C D E, then E D C B A for the
next program), repetitions outermost; its own output is checked (every item counted back, the
decompressed file equal to the input, the computed sum right) and a run whose check fails is a
failed run. `none` is no preload at all; `glibc` is the interposer passing every call to glibc (its
own cost); the others are spinwise's kinds. Throughput is the program's work over its wall time.
Then, unless --no-counters, one more run of each program per spinwise arm with
SPINWISE_PRELOAD_STATS, untimed, for the lock counters (statistics are off in the timed runs, as in
a user's). With --baseline PATH (another build's interposer: the last landed revision's) an arm
KIND@base (or KIND+profile@base, the profile on) runs KIND under that library instead, in the
same interleaving, so a change to the interposer is compared with what it replaces run for run. Then the memcached grid (bench/engines/memcached/run.sh, same arms) unless --no-memcached.
<out>/runs.jsonl holds a line per run, <out>/README.md the tables (report.py).

Needs sysbench, pigz, zstd, Debian's python3 and a C compiler (tools/setup.sh engines). Exit 2 for
a bad flag or a missing tool, 3 when the CPUs are busy before the start (over 20% in 2 s; --force
runs anyway), 1 when a run failed.
"""
import argparse
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "bench", "compare"))
sys.path.insert(0, os.path.join(ROOT, "bench", "engines", "memcached"))
import run_context  # noqa: E402
from compare import busy_share  # noqa: E402
from summarize import preload_counters  # noqa: E402  (the statistics file's one reader)

ARMS = ("none", "glibc", "hybrid", "adaptive", "ttas")
PYTHON = "/usr/bin/python3"  # Debian's CPython: its GIL is a pthread mutex and condition variable

# The CPU-bound CPython program: 4 threads, a 50 us switch interval (the GIL changes hands 20000
# times a second), each summing k*k mod 7 over its range. Prints the sum of the four.
PY_CPU = r"""
import sys, threading
sys.setswitchinterval(5e-5)
n = int(sys.argv[1])
out = [0] * 4
def work(i):
    s = 0
    for k in range(n):
        s += (k * k) % 7
    out[i] = s
ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
[t.start() for t in ts]
[t.join() for t in ts]
print(sum(out))
"""


def py_cpu_expected(n):
    pattern = [(k * k) % 7 for k in range(7)]
    return 4 * (sum(pattern) * (n // 7) + sum(pattern[: n % 7]))


# The CPython queue program: 4 producers put n numbers each through a queue.Queue of 64 slots to
# 4 consumers. Prints the count and the sum taken.
PY_QUEUE = r"""
import queue, sys, threading
n = int(sys.argv[1])
q = queue.Queue(maxsize=64)
taken = [(0, 0)] * 4
def produce(p):
    for i in range(n):
        q.put(p * n + i)
def consume(c):
    k = s = 0
    while True:
        v = q.get()
        if v is None:
            break
        k += 1
        s += v
    taken[c] = (k, s)
ps = [threading.Thread(target=produce, args=(p,)) for p in range(4)]
cs = [threading.Thread(target=consume, args=(c,)) for c in range(4)]
[t.start() for t in ps + cs]
[t.join() for t in ps]
for _ in cs:
    q.put(None)
[t.join() for t in cs]
print(sum(k for k, _ in taken), sum(s for _, s in taken))
"""


class Program:
    """One real program: argv(tmp) to run, a unit of work, and check(stdout, tmp) -> (work, seconds
    or None, error or None): the work done, the program's own measure of its time where it has one,
    and what was wrong with its output."""

    def __init__(self, name, what, unit, argv, check, needs, outputs=lambda tmp: []):
        self.name, self.what, self.unit, self.argv, self.check, self.needs = name, what, unit, argv, check, needs
        self.outputs = outputs  # files a run writes, removed before the next run


def sysbench_events(out):
    m = re.search(r"total number of events:\s+(\d+)", out)
    t = re.search(r"total time:\s+([\d.]+)s", out)
    return (int(m.group(1)) if m else 0), (float(t.group(1)) if t else None)


def programs(scale, seconds):
    def sb_threads(tmp):
        return ["sysbench", "threads", "--threads=16", "--thread-yields=100", "--thread-locks=4",
                f"--time={seconds}", "run"]

    def sb_threads_check(out, tmp):
        events, t = sysbench_events(out)
        return events, t, None if events > 0 else "sysbench counted no events"

    mutex_locks = max(1000, int(1500000 * scale))

    def sb_mutex(tmp):
        return ["sysbench", "mutex", "--threads=16", "--mutex-num=4", f"--mutex-locks={mutex_locks}",
                "--mutex-loops=200", "run"]

    def sb_mutex_check(out, tmp):
        events, t = sysbench_events(out)  # one event a thread: its mutex-locks acquisitions
        return 16 * mutex_locks, t, None if events == 16 else f"sysbench counted {events} events, not 16"

    bb_items = max(1000, int(200000 * scale))

    def bounded(wake):
        def argv(tmp):
            return [os.path.join(tmp, "bounded-buffer"), "--producers", "4", "--consumers", "4",
                    "--items", str(bb_items), "--capacity", "16", "--wake", wake]
        return argv

    def bounded_check(out, tmp):
        m = re.search(r"items (\d+) sum (\d+) expected_sum (\d+) seconds ([\d.]+)", out)
        if not m:
            return 0, None, "no result line"
        items, total, expected = int(m.group(1)), int(m.group(2)), int(m.group(3))
        err = None if items == 4 * bb_items and total == expected else f"{items} items, sum {total} (expected {expected})"
        return items, float(m.group(4)), err

    uc_rounds = max(10000, int(10000000 * scale))

    def uncontended(tmp):
        return [os.path.join(tmp, "uncontended-calls"), "--rounds", str(uc_rounds)]

    def uncontended_check(out, tmp):
        m = re.search(r"calls (\d+) seconds ([\d.]+)", out)
        if not m:
            return 0, None, "no result line"
        calls = int(m.group(1))
        return calls, float(m.group(2)), None if calls == 5 * uc_rounds else f"{calls} calls, not {5 * uc_rounds}"

    py_n = max(7000, int(12000000 * scale))

    def py_cpu(tmp):
        return [PYTHON, "-c", PY_CPU, str(py_n)]

    def py_cpu_check(out, tmp):
        got = out.strip().splitlines()[-1] if out.strip() else ""
        want = str(py_cpu_expected(py_n))
        return 4 * py_n, None, None if got == want else f"sum {got!r}, expected {want}"

    pq_n = max(1000, int(300000 * scale))

    def py_queue(tmp):
        return [PYTHON, "-c", PY_QUEUE, str(pq_n)]

    def py_queue_check(out, tmp):
        total = 4 * pq_n
        want = f"{total} {total * (total - 1) // 2}"
        got = out.strip().splitlines()[-1] if out.strip() else ""
        return total, None, None if got == want else f"taken {got!r}, expected {want}"

    def compressed(tmp, tool):
        return os.path.join(tmp, "input." + ("gz" if tool == "pigz" else "zst"))

    def compress(tool):
        def argv(tmp):
            src = os.path.join(tmp, "input")
            if tool == "pigz":
                return ["pigz", "-p", "4", "-6", "-k", "-f", src]  # writes input.gz beside it
            return ["zstd", "-q", "-T4", "-10", "-f", src, "-o", compressed(tmp, tool)]
        return argv

    def compress_check(tool):
        def check(out, tmp):
            src, dst = os.path.join(tmp, "input"), compressed(tmp, tool)
            size = os.path.getsize(src)
            dec = ["pigz", "-d", "-c", dst] if tool == "pigz" else ["zstd", "-q", "-d", "-c", dst]
            with open(os.path.join(tmp, "roundtrip"), "wb") as f:
                rc = subprocess.run(dec, stdout=f, stderr=subprocess.DEVNULL).returncode
            same = rc == 0 and _same_file(src, os.path.join(tmp, "roundtrip"))
            os.unlink(os.path.join(tmp, "roundtrip"))
            return size / 1e6, None, None if same else "the decompressed output differs from the input"
        return check

    return [
        Program("sysbench-threads", "sysbench threads: 16 threads, 4 locks, 100 yields a request, fixed time",
                "events", sb_threads, sb_threads_check, ["sysbench"]),
        Program("sysbench-mutex", f"sysbench mutex: 16 threads, 4 mutexes, {mutex_locks} locks each, 200 loops outside",
                "locks", sb_mutex, sb_mutex_check, ["sysbench"]),
        Program("bounded-buffer-signal", f"bounded buffer (C): 4 producers, 4 consumers, 16 slots, {bb_items} items "
                "each, one mutex, two condvars, pthread_cond_signal", "items", bounded("signal"), bounded_check, ["cc"]),
        Program("bounded-buffer-broadcast", "the same with pthread_cond_broadcast", "items", bounded("broadcast"),
                bounded_check, ["cc"]),
        Program("uncontended-calls", f"one thread (C), {uc_rounds} rounds of mutex lock, cond signal (no waiter), "
                "unlock, rwlock rdlock, unlock: what the interposer adds to a call that never waits", "calls",
                uncontended, uncontended_check, ["cc"]),
        Program("python-cpu", f"CPython (Debian's python3), 4 CPU-bound threads, switch interval 50 us, {py_n} steps each",
                "steps", py_cpu, py_cpu_check, [PYTHON]),
        Program("python-queue", f"CPython queue.Queue(64), 4 producers, 4 consumers, {pq_n} items each",
                "items", py_queue, py_queue_check, [PYTHON]),
        Program("pigz", "pigz -p 4 -6 of a generated text file, decompressed and compared", "MB",
                compress("pigz"), compress_check("pigz"), ["pigz"], lambda tmp: [compressed(tmp, "pigz")]),
        Program("zstd", "zstd -T4 -10 of the same file, decompressed and compared", "MB", compress("zstd"),
                compress_check("zstd"), ["zstd"], lambda tmp: [compressed(tmp, "zstd")]),
    ]


def _same_file(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 20), fb.read(1 << 20)
            if x != y:
                return False
            if not x:
                return True


def make_input(path, megabytes):
    """A text file of words drawn with a fixed seed: compressible about as a log file is."""
    rng = random.Random(42)
    words = ["lock", "spin", "wait", "mutex", "thread", "queue", "page", "row", "index", "commit",
             "buffer", "latch", "pause", "yield", "park", "wake"] + [f"k{i:05d}" for i in range(2000)]
    with open(path, "w") as f:
        written = 0
        while written < megabytes * 1_000_000:
            line = " ".join(rng.choice(words) for _ in range(12)) + f" {rng.randrange(1 << 30)}\n"
            f.write(line)
            written += len(line)


def arm_env(arm, preload, stats=None):
    """The environment of an arm; preload is (this build's library, the baseline's or None)."""
    env = dict(os.environ)
    for k in ("LD_PRELOAD", "SPINWISE_PRELOAD_LOCK", "SPINWISE_PRELOAD_STATS", "SPINWISE_PRELOAD_PROFILE"):
        env.pop(k, None)
    if arm != "none":
        kind, _, base = arm.partition("@")
        env["LD_PRELOAD"] = preload[1] if base else preload[0]
        kind, _, profiled = kind.partition("+")
        env["SPINWISE_PRELOAD_LOCK"] = kind
        if stats:
            env["SPINWISE_PRELOAD_STATS"] = stats
        if profiled:  # KIND+profile: the per-lock profile on, written where the statistics go
            env["SPINWISE_PRELOAD_PROFILE"] = os.path.join(tempfile.gettempdir(), f"spinwise-run-py-{os.getpid()}.profile.json")
    return env


def run_one(prog, arm, preload, tmp, rep, stats=None, timeout=300):
    """One run: its record (a dict), ok False when it failed or its output was wrong."""
    rec = {"program": prog.name, "arm": arm, "rep": rep, "ok": False, "counters": stats is not None}
    out_path = os.path.join(tmp, "stdout")
    for stale in [stats] + prog.outputs(tmp):  # nothing a previous run wrote can pass for this one's
        if stale and os.path.exists(stale):
            os.unlink(stale)
    t0 = time.monotonic()
    try:
        with open(out_path, "wb") as out, open(os.path.join(tmp, "stderr"), "wb") as err:
            p = subprocess.Popen(prog.argv(tmp), stdout=out, stderr=err, env=arm_env(arm, preload, stats))
            deadline = t0 + timeout
            while True:
                pid, status, ru = os.wait4(p.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() > deadline:
                    p.kill()
                    pid, status, ru = os.wait4(p.pid, 0)
                    rec["error"] = f"killed after {timeout} s"
                    break
                time.sleep(0.002)
            p.returncode = os.waitstatus_to_exitcode(status)
    except OSError as e:
        rec["error"] = f"cannot run: {e}"
        return rec
    wall = time.monotonic() - t0
    text = open(out_path, errors="replace").read()
    rec.update(exit=p.returncode, wall_s=wall, cpu_s=ru.ru_utime + ru.ru_stime,
               ctx_switches=ru.ru_nvcsw + ru.ru_nivcsw)
    if "error" in rec:
        return rec
    if p.returncode != 0:
        rec["error"] = f"exit {p.returncode}: " + open(os.path.join(tmp, "stderr"), errors="replace").read()[-300:]
        return rec
    work, own_s, error = prog.check(text, tmp)
    if error:
        rec["error"] = error
        return rec
    if stats:
        rec["preload"] = preload_counters(stats)
        if not (rec["preload"] or {}).get("acquisitions"):
            # ld.so only warns when LD_PRELOAD cannot be loaded: the run was glibc's, not the arm's.
            rec["error"] = "the interposer's statistics counted no lock (was it loaded?)"
            return rec
    rec.update(ok=True, work=work, seconds=own_s or wall, throughput=work / (own_s or wall))
    return rec


def main(argv):
    ap = argparse.ArgumentParser(prog="run.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--preload", default=os.path.join(ROOT, "build", "release", "src", "libspinwise-preload.so"))
    ap.add_argument("--out")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0, help="the work of each program (1: a few seconds each here)")
    ap.add_argument("--seconds", type=int, default=3, help="sysbench threads' fixed time")
    ap.add_argument("--programs", help="names, space separated (default: all)")
    ap.add_argument("--arms", default=" ".join(ARMS))
    ap.add_argument("--baseline", help="another build's libspinwise-preload.so, for arms KIND@base")
    ap.add_argument("--no-memcached", action="store_true")
    ap.add_argument("--no-counters", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="1 repetition, a small scale, arms none glibc adaptive (the default kind), no memcached")
    ap.add_argument("--force", action="store_true")
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    if a.smoke:
        a.reps, a.scale, a.seconds, a.arms, a.no_memcached = 1, 0.02, 1, "none glibc adaptive", True
    if a.reps < 1 or not (math.isfinite(a.scale) and a.scale > 0) or a.seconds < 1:
        print("run.py: --reps and --seconds take a positive integer, --scale a positive number", file=sys.stderr)
        return 2
    if a.out and os.path.exists(a.out) and not os.path.isdir(a.out):
        print(f"run.py: --out {a.out} is not a directory", file=sys.stderr)
        return 2
    a.preload = os.path.abspath(a.preload)
    a.baseline = os.path.abspath(a.baseline) if a.baseline else None
    arms = a.arms.split()
    if len(set(arms)) != len(arms):
        print(f"run.py: an arm is named twice in --arms '{a.arms}'", file=sys.stderr)
        return 2
    def known(x):  # KIND, KIND@base (not none), KIND+profile and KIND+profile@base (not none, glibc)
        kind = x[:-5] if x.endswith("@base") else x
        if x != kind and kind == "none":
            return False
        return kind in ARMS or (kind.endswith("+profile") and kind[:-8] in ARMS[2:])
    bad = [x for x in arms if not known(x)]
    if bad or not arms:
        print(f"run.py: unknown arm {' '.join(bad) or '(none given)'} (known: {' '.join(ARMS)})", file=sys.stderr)
        return 2
    if any(x.endswith("@base") for x in arms) and not (a.baseline and os.path.isfile(a.baseline)):
        print("run.py: an arm KIND@base needs --baseline PATH, an existing library", file=sys.stderr)
        return 2
    progs = programs(a.scale, a.seconds)
    if a.programs:
        names = a.programs.split()
        unknown = [n for n in names if n not in [p.name for p in progs]]
        if unknown:
            print(f"run.py: unknown program {' '.join(unknown)} (known: {' '.join(p.name for p in progs)})",
                  file=sys.stderr)
            return 2
        progs = [p for p in progs if p.name in names]
    missing = sorted({t for p in progs for t in p.needs if not shutil.which(t)})
    if missing:
        print(f"run.py: not found: {' '.join(missing)} (tools/setup.sh engines installs them)", file=sys.stderr)
        return 2
    if any(x != "none" for x in arms) and not os.path.isfile(a.preload):
        print(f"run.py: no interposer at {a.preload} (build the spinwise_preload target, or --preload PATH)",
              file=sys.stderr)
        return 2
    busy = busy_share(2.0)
    if busy is not None and busy > 0.20 and not a.force:
        print(f"run.py: the CPUs were {100 * busy:.0f}% busy over 2 s; run on an idle machine (or --force)",
              file=sys.stderr)
        return 3
    out = a.out or os.path.join(ROOT, "bench", "results", "programs-" + time.strftime("%Y%m%d-%H%M%S", time.gmtime()))
    os.makedirs(out, exist_ok=True)
    ctx = run_context.here()
    ctx["relax_ns"] = relax_cost()
    ctx.update(busy_percent_2s=None if busy is None else round(100 * busy, 1), command="bench/engines/programs/run.py "
               + " ".join(argv), reps=a.reps, scale=a.scale, arms=arms,
               programs={p.name: p.what for p in progs}, units={p.name: p.unit for p in progs},
               versions={t: _version(t) for t in ("sysbench", "pigz", "zstd", PYTHON)})
    with open(os.path.join(out, "context.json"), "w") as f:
        json.dump(ctx, f, indent=1)
    failed = 0
    with tempfile.TemporaryDirectory(prefix="spinwise-programs.") as tmp:
        for prefix, exe, source in (("bounded-buffer", "bounded-buffer", "bounded_buffer.c"),
                                    ("uncontended-calls", "uncontended-calls", "uncontended_calls.c")):
            if not any(p.name.startswith(prefix) for p in progs):
                continue
            cc = subprocess.run(["cc", "-O2", "-pthread", "-o", os.path.join(tmp, exe), os.path.join(HERE, source)],
                                capture_output=True, text=True)
            if cc.returncode != 0:
                print(f"run.py: {source} did not compile:\n" + cc.stderr, file=sys.stderr)
                return 1
        if any(p.name in ("pigz", "zstd") for p in progs):
            make_input(os.path.join(tmp, "input"), max(2, int(64 * a.scale)))
        print(f"run.py: {out} (CPUs {ctx['busy_percent_2s']}% busy before the start)", flush=True)
        with open(os.path.join(out, "runs.jsonl"), "w") as log:
            def record(rec):
                nonlocal failed
                log.write(json.dumps(rec) + "\n")
                log.flush()
                if not rec["ok"]:
                    failed = 1
                    print(f"run.py: {rec['program']} {rec['arm']} rep {rec['rep']} failed: {rec.get('error')}",
                          file=sys.stderr, flush=True)

            for rep in range(1, a.reps + 1):
                for i, prog in enumerate(progs):
                    # A B C D E, then E D C B A for the next program and for the same program in
                    # the next repetition: no arm keeps one place in the order.
                    for arm in (reversed(arms) if (rep + i) % 2 == 0 else arms):
                        record(run_one(prog, arm, (a.preload, a.baseline), tmp, rep))
            if not a.no_counters:
                for prog in progs:
                    for arm in arms:
                        if arm not in ("none", "glibc"):
                            record(run_one(prog, arm, (a.preload, a.baseline), tmp, 0,
                                           stats=os.path.join(tmp, "stats.json")))
    if not a.no_memcached and shutil.which("memcached") and shutil.which("memcaslap"):
        mc_arms = [x for x in arms if x != "ttas"]
        base = ["--baseline", a.baseline] if a.baseline else []
        rc = subprocess.run([os.path.join(ROOT, "bench", "engines", "memcached", "run.sh"), "--force",
                             "--preload", a.preload, "--out", os.path.join(out, "memcached")] + base + [
                             "--reps", str(a.reps), "--threads", "4 16", "--conns", "64",
                             "--arms", " ".join(mc_arms), "--spin-arms", "ttas" if "ttas" in arms else "",
                             "--no-sysbench"]).returncode
        failed = failed or (1 if rc != 0 else 0)
    rc = subprocess.run([sys.executable, os.path.join(HERE, "report.py"), out]).returncode
    print(f"run.py: {out}/README.md")
    return failed or (1 if rc != 0 else 0)


def relax_cost():
    """This CPU's relax instruction in ns, as spinwise's locks convert their delays with it
    (spinwise-cell --relax-ns, bench/compare's harness: the median of 5), or None where none is
    built."""
    for d in ("build/release", "build-bench-run/release"):
        cell = os.path.join(ROOT, d, "bench", "compare", "spinwise-cell")
        if os.access(cell, os.X_OK):
            try:
                vals = sorted(float(subprocess.run([cell, "--relax-ns"], capture_output=True, text=True,
                                                   timeout=60, check=True).stdout) for _ in range(5))
                return round(vals[2], 2)
            except (OSError, ValueError, subprocess.SubprocessError):
                return None
    return None


def _version(tool):
    try:
        p = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=10)
        text = (p.stdout or p.stderr).strip().splitlines()
        return text[0] if text else "?"
    except (OSError, subprocess.SubprocessError):
        return None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
