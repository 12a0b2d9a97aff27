#!/usr/bin/env python3
"""preload.programs_smoke: the real-program harness's smoke run on the programs every build machine
has, then its records checked: every run ok (exit 0 and the program's own output right), each
program under each of the three arms, and the default kind's (adaptive) statistics counting the programs' locks (the
interposer was in them). Exit 0 when all holds, 1 otherwise.

    programs_smoke.py SOURCE_DIR PRELOAD OUT_DIR
"""
import json
import os
import shutil
import subprocess
import sys

PROGRAMS = ("bounded-buffer-signal", "bounded-buffer-broadcast", "uncontended-calls", "python-cpu", "python-queue")


def main(src, preload, out):
    shutil.rmtree(out, ignore_errors=True)
    rc = subprocess.run([sys.executable, os.path.join(src, "bench", "engines", "programs", "run.py"), "--smoke",
                         "--force", "--preload", preload, "--out", out, "--programs", " ".join(PROGRAMS)]).returncode
    problems = [] if rc == 0 else [f"run.py exited {rc}"]
    log = os.path.join(out, "runs.jsonl")
    if not os.path.exists(log):
        print(f"programs_smoke: run.py exited {rc} before it ran a program (no {log})", file=sys.stderr)
        return 1
    runs = [json.loads(line) for line in open(log) if line.strip()]
    problems += [f"{r['program']} {r['arm']}: {r.get('error')}" for r in runs if not r.get("ok")]
    for prog in PROGRAMS:
        arms = {r["arm"] for r in runs if r["program"] == prog and not r["counters"] and r.get("ok")}
        if arms != {"none", "glibc", "adaptive"}:
            problems.append(f"{prog}: runs ok under {sorted(arms)}, not none, glibc and adaptive")
        counted = [r for r in runs if r["program"] == prog and r["counters"] and r.get("ok")]
        if not counted or not (counted[0].get("preload") or {}).get("acquisitions"):
            problems.append(f"{prog}: adaptive's statistics counted no lock (was the interposer loaded?)")
    if not os.path.exists(os.path.join(out, "README.md")):
        problems.append("no README.md written")
    for p in problems:
        print("programs_smoke: " + p, file=sys.stderr)
    if not problems:
        print(f"programs_smoke: {len(runs)} runs, all ok")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
