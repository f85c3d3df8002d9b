"""khive_torch.timed follows khive-exec's gate (src/khive/executor/gate.hpp): the primer's count is read by the same
rule and its default and bound are gate.hpp's, so PyTorch's T_b and a candidate start their calls on the same SMs."""
import pathlib
import re
import unittest

from khive_torch import timed

GATE_HPP = pathlib.Path(__file__).resolve().parents[2] / "src" / "khive" / "executor" / "gate.hpp"


class PrimerTest(unittest.TestCase):
    def test_constants_are_gate_hpps(self):
        text = GATE_HPP.read_text()
        m = re.search(r"kPrimerBlocksPerSm = (\d+), kPrimerMaxBlocksPerSm = (\d+);", text)
        self.assertIsNotNone(m, f"{GATE_HPP}: the primer's constants moved; update this test and timed.py")
        self.assertEqual((timed.PRIMER_BLOCKS_PER_SM, timed.PRIMER_MAX_BLOCKS_PER_SM), (int(m[1]), int(m[2])))
        offsets = dict(re.findall(r"kGate(\w+) = (\d+)", text))
        self.assertEqual((timed.GATE_READY, timed.GATE_DONE, timed.GATE_GO, timed.GATE_BYTES),
                         tuple(int(offsets[k]) for k in ("Ready", "Done", "Go", "Bytes")))

    def test_count_parses_as_the_executor_does(self):
        self.assertEqual(timed.primer_blocks_per_sm(None), timed.PRIMER_BLOCKS_PER_SM)
        self.assertEqual(timed.primer_blocks_per_sm(""), timed.PRIMER_BLOCKS_PER_SM)
        self.assertEqual(timed.primer_blocks_per_sm("0"), 0)
        self.assertEqual(timed.primer_blocks_per_sm("32"), 32)
        for bad in ("33", "-1", "2x", " 2", "1.5", "off", "\uff12"):
            self.assertIsNone(timed.primer_blocks_per_sm(bad), bad)

    def test_primer_ptx_declares_its_entry(self):
        self.assertIn(b".visible .entry khive_primer()", timed.PRIMER_PTX)


if __name__ == "__main__":
    unittest.main()
