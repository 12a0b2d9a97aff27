"""The run context (include/spinwise/runtime/run_context.hpp, docs/run-context.md) for bench/'s
Python scripts: one place that reads it, so that no script parses /proc or guesses keys itself.

    from_tool(doc)  the context a spinwise tool wrote: doc["run"] (spinwise-stress, spinwise-calibrate
                    --advise --format json), or Google Benchmark's flat "run.<key>" context
                    (spinwise-bench; the document or its "context"). Files written before the
                    context had one shape are read too (their "machine" objects and spinwise-bench's
                    machine.* / spinwise.* keys), with what they did not record as None.
    here()          the same keys for a script that drives no spinwise tool, taken from Python's
                    standard library and the first block of /proc/cpuinfo; what only the C++ runtime
                    knows (the backend, the counter, virtualization, the relax cost) is None.
    describe(ctx)   one line naming the machine, as the reports print it.

Python 3 standard library only.
"""

import json
import os
import platform
import time

KEY = "run"
# The C++ writer's keys, in its order (tests/bench/run_context_py_test.py checks them against a tool).
KEYS = ("arch", "cpu_vendor", "cpu_model", "cpu_id", "cpu_count", "kernel", "virtualization", "container",
        "counter", "counter_hz", "counter_invariant", "cpus_online", "cpus_allowed", "kernel_arch", "compiler",
        "relax", "relax_ns", "date", "load_average")

# Keys of the shapes before this one, as (old key, new key).
_OLD_OBJECT = (("cpu", "cpu_model"), ("cpus", "cpus_allowed"))  # compare.py, stress version 2, analyze.py
_OLD_FLAT = (("machine.cpu_model", "cpu_model"), ("machine.cpus_allowed", "cpus_allowed"),
             ("machine.kernel", "kernel"), ("machine.compiler", "compiler"), ("spinwise.backend", "arch"),
             ("spinwise.relax", "relax"), ("spinwise.relax_ns", "relax_ns"), ("spinwise.counter", "counter"),
             ("spinwise.counter_hz", "counter_hz"), ("num_cpus", "cpus_online"))


def _value(text):
    """A flat context's value: JSON text for numbers, arrays, booleans and null; a string as itself."""
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def from_tool(doc):
    """The run context in `doc` (a tool's JSON document, or a flat context), every key present."""
    ctx = dict.fromkeys(KEYS)
    if not isinstance(doc, dict):
        return ctx
    if isinstance(doc.get(KEY), dict) and "cpu_model" in doc[KEY]:  # not report.py's summary "run"
        ctx.update({k: v for k, v in doc[KEY].items() if k in ctx})
        return ctx
    flat = doc.get("context") if isinstance(doc.get("context"), dict) else doc
    prefix = KEY + "."
    if any(k.startswith(prefix) for k in flat):
        ctx.update({k[len(prefix):]: _value(v) for k, v in flat.items() if k[len(prefix):] in ctx})
        return ctx
    for old, new in _OLD_FLAT:
        if old in flat:
            ctx[new] = _value(flat[old])
    old = doc.get("machine")
    if isinstance(old, dict):
        ctx.update({k: v for k, v in old.items() if k in ctx})
        ctx.update({new: old[k] for k, new in _OLD_OBJECT if k in old})
    return ctx


def _cpuinfo_first_block():
    out = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    if out:
                        break
                    continue
                k, sep, v = line.partition(":")
                if sep:
                    out.setdefault(k.strip(), v.strip())
    except OSError:
        pass
    return out


def _sysconf(name):
    try:
        n = os.sysconf(name)
    except (OSError, ValueError):
        return None
    return n if n > 0 else None


def here():
    """This process, now: the keys of from_tool(), what Python cannot tell as None."""
    ctx = dict.fromkeys(KEYS)
    info = _cpuinfo_first_block()
    ctx["cpu_vendor"] = info.get("vendor_id") or info.get("CPU implementer")
    ctx["cpu_model"] = info.get("model name") or "unknown"
    if "cpu family" in info:
        ctx["cpu_id"] = f"family {info['cpu family']} model {info.get('model', '')} stepping {info.get('stepping', '')}"
    elif "CPU implementer" in info:
        ctx["cpu_id"] = f"variant {info.get('CPU variant', '')} revision {info.get('CPU revision', '')}"
    ctx["cpu_count"] = _sysconf("SC_NPROCESSORS_CONF")
    ctx["cpus_online"] = _sysconf("SC_NPROCESSORS_ONLN")
    try:
        ctx["cpus_allowed"] = len(os.sched_getaffinity(0)) or None
    except (AttributeError, OSError):
        pass
    u = platform.uname()
    ctx["kernel"] = f"{u.system} {u.release}"
    ctx["kernel_arch"] = u.machine or None
    ctx["date"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    load = load_average()
    ctx["load_average"] = list(load) if load else [None, None, None]
    return ctx


def load_average():
    """(1, 5, 15 minute) load averages now; None when they cannot be read."""
    try:
        return os.getloadavg()
    except OSError:
        return None


def describe(ctx):
    """'Intel(R) Xeon(R) ... (family 6 model 85 stepping 7), 2 CPUs (2 allowed), Linux 6.1.0 x86_64'."""
    def shown(v):
        return "?" if v is None or v == "" else v

    cpu = shown(ctx.get("cpu_model"))
    if ctx.get("cpu_id"):
        cpu += f" ({ctx['cpu_id']})"
    cpus = ctx.get("cpus_online") or ctx.get("cpu_count")
    return (f"{cpu}, {shown(cpus)} CPUs ({shown(ctx.get('cpus_allowed'))} allowed), "
            f"{shown(ctx.get('kernel'))} {ctx.get('kernel_arch') or ''}".rstrip())
