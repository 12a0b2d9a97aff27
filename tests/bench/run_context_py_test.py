#!/usr/bin/env python3
"""bench/run_context.py, the Python scripts' one reader of the run context: every shape a tool
writes or wrote reads to the same keys, and those keys are the C++ writer's.

Bugs guarded: scripts that each parsed /proc and named the machine with keys of their own (cpu,
cpus, cpu_count, cpus_measured, machine.cpus_allowed), and a helper whose keys drift from the
tools' (with a spinwise-calibrate given, its --advise JSON is the reference).

    python3 tests/bench/run_context_py_test.py [SPINWISE_CALIBRATE PROFILE] [-v]
                                              (ctest: bench.run_context_py)
"""

import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import run_context  # noqa: E402


class Shapes(unittest.TestCase):
    def test_here_has_every_key_and_names_this_machine(self):
        ctx = run_context.here()
        self.assertEqual(tuple(ctx), run_context.KEYS)
        self.assertGreater(ctx["cpus_allowed"], 0)
        self.assertLessEqual(ctx["cpus_allowed"], ctx["cpus_online"])
        self.assertTrue(ctx["kernel"].startswith("Linux "), ctx["kernel"])
        self.assertEqual(len(ctx["load_average"]), 3)

    def test_the_object_and_the_flat_context_read_the_same(self):
        obj = {"run": {"cpu_model": "X", "cpus_allowed": 2, "relax_ns": 12.5, "load_average": [1.0, None, None]}}
        flat = {"context": {"run.cpu_model": "X", "run.cpus_allowed": "2", "run.relax_ns": "12.5",
                            "run.load_average": "[1.0,null,null]", "bench.mode": "quick"}}
        self.assertEqual(run_context.from_tool(obj), run_context.from_tool(flat))
        self.assertEqual(run_context.from_tool(flat)["cpus_allowed"], 2)
        self.assertIsNone(run_context.from_tool(flat)["compiler"])

    def test_files_from_before_read_to_the_same_keys(self):
        bench = {"context": {"machine.cpu_model": "X", "machine.cpus_allowed": "2", "machine.kernel": "Linux 6",
                             "spinwise.relax_ns": "12.5"}}
        stress_v2 = {"machine": {"cpu_model": "X", "cpus": 2, "kernel": "Linux 6", "compiler": "gcc"}}
        compare = {"machine": {"cpu": "X", "cpus": 2, "kernel": "6"}}
        for doc in (bench, stress_v2, compare):
            ctx = run_context.from_tool(doc)
            self.assertEqual(tuple(ctx), run_context.KEYS)
            self.assertEqual((ctx["cpu_model"], ctx["cpus_allowed"]), ("X", 2), doc)
        self.assertEqual(run_context.from_tool(bench)["relax_ns"], 12.5)
        # report.py's summary has a "run" of its own (a line naming the machine): not a context.
        self.assertEqual(run_context.from_tool({"run": {"machine": "X, 2 CPUs"}})["cpu_model"], None)

    def test_describe(self):
        ctx = dict.fromkeys(run_context.KEYS)
        ctx.update(cpu_model="X", cpu_id="family 6 model 85 stepping 7", cpus_online=4, cpus_allowed=2,
                   kernel="Linux 6.1", kernel_arch="x86_64")
        self.assertEqual(run_context.describe(ctx),
                         "X (family 6 model 85 stepping 7), 4 CPUs (2 allowed), Linux 6.1 x86_64")

    def test_the_keys_are_the_tools(self):
        if not os.environ.get("RUN_CONTEXT_TOOL"):
            self.skipTest("no spinwise-calibrate given")
        p = subprocess.run([os.environ["RUN_CONTEXT_TOOL"], "--advise", "mariadb", "--format", "json",
                            "--from-profile", os.environ["RUN_CONTEXT_PROFILE"]],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(tuple(json.loads(p.stdout)["run"]), run_context.KEYS)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and not sys.argv[1].startswith("-"):
        os.environ["RUN_CONTEXT_TOOL"], os.environ["RUN_CONTEXT_PROFILE"] = sys.argv[1], sys.argv[2]
        del sys.argv[1:3]
    unittest.main()
