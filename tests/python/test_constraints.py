"""khive_torch.constraints: the safe subset evaluates, anything else is refused naming file and field."""
import unittest

from khive_torch.constraints import ConstraintError, check_constraint, evaluate_constraint, evaluate_expression


class Seq:
    """A stand-in for a 1-D tensor: indexing, .shape, .numel(), and elements with .item()."""

    class El:
        def __init__(self, v):
            self.v = v

        def item(self):
            return self.v

        def numel(self):
            return 1

    def __init__(self, values):
        self.values = values
        self.shape = (len(values),)

    def __getitem__(self, i):
        return Seq.El(self.values[i])

    def __len__(self):
        return len(self.values)

    def numel(self):
        return len(self.values)


W = "gqa/definition.json: constraints[1]"


class SafeSubset(unittest.TestCase):
    def test_axis_arithmetic(self):
        self.assertTrue(evaluate_constraint("H_qo == H_kv * H_r", {"H_qo": 32, "H_kv": 8, "H_r": 4}, W))
        self.assertFalse(evaluate_constraint("H_qo == H_kv * H_r", {"H_qo": 30, "H_kv": 8, "H_r": 4}, W))
        self.assertTrue(evaluate_constraint("0 < M <= 4096 and not M % 2", {"M": 64}, W))
        self.assertEqual(evaluate_expression("hidden // heads", {"hidden": 4096, "heads": 32}, W), 128)
        self.assertEqual(evaluate_expression("2 ** -1", {}, W), 0.5)

    def test_data_constraint(self):
        names = {"num_kv_indices": 7, "kv_indptr": Seq([0, 3, 7]), "len_indptr": 3, "batch_size": 2}
        self.assertTrue(evaluate_constraint("num_kv_indices == kv_indptr[-1].item()", names, W))
        self.assertTrue(evaluate_constraint("len_indptr == batch_size + 1", names, W))
        self.assertTrue(evaluate_constraint("kv_indptr.shape[0] == len(kv_indptr) == kv_indptr.numel()", names, W))
        self.assertTrue(evaluate_constraint("max(num_kv_indices, 3) == 7 and min(1, 2) == 1 and abs(-2) == 2", names, W))
        names["num_kv_indices"] = 6
        self.assertFalse(evaluate_constraint("num_kv_indices == kv_indptr[-1].item()", names, W))

    def assert_refused(self, text, fragment, names=None):
        with self.assertRaises(ConstraintError) as cm:
            evaluate_constraint(text, names or {"x": 1}, W)
        self.assertIn(W, str(cm.exception))
        self.assertIn(fragment, str(cm.exception))

    def test_refuses_calls_attributes_and_names(self):
        self.assert_refused("open('/etc/passwd')", "this call")
        self.assert_refused("__import__('os').system('x')", "not allowed")
        self.assert_refused("x.__class__", "the attribute '__class__'")
        self.assert_refused("(lambda: 1)()", "not allowed")
        self.assert_refused("'a' == 'a'", "the constant 'a'")
        self.assert_refused("[y for y in range(3)]", "ListComp")
        self.assert_refused("x.item(1)", "this call")
        self.assert_refused("max(x, key=1)", "this call")
        self.assert_refused("y == 1", "unknown name 'y'")
        self.assert_refused("x ==", "not a Python expression")

    def test_division_by_zero_names_the_field(self):
        self.assert_refused("x // 0 == 1", "division by zero")

    def test_check_without_values(self):
        check_constraint("total_q == qo_indptr[-1].item()", {"total_q", "qo_indptr"}, W)
        with self.assertRaises(ConstraintError):
            check_constraint("eval('1')", {"total_q"}, W)


if __name__ == "__main__":
    unittest.main()
