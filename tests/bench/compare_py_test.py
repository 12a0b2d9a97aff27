#!/usr/bin/env python3
"""bench/compare/compare.py and bench/compare.sh: the paired comparison's verdicts on synthetic runs
whose answers are known, the whole driver over two stand-in harness binaries, and bad input.

Bugs guarded: a comparison that cannot call a real difference because it pools runs minutes apart
(a drift larger than the change hides it: the pairing is what resolves it), one that gives a
verdict from fewer pairs than the interval rule supports, A/A peers called different, and bad
input that runs anything. Asserts nothing about timings: the stand-ins print fixed figures.

    python3 tests/bench/compare_py_test.py [-v]        (ctest: bench.compare_py)
"""

import importlib.util
import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
COMPARE_PY = os.path.join(ROOT, "bench", "compare", "compare.py")
COMPARE_SH = os.path.join(ROOT, "bench", "compare.sh")

spec = importlib.util.spec_from_file_location("compare", COMPARE_PY)
compare = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare)


def contended(mops):
    return {"mops": mops, "cpu_ns_per_op": 2000.0 / mops, "jain": 0.9, "handoff_ns": 0.0}


def rows_for(runs, cell, lock):
    return {r["metric"]: r for r in compare.analyse(runs, [cell], [lock], []) if r["lock"] == lock}


class Verdicts(unittest.TestCase):
    def test_a_ten_percent_loss_under_a_drift_larger_than_it_is_called_slower(self):
        # A drifts 1.0 -> 1.5 over the rounds (the host moving vCPUs); B is 0.9 A in every pair.
        # Pooled, B's runs overlap A's; paired, every ratio is 0.9.
        drift = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5]
        runs = {("8t", "l", "a"): [contended(8 * d) for d in drift],
                ("8t", "l", "b"): [contended(8 * d * 0.9) for d in drift]}
        r = rows_for(runs, "8t", "l")
        self.assertEqual(r["mops"]["verdict"], "slower")
        self.assertAlmostEqual(r["mops"]["ratio"], 0.9, places=9)
        self.assertEqual(r["cpu_ns_per_op"]["verdict"], "more CPU")
        self.assertEqual(r["jain"]["verdict"], "within noise")
        a_range = (min(x["mops"] for x in runs[("8t", "l", "a")]), max(x["mops"] for x in runs[("8t", "l", "a")]))
        b_range = (min(x["mops"] for x in runs[("8t", "l", "b")]), max(x["mops"] for x in runs[("8t", "l", "b")]))
        self.assertLess(a_range[0], b_range[1], "the test needs overlapping unpaired ranges")

    def test_fewer_than_six_pairs_give_no_verdict(self):
        runs = {("8t", "l", "a"): [contended(10)] * 5, ("8t", "l", "b"): [contended(5)] * 5}
        self.assertEqual(rows_for(runs, "8t", "l")["mops"]["verdict"], "too few pairs")
        runs = {("8t", "l", "a"): [contended(10)] * 6, ("8t", "l", "b"): [contended(5)] * 6}
        self.assertEqual(rows_for(runs, "8t", "l")["mops"]["verdict"], "slower")

    def test_pairs_on_both_sides_of_one_are_within_noise(self):
        runs = {("8t", "l", "a"): [contended(10)] * 6,
                ("8t", "l", "b"): [contended(m) for m in (9.5, 10.6, 9.9, 10.3, 9.7, 10.4)]}
        self.assertEqual(rows_for(runs, "8t", "l")["mops"]["verdict"], "within noise")

    def test_lower_is_better_for_handoff(self):
        runs = {("handoff", "l", "a"): [{"handoff_ns": 600.0}] * 6, ("handoff", "l", "b"): [{"handoff_ns": 300.0}] * 6}
        self.assertEqual(rows_for(runs, "handoff", "l")["handoff_ns"]["verdict"], "faster handoff")
        peers = compare.against_peers({("handoff", "l", "b"): [{"handoff_ns": 300.0}] * 6,
                                       ("handoff", "p", "b"): [{"handoff_ns": 900.0}] * 6},
                                      ["handoff"], ["l", "p"], ["p"])
        self.assertEqual(peers[0]["verdict"], "ahead")
        self.assertAlmostEqual(peers[0]["speedup"], 3.0)

    def test_a_variant_is_set_against_its_default_lock(self):
        runs = {("8t", "l", "b"): [contended(10)] * 6, ("8t", "l_prompt", "b"): [contended(6)] * 6}
        v = [r for r in compare.variants(runs, ["8t"], ["l", "l_prompt"]) if r["metric"] == "mops"]
        self.assertEqual(len(v), 1)
        self.assertEqual((v[0]["lock"], v[0]["base"], v[0]["verdict"]), ("l_prompt", "l", "slower"))

    def test_turns_kept_are_medians_per_side_in_the_contended_cells_only(self):
        # Order has no verdict (near 0 for a FIFO lock, so a ratio says little): each side's median
        # and range. Runs without the field (an older harness) and other cells are left out.
        runs = {("8t", "l", "a"): [dict(contended(8), kept=k) for k in (0.9, 0.95, 0.98)],
                ("8t", "l", "b"): [dict(contended(8), kept=k) for k in (0.1, 0.2, 0.4)],
                ("handoff", "l", "a"): [{"handoff_ns": 300.0, "kept": 0.5}] * 3,
                ("handoff", "l", "b"): [{"handoff_ns": 300.0, "kept": 0.5}] * 3,
                ("8t", "old", "a"): [contended(8)] * 3, ("8t", "old", "b"): [contended(8)] * 3}
        rows = compare.turns_kept(runs, ["8t", "handoff"], ["l", "old"])
        self.assertEqual([(r["cell"], r["lock"]) for r in rows], [("8t", "l")])
        self.assertAlmostEqual(rows[0]["a"].median, 0.95)
        self.assertAlmostEqual(rows[0]["b"].median, 0.2)
        self.assertEqual((rows[0]["b"].min, rows[0]["b"].max), (0.1, 0.4))


STAND_IN = r'''#!/usr/bin/env python3
# A stand-in for spinwise-cell: fixed figures, FACTOR x for lock "l".
import json, sys
FACTOR = {factor}
a = sys.argv[1:]
if a == ["--list"]:
    print("lock l\nlock l_prompt\nlock std_mutex\ncell 8t_cs16_l64\ncell handoff"); sys.exit(0)
if a == ["--relax-ns"]:
    print("10.0"); sys.exit(0)
lock, cell = a[a.index("--lock") + 1], a[a.index("--cell") + 1]
m = 8.0 * (FACTOR if lock.startswith("l") else 1.0)
print(json.dumps({{"lock": lock, "cell": cell, "mops": m, "cpu_ns_per_op": 250.0 / m, "jain": 0.95,
                  "handoff_ns": 500.0 / (FACTOR if lock == "l" else 1.0)}}))
'''


class Driver(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.bins = {}
        for name, factor, only_b in (("a", 1.0, False), ("b", 0.8, True)):
            path = os.path.join(self.tmp.name, "cell-" + name)
            text = STAND_IN.format(factor=factor)
            if not only_b:  # A has no l_prompt: a variant new in B
                text = text.replace("lock l_prompt\\n", "")
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
            self.bins[name] = path

    def tearDown(self):
        self.tmp.cleanup()

    def run_compare(self, *extra):
        return subprocess.run([sys.executable, COMPARE_PY, "--a", self.bins["a"], "--b", self.bins["b"],
                               "--ms", "10", "--pairs", "6", *extra], capture_output=True, text=True, timeout=300)

    def test_the_report_calls_the_loss_and_keeps_the_peer_within_noise(self):
        out = os.path.join(self.tmp.name, "r.json")
        p = self.run_compare("--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("| 8t_cs16_l64 | l | mops | 8 | 6.4 | 0.800 [0.800-0.800] | slower |", p.stdout)
        self.assertIn("| handoff | l | handoff_ns | 500 | 625 | 1.250 [1.250-1.250] | slower handoff |", p.stdout)
        self.assertIn("A/A controls (peers): 0 of 4 called different", p.stdout)
        self.assertIn("only in B, measured there alone: l_prompt", p.stderr)
        self.assertIn("| 8t_cs16_l64 | l_prompt | mops |", p.stdout, "the variant against its default lock")
        with open(out) as f:
            j = json.load(f)
        self.assertEqual(len([r for r in j["runs"] if r["side"] == "a"]), 6 * 2 * 2, "6 rounds x 2 cells x 2 locks")
        self.assertEqual(j["context"]["pairs"], 6)

    def test_bad_input_is_refused_before_anything_runs(self):
        for args, what in ((["--locks", "nope"], "unknown lock"), (["--cells", "nope"], "unknown cell"),
                           (["--pairs", "0"], "--pairs"), (["--ms", "5"], "--ms")):
            p = self.run_compare(*args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(what, p.stderr)
            self.assertNotIn("round 1", p.stderr)

    def test_compare_sh_refuses_a_revision_that_does_not_exist(self):
        p = subprocess.run(["bash", COMPARE_SH, "no-such-revision-xyz", "HEAD"], capture_output=True, text=True,
                           timeout=120, cwd=ROOT)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("'no-such-revision-xyz' is not a revision", p.stderr)
        p = subprocess.run(["bash", COMPARE_SH, "HEAD"], capture_output=True, text=True, timeout=60, cwd=ROOT)
        self.assertEqual(p.returncode, 2)
        self.assertIn("give two revisions", p.stderr)
        p = subprocess.run(["bash", COMPARE_SH, "--bogus", "HEAD", "HEAD"], capture_output=True, text=True,
                           timeout=60, cwd=ROOT)
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown option '--bogus'", p.stderr)


if __name__ == "__main__":
    unittest.main()
