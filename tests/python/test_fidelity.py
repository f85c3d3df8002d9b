"""bench/fidelity.py's comparison rule on synthetic medians (no GPU): within max(3 %, 1 us), the nearest of several
harness rhythms, the per-rhythm counts, and the seeds' spread flag."""
import importlib.util
import pathlib
import unittest

_PATH = pathlib.Path(__file__).resolve().parents[2] / "bench" / "fidelity.py"
_spec = importlib.util.spec_from_file_location("fidelity", _PATH)
F = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(F)


class CompareTest(unittest.TestCase):
    def test_one_rhythm(self):
        r = F.compare([102e-6, 101e-6, 103e-6], 100e-6)
        self.assertAlmostEqual(r["ratio"], 1.02)
        self.assertTrue(r["within"])
        self.assertFalse(F.compare([104e-6], 100e-6)["within"], "4 % of 100 us is over max(3 %, 1 us)")
        self.assertTrue(F.compare([5.9e-6], 5e-6)["within"], "0.9 us at 5 us: under 1 us")
        self.assertFalse(F.compare([6.1e-6], 5e-6)["within"])

    def test_nearest_rhythm_is_compared_and_each_is_counted(self):
        # back to back 1000 us (power-capped), after an idle 1200 us: khive's 1190 us agrees with the second only
        r = F.compare([1190e-6], [1000e-6, 1200e-6])
        self.assertEqual(r["harness_pick"], 1)
        self.assertEqual(r["harness_s"], 1200e-6)
        self.assertTrue(r["within"])
        self.assertEqual(r["within_by_rhythm"], [False, True])
        rows = [dict(r, task="t", kernel="k", workload="w"),
                dict(F.compare([1001e-6], [1000e-6, 1200e-6]), task="t", kernel="k", workload="w2")]
        s = F.summarize(rows, [], [])
        self.assertEqual((s["within"], s["within_by_rhythm"]), (2, [1, 1]))

    def test_a_failed_rhythm_is_not_picked(self):
        r = F.compare([100e-6], [None, 101e-6])
        self.assertEqual(r["harness_pick"], 1)
        self.assertEqual(r["within_by_rhythm"], [False, True])

    def test_no_harness_no_verdict(self):
        r = F.compare([100e-6], [None])
        self.assertNotIn("within", r)

    def test_seed_spread_flag(self):
        self.assertTrue(F.compare([100e-6, 103e-6], 100e-6)["spread_flag"])
        self.assertFalse(F.compare([10e-6, 11e-6], 10e-6)["spread_flag"], "kernels under 20 us are not flagged")


if __name__ == "__main__":
    unittest.main()
