#!/usr/bin/env python3
"""preload.profile_*: the per-lock profile (SPINWISE_PRELOAD_PROFILE) and spinwise-run, on
profile_prog (profile_prog.cpp says what each of its modes does). Exit 0 when the check holds, 1
with the reasons otherwise.

    profile_check.py --run SPINWISE_RUN --preload LIB --prog PROFILE_PROG --out DIR CHECK

CHECK:
  rank         the C program: spinwise-run ranks c_wait_hot, c_wait_warm, c_wait_cool in that order
               (by time waited), with 6, 4 and 2 waits; the profile's sums are the statistics'
  rank_cxx     the same on std::mutex (cxx_wait_*)
  many         64 locks that wait, a table of 16: 16 in it, the other 48 waits in its overflow
  fork_signal  signals taking a lock in their handlers, then a fork: the child's own file (%p)
               has its own lock, the parent's has its own and not the child's
  cond         20 broadcasts to 4 waiters: the waits counted, the storm named
  kept         waits recorded after the release: 20 made while another lock is held (batches
               made at its releases) all counted, the wait of a thread that exits holding its lock,
               5 of a thread asleep in a condition wait at exit (made before it slept), and 17 kept
               with no release between (the list full at the 17th, made first)
  sampled      200000 rounds of a mutex and an rwlock taken in turn on one thread: with the profile
               on, the types' acquisitions (sampled one in about 16) and the mutex's own in the
               table are each within 5% of the 200000 made; 4000 threads of 10 acquisitions each:
               the estimate within 10% of the 40000 (each thread's first sample drawn where an
               interval begun before it would end); one thread of one acquisition: a file is
               written (its type may count none)
  unwinder_lock  a program whose _Unwind_Backtrace takes a pthread lock (as libunwind's, which
               perf links): under the profile it exits, having been through that unwinder
  passthrough  spinwise-run's output is the program's, its status the program's (an exit code, a
               signal), a bad option is refused before anything runs
  symbolize    a PIE program's functions with file:line, a shared library's function, and a
               stripped copy of the program as module+offset (no crash)
  diagnose     spinwise-run's reading of each kind of lock (docs/preload.md's list): long holds and
               oversubscribed waiters say parking pays and name --lock glibc, short holds with
               short waits say spinning pays and name --lock ttas, a broadcast storm is named
  conformance  the POSIX conformance program (every lock type, rwlocks, condition variables, its
               fork rounds) under the profile: it passes, every process's file is read, and in the
               program's own the sums are the statistics' (--conformance names it)
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys

problems = []


def check(ok, what):
    if not ok:
        problems.append(what)
    return ok


def spinwise_run(a, argv, env=None, profile=None):
    cmd = [sys.executable, a.run, "--preload", a.preload]
    if profile:
        cmd += ["--profile", profile]
    cmd += argv
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=150, env=env)
    return r


def sums_agree(p, what):
    """The table's figures plus its overflow are the type-level statistics of the same run."""
    types = p["types"].values()
    locks = p["locks"]  # a condition variable's entry too: its address may have been a mutex's
    for key in ("contended", "wait_ticks", "yields", "parks"):
        typed = sum(t[key] for t in types)
        profiled = sum(lk[key] for lk in locks) + p["overflow"][key]
        check(typed == profiled, f"{what}: {key}: the statistics say {typed}, the profile {profiled}")
    check(p["used"] == len(p["locks"]), f"{what}: used {p['used']} but {len(p['locks'])} locks listed")
    # Each lock's own figures hang together: its waits are its sites' (the kept ones and the rest),
    # and its wait times' quantiles lie under its maximum. (An address two kinds of object had,
    # `also`, keeps one kind's cond figures only: its sites are not compared.)
    for lk in locks:
        waits = lk["contended"] + lk.get("cond", {}).get("waits", 0)
        at_sites = sum(s["waits"] for s in lk["sites"]) + lk["other_sites"]["waits"]
        name = f"{what}: {lk['kind']} {lk['address']}"
        if "also" not in lk:
            check(at_sites == waits, f"{name}: {waits} waits but {at_sites} at its sites")
        w = lk["wait_ns"]
        if waits:
            check(w["p50"] <= w["p99"] <= w["max"], f"{name}: p50 {w['p50']}, p99 {w['p99']}, max {w['max']}")
            check(lk["wait_ticks"] == 0 or w["max"] > 0, f"{name}: waited {lk['wait_ticks']} ticks, max 0")


def ranked(report):
    """The ranked locks of a report: (contended, function waited most at), best first."""
    out = []
    for m in re.finditer(r"^\s+\d+\. (?:mutex|recursive|errorcheck|rwlock) \S+: waited .*? in (\d+) of .*?\n"
                         r"(?:.*\n)*?\s+waited most at\s+(\S+)", report, re.M):
        out.append((int(m.group(1)), m.group(2)))
    return out


def is_pie(path):
    with open(path, "rb") as f:
        head = f.read(18)
    return head[:4] == b"\x7fELF" and int.from_bytes(head[16:18], "little") == 3  # ET_DYN


def rank(a, mode, prefix):
    out = os.path.join(a.out, f"{mode}.json")
    r = spinwise_run(a, ["--top", "3", "--", a.prog, mode], profile=out)
    if not check(r.returncode == 0, f"{mode}: spinwise-run exited {r.returncode}: {r.stderr}"):
        return
    got = ranked(r.stderr)
    want = [(6, f"{prefix}_wait_hot"), (4, f"{prefix}_wait_warm"), (2, f"{prefix}_wait_cool")]
    check(len(got) == 3 and all(g[0] == w[0] and g[1].startswith(w[1]) for g, w in zip(got, want)),
          f"{mode}: ranked {got}, expected {want}:\n{r.stderr}")
    with open(out) as f:
        p = json.load(f)
    sums_agree(p, mode)
    # Each ranked lock's site has its callers too (the waiter thread's frames above c_wait_hot...),
    # unwound from the lock call that waited there.
    for lk in sorted(p["locks"], key=lambda lk: -lk["wait_ticks"])[:3]:
        frames = [len(s["frames"]) for s in lk["sites"]]
        check(frames and min(frames) >= 2, f"{mode}: lock {lk['address']}: sites with {frames} frames, no callers")


def many(a):
    out = os.path.join(a.out, "many.json")
    env = dict(os.environ, SPINWISE_PRELOAD_PROFILE_SLOTS="16")
    r = spinwise_run(a, ["--", a.prog, "many", "64"], env=env, profile=out)
    if not check(r.returncode == 0, f"many: spinwise-run exited {r.returncode}: {r.stderr}"):
        return
    with open(out) as f:
        p = json.load(f)
    check(p["slots"] == 16 and len(p["locks"]) == 16, f"many: {len(p['locks'])} locks in a table of {p['slots']}")
    check(p["overflow"]["contended"] == 48, f"many: overflow {p['overflow']['contended']} waits, expected 48")
    check(all(lk["contended"] == 1 for lk in p["locks"]), "many: a lock in the table with other than 1 wait")
    check("not in the table (full): 48 lock waits" in r.stderr, f"many: the report does not say so:\n{r.stderr}")
    sums_agree(p, "many")


def run_prog(a, mode, profile, pattern, no_leaks=False):
    """profile_prog MODE preloaded, its profile to `profile`: (the run, the match of `pattern` in its
    output), the match None (and the problem noted) when it failed or printed no such line."""
    env = dict(os.environ, LD_PRELOAD=a.preload, SPINWISE_PRELOAD_PROFILE=profile)
    if no_leaks and env.get("ASAN_OPTIONS"):
        env["ASAN_OPTIONS"] += ":detect_leaks=0"
    r = subprocess.run([a.prog, mode], capture_output=True, text=True, timeout=150, env=env)
    if not check(r.returncode == 0, f"{mode}: exited {r.returncode}: {r.stderr}"):
        return r, None
    m = re.search(pattern, r.stdout)
    check(m is not None, f"{mode}: no addresses in its output: {r.stdout}")
    return r, m


def fork_signal(a):
    for f in os.listdir(a.out):
        if f.startswith("fs."):
            os.remove(os.path.join(a.out, f))
    # The child of a threaded fork exits normally (its profile is written at exit) with the records
    # of the parent's threads' thread_local destructors, which LeakSanitizer calls leaks.
    r, m = run_prog(a, "fork-signal", os.path.join(a.out, "fs.%p.json"),
                    r"child (\d+) child_only (0x[0-9a-f]+) parent_only (0x[0-9a-f]+)", no_leaks=True)
    if m is None:
        return
    child, child_only, parent_only = int(m.group(1)), int(m.group(2), 16), int(m.group(3), 16)
    files = {}
    for pid, who in ((child, "child"), (r_pid(r), "parent")):
        path = os.path.join(a.out, f"fs.{pid}.json") if pid else None
        if check(path and os.path.exists(path), f"fork_signal: the {who} wrote no profile ({path})"):
            with open(path) as f:
                files[who] = json.load(f)
    if len(files) != 2:
        return
    addrs = {w: {int(lk["address"], 16): lk for lk in p["locks"]} for w, p in files.items()}
    check(files["child"]["pid"] == child, "fork_signal: the child's file has another pid")
    check(child_only in addrs["child"] and addrs["child"][child_only]["contended"] == 1,
          "fork_signal: the child's file lacks the child's wait")
    check(child_only not in addrs["parent"], "fork_signal: the parent's file has the child's lock")
    check(parent_only in addrs["parent"] and parent_only not in addrs["child"],
          "fork_signal: the parent's lock is not (only) in the parent's file")
    sums_agree(files["parent"], "fork_signal parent")


def r_pid(r):
    """The parent's pid: the one fs.*.json that is not the child's."""
    m = re.search(r"child (\d+)", r.stdout)
    pids = [int(f.split(".")[1]) for f in os.listdir(ARGS.out) if f.startswith("fs.") and f.endswith(".json")]
    others = [p for p in pids if not m or p != int(m.group(1))]
    return others[0] if len(others) == 1 else None


def cond(a):
    out = os.path.join(a.out, "cond.json")
    r = spinwise_run(a, ["--", a.prog, "cond"], profile=out)
    if not check(r.returncode == 0, f"cond: spinwise-run exited {r.returncode}: {r.stderr}"):
        return
    with open(out) as f:
        p = json.load(f)
    conds = [lk for lk in p["locks"] if lk["kind"] == "cond"]
    if check(len(conds) == 1, f"cond: {len(conds)} condition variables in the profile"):
        c = conds[0]["cond"]
        check(c["waits"] >= 80, f"cond: {c['waits']} waits counted, at least 80 made")
        check(c["broadcasts"] >= 1 and c["woken"] >= 2 * (c["broadcasts"] + c["signals"]),
              f"cond: wake-ups {c}")
    check("condition variable storm" in r.stderr and "cond_storm_wait" in r.stderr,
          f"cond: the report names no storm at cond_storm_wait:\n{r.stderr}")


def kept(a):
    out = os.path.join(a.out, "kept.json")
    _, m = run_prog(a, "kept", out,
                    r"inner (0x[0-9a-f]+) left (0x[0-9a-f]+) napped (0x[0-9a-f]+) held (0x[0-9a-f]+) (\d+) (\d+)")
    if m is None:
        return
    with open(out) as f:
        p = json.load(f)
    waits = {int(lk["address"], 16): lk["contended"] for lk in p["locks"]}
    inner, left, napped = (int(m.group(i), 16) for i in (1, 2, 3))
    check(waits.get(inner) == 20, f"kept: the lock waited on 20 times inside another has {waits.get(inner)} waits")
    check(waits.get(left) == 1, f"kept: the lock its waiter exited holding has {waits.get(left)} waits, not 1")
    check(waits.get(napped) == 5,
          f"kept: the lock waited on 5 times by a thread asleep in a condition wait at exit has "
          f"{waits.get(napped)} waits (its kept records are made before it sleeps)")
    held, n, size = int(m.group(4), 16), int(m.group(5)), int(m.group(6))
    counts = [waits.get(held + i * size) for i in range(n)]
    check(counts == [2] * n,
          f"kept: {n} locks waited on twice by a thread that kept each, its list full at the 17th "
          f"record, have {counts} waits, not 2 each")
    sums_agree(p, "kept")


def unwinder_lock(a):
    env = dict(os.environ, LD_PRELOAD=a.preload, SPINWISE_PRELOAD_PROFILE=os.path.join(a.out, "u.json"))
    try:
        r = subprocess.run([a.unwinder_lock], capture_output=True, text=True, timeout=30, env=env)
    except subprocess.TimeoutExpired:
        check(False, "unwinder_lock: the program hung (30 s)")
        return
    m = re.search(r"unwinds (\d+)", r.stdout)
    check(r.returncode == 0 and m is not None and int(m.group(1)) >= 1,
          f"unwinder_lock: exited {r.returncode}, {r.stdout!r}, {r.stderr[-2000:]}")


def passthrough(a):
    r = spinwise_run(a, ["--", a.prog, "exit", "7"])
    check(r.returncode == 7, f"passthrough: exit status {r.returncode}, the program's was 7")
    check(r.stdout == "profile_prog: out\n", f"passthrough: stdout {r.stdout!r}")
    check(r.stderr.startswith("profile_prog: err\n"), f"passthrough: stderr {r.stderr!r}")
    r = spinwise_run(a, ["--", a.prog, "kill"])
    check(r.returncode == -signal.SIGTERM, f"passthrough: status {r.returncode}, the program died of SIGTERM")
    check(r.stdout == "profile_prog: out\n", f"passthrough: stdout {r.stdout!r} (kill)")
    for bad in (["--top", "0"], ["--lock", "mcs"], ["--bogus"], []):
        r = spinwise_run(a, bad + ["--", a.prog, "exit", "0"] if bad else [a.prog])
        check(r.returncode == 2 and r.stdout == "" and "spinwise-run:" in r.stderr,
              f"passthrough: {bad}: status {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr!r}")
    r = spinwise_run(a, ["--", os.path.join(a.out, "no-such-program")])
    check(r.returncode == 127, f"passthrough: a missing program gave {r.returncode}, not 127")


def symbolize(a):
    check(is_pie(a.prog), f"symbolize: {a.prog} is not PIE")
    r = spinwise_run(a, ["--", a.prog, "rank"])
    check(re.search(r"waited most at\s+c_wait_hot \(profile_prog\.cpp:\d+\)", r.stderr) is not None,
          f"symbolize: no c_wait_hot with file:line in the PIE program:\n{r.stderr}")
    r = spinwise_run(a, ["--", a.prog, "lib"])
    check(r.returncode == 0 and re.search(r"waited most at\s+profile_lib_wait", r.stderr) is not None,
          f"symbolize: no profile_lib_wait from the library:\n{r.stderr}")
    stripped = a.prog + ".stripped"
    r = spinwise_run(a, ["--", stripped, "rank"])
    check(r.returncode == 0 and "Traceback" not in r.stderr and
          re.search(r"waited most at\s+\S*profile_prog\.stripped\+0x[0-9a-f]+", r.stderr) is not None,
          f"symbolize: the stripped program's sites are not module+offset:\n{r.stderr}")


def conformance(a):
    env = dict(os.environ, LD_PRELOAD=a.preload, SPINWISE_PRELOAD_PROFILE=os.path.join(a.out, "c.%p.json"))
    if env.get("ASAN_OPTIONS"):  # its fork children exit normally too (fork_signal says why)
        env["ASAN_OPTIONS"] += ":detect_leaks=0"
    p = subprocess.Popen([a.conformance], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    _, err = p.communicate(timeout=150)
    if not check(p.returncode == 0, f"conformance: exited {p.returncode}: {err[-2000:]}"):
        return
    files = [f for f in os.listdir(a.out) if f.startswith("c.")]
    # The program's own file: every thread joined, the sums exact. A child's figures are the
    # parent's at the fork, where another thread may have been in the middle of a wait's record
    # (docs/preload.md): its file is read and named right, its sums not compared.
    check(f"c.{p.pid}.json" in files, "conformance: the program wrote no profile")
    for f in files:
        with open(os.path.join(a.out, f)) as fh:
            prof = json.load(fh)
        check(f == f"c.{prof['pid']}.json", f"conformance: {f} says pid {prof['pid']}")
        if f == f"c.{p.pid}.json":
            sums_agree(prof, f"conformance {f}")


def diagnose(a):
    """The readings on made-up counters, one per rule in docs/preload.md (times in ns)."""
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("spinwise_run", a.run)
    run = importlib.util.module_from_spec(importlib.util.spec_from_loader("spinwise_run", loader))
    loader.exec_module(run)

    def lock(contended, yields, parks, p50, held_total, held_samples):
        return {"kind": "mutex", "contended": contended, "yields": yields, "parks": parks,
                "wait_ns": {"p50": p50, "p99": p50 * 4, "max": p50 * 8, "total": p50 * contended},
                "held_ns": {"total": held_total, "samples": held_samples}}

    spin, park = "spinning kind pays (try --lock ttas)", "parking pays (try --lock glibc"
    cases = [
        ("long holds", lock(100, 10, 50, 80000, 100 * 60000, 100), park),
        ("short holds, oversubscribed", lock(100, 500, 10, 3000, 100 * 500, 100), park),
        ("short holds, waits far past the holds", lock(100, 50, 10, 90000, 100 * 500, 100), park),
        ("short holds, short waits", lock(100, 20, 5, 900, 100 * 400, 100), spin),
        ("no hold sampled, short waits", lock(10, 2, 0, 5000, 0, 0), spin),
        ("no hold sampled, long waits", lock(10, 2, 5, 50000, 0, 0), park),
    ]
    for what, lk, want in cases:
        got = run.diagnose(lk)
        check(want in got and (spin if want == park else park) not in got, f"diagnose, {what}: said '{got}'")
    waits = {"p50": 1000, "p99": 4000, "max": 8000, "total": 80000}
    storm = {"kind": "cond", "wait_ns": waits, "cond": {"signals": 0, "broadcasts": 20, "woken": 80, "waits": 80}}
    check("storm" in run.diagnose(storm), f"diagnose: 20 broadcasts waking 4 each: '{run.diagnose(storm)}'")
    calm = {"kind": "cond", "wait_ns": waits, "cond": {"signals": 20, "broadcasts": 0, "woken": 20, "waits": 20}}
    check("no storm" in run.diagnose(calm), f"diagnose: 20 signals waking 1 each: '{run.diagnose(calm)}'")


def sampled(a):
    n = 200000
    out = os.path.join(a.out, "sampled.json")
    r = spinwise_run(a, ["--", a.prog, "sampled", str(n)], profile=out)
    if not check(r.returncode == 0, f"sampled: spinwise-run exited {r.returncode}: {r.stderr}"):
        return
    with open(out) as f:
        p = json.load(f)
    sums_agree(p, "sampled")
    # Within 5%: about 12500 samples a type, whose estimate spreads by under 1% (one standard
    # deviation); a fixed interval of 16 counts 2n for one type and 0 for the other.
    near = lambda got: abs(got - n) <= 0.05 * n
    types = p["types"]
    for t in ("preload.mutex", "preload.rwlock"):
        got = types.get(t, {}).get("acquisitions", 0)
        check(near(got), f"sampled: {t}: {got} acquisitions estimated, {n} made (and the wait's)")
    addr = re.search(r"mutex (0x[0-9a-f]+)", r.stdout)
    if check(addr is not None, f"sampled: no address printed: {r.stdout!r}"):
        mine = [lk for lk in p["locks"] if int(lk["address"], 16) == int(addr.group(1), 16)]
        if check(len(mine) == 1, f"sampled: the mutex {addr.group(1)} is not in the table once: {len(mine)}"):
            got = mine[0]["acquisitions"]
            check(near(got), f"sampled: the mutex's table entry estimates {got} acquisitions, {n} made")
    # Against the statistics' exact count of the same program (which includes each thread's exit
    # giving its counters back under the registry's lock, one acquisition): about 2700 samples, one
    # standard deviation about 2% of the estimate. A thread's first sample one whole interval
    # after its first acquisition counted 6 too few a thread: 24000 of 44000.
    out = os.path.join(a.out, "threads.json")
    r = spinwise_run(a, ["--", a.prog, "threads", "4000", "10"], profile=out)
    stats = os.path.join(a.out, "threads-stats.json")
    env = dict(os.environ, LD_PRELOAD=a.preload, SPINWISE_PRELOAD_STATS=stats)
    env.pop("SPINWISE_PRELOAD_PROFILE", None)
    s = subprocess.run([a.prog, "threads", "4000", "10"], env=env, capture_output=True, timeout=150)
    if check(r.returncode == 0 and s.returncode == 0,
             f"sampled: threads: exits {r.returncode} (profile), {s.returncode} (statistics): {r.stderr}"):
        with open(out) as f:
            got = json.load(f)["types"].get("preload.mutex", {}).get("acquisitions", 0)
        with open(stats) as f:
            exact = sum(c["acquisitions"] for c in json.load(f)["classes"] if c["name"] == "preload.mutex")
        check(exact >= 40000 and abs(got - exact) <= 0.1 * exact,
              f"sampled: threads: {got} acquisitions estimated, {exact} counted by the statistics")
    out = os.path.join(a.out, "one.json")
    r = spinwise_run(a, ["--", a.prog, "threads", "1", "1"], profile=out)
    check(r.returncode == 0 and os.path.exists(out),
          f"sampled: one acquisition: exit {r.returncode}, file {'written' if os.path.exists(out) else 'missing'}: {r.stderr}")


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    for opt in ("--run", "--preload", "--prog", "--out"):
        ap.add_argument(opt, required=True)
    ap.add_argument("--conformance")
    ap.add_argument("--unwinder-lock")
    ap.add_argument("check", choices=("rank", "rank_cxx", "many", "fork_signal", "cond", "kept", "sampled", "unwinder_lock",
                                      "passthrough", "symbolize", "diagnose", "conformance"))
    a = ARGS = ap.parse_args()
    a.out = os.path.join(a.out, a.check)
    shutil.rmtree(a.out, ignore_errors=True)
    os.makedirs(a.out)
    if a.check == "rank":
        rank(a, "rank", "c")
    elif a.check == "rank_cxx":
        rank(a, "rank-cxx", "cxx")
    else:
        globals()[a.check](a)
    for p in problems:
        print(f"profile_check {a.check}: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
