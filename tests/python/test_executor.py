"""khive_torch.executor speaks the judge's protocol (src/khive/executor/protocol.hpp): driven here the way khive-judge
drives it, over a SOCK_SEQPACKET pair with memfds, on a task written here with only a PyTorch reference."""
import json
import mmap
import os
import pathlib
import socket
import struct
import subprocess
import sys
import tempfile
import unittest

try:
    import torch
except ImportError:
    torch = None

SCALE = {
    "name": "scale_rows",
    "axes": {"M": {"type": "var"}, "N": {"type": "const", "value": 3}},
    "inputs": {"x": {"shape": ["M", "N"], "dtype": "float32"}, "alpha": {"shape": None, "dtype": "float32"},
               "k": {"shape": None, "dtype": "int32"}},
    "outputs": {"y": {"shape": ["M", "N"], "dtype": "float32"}, "s": {"shape": ["M"], "dtype": "bfloat16"}},
    "reference": "import torch\n\ndef run(x, alpha, k):\n"
                 "    y = x * alpha + k\n    x.add_(1)   # writes into its argument: it gets a copy\n"
                 "    return y, y.sum(1).to(torch.bfloat16)\n",
}


def memfd(data, size):
    fd = os.memfd_create("t")
    os.ftruncate(fd, size)
    os.pwrite(fd, data, 0)
    return fd


class Judge:
    """The judge's half of the channel."""

    def __init__(self, task_dir):
        self.sock, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        setup = json.dumps({"backend": "cpu", "task_dir": str(task_dir)})
        self.proc = subprocess.Popen([sys.executable, "-m", "khive_torch.executor", "--socket", str(child.fileno()), "--setup", setup],
                                     pass_fds=[child.fileno()], env=env, stderr=subprocess.PIPE)
        child.close()

    def ask(self, body, fds=()):
        socket.send_fds(self.sock, [json.dumps(body).encode()], list(fds))
        return self.answer()

    def answer(self):
        data = self.sock.recv(1 << 21)
        return json.loads(data)

    def close(self):
        try:
            self.sock.send(json.dumps({"op": "quit"}).encode())
        except OSError:
            pass
        self.proc.wait(30)
        self.sock.close()
        self.proc.stderr.close()


@unittest.skipIf(torch is None, "PyTorch is not installed (scripts/setup.sh installs it into .deps/torch)")
class ExecutorTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.task = pathlib.Path(self.tmp.name) / "scale_rows"
        self.task.mkdir()
        (self.task / "definition.json").write_text(json.dumps(SCALE))
        self.judge = Judge(self.task)

    def tearDown(self):
        self.judge.close()
        self.tmp.cleanup()

    def layout(self, m):
        # One set: x at 0 in the inputs, y at 0 and s at 256 in the goldens, then the var axis.
        return {"op": "layout", "sets": [{"args": [
            {"region": 0, "offset": 0, "dtype": "float32", "shape": [m, 3]},
            {"scalar": 0, "dtype": "float32"}, {"scalar": 1, "dtype": "int32"},
            {"region": 1, "offset": 0, "dtype": "float32", "shape": [m, 3]},
            {"region": 1, "offset": 256, "dtype": "bfloat16", "shape": [m]},
            {"axis": m}]}]}

    def test_goldens_of_the_judges_inputs(self):
        hello = self.judge.answer()
        self.assertEqual(hello["op"], "hello")
        self.assertEqual(hello["version"], 1)
        self.assertIn("own process", hello["sandbox"]["process"])
        m = 5
        x = torch.arange(m * 3, dtype=torch.float32).reshape(m, 3) - 4.5
        fin = memfd(x.numpy().tobytes(), 256)
        fgold = memfd(b"\xff" * 512, 512)
        self.assertEqual(self.judge.ask({"op": "map", "regions": [{"bytes": 256, "access": "r"}, {"bytes": 512, "access": "rw"}]},
                                        [fin, fgold])["op"], "ok")
        self.assertEqual(self.judge.ask(self.layout(m))["op"], "ok")
        self.assertEqual(self.judge.ask({"op": "load"})["op"], "ok")
        scalars = [struct.pack("<f", 2.5).ljust(8, b"\0").hex(), struct.pack("<i", -3).ljust(8, b"\0").hex()]
        a = self.judge.ask({"op": "call", "calls": [{"set": 0, "scalars": scalars}]})
        self.assertEqual(a["op"], "done", a)
        self.assertEqual(len(a["times_s"]), 1)
        gold = mmap.mmap(fgold, 512)
        y = torch.frombuffer(bytearray(gold[:m * 3 * 4]), dtype=torch.float32).reshape(m, 3)
        self.assertTrue(torch.equal(y, x * 2.5 - 3))
        s = torch.frombuffer(bytearray(gold[256:256 + 2 * m]), dtype=torch.bfloat16)
        self.assertTrue(torch.equal(s, (x * 2.5 - 3).sum(1).to(torch.bfloat16)))
        self.assertEqual(gold[256 + 2 * m:257 + 2 * m], b"\xff", "nothing written past the outputs")
        # The reference wrote into its argument: a copy, so the judge's inputs are as they were.
        self.assertEqual(os.pread(fin, m * 12, 0), x.numpy().tobytes())
        gold.close()
        os.close(fin)
        os.close(fgold)

    def test_faults_name_what_went_wrong(self):
        self.judge.answer()
        a = self.judge.ask({"op": "call", "calls": [{"set": 0, "scalars": []}]})
        self.assertEqual((a["op"], a["reason"]), ("fault", "bad_request"))
        self.assertIn("call before load", a["message"])
        fin, fgold = memfd(b"", 64), memfd(b"", 64)
        self.judge.ask({"op": "map", "regions": [{"bytes": 64, "access": "r"}, {"bytes": 64, "access": "rw"}]}, [fin, fgold])
        a = self.judge.ask(self.layout(5))   # 60 bytes of x fit, y does not
        self.assertEqual(a["op"], "fault")
        self.assertIn("outside region 1", a["message"])
        os.close(fin)
        os.close(fgold)
        a = self.judge.ask({"op": "frobnicate"})
        self.assertIn("unknown op", a["message"])

    def test_a_reference_that_raises(self):
        d = dict(SCALE, reference="def run(x, alpha, k):\n    raise RuntimeError('boom')\n")
        (self.task / "definition.json").write_text(json.dumps(d))
        self.judge.answer()
        fin, fgold = memfd(b"", 256), memfd(b"", 512)
        self.judge.ask({"op": "map", "regions": [{"bytes": 256, "access": "r"}, {"bytes": 512, "access": "rw"}]}, [fin, fgold])
        self.judge.ask(self.layout(5))
        self.judge.ask({"op": "load"})
        a = self.judge.ask({"op": "call", "calls": [{"set": 0, "scalars": ["00" * 8, "00" * 8]}]})
        self.assertEqual((a["op"], a["reason"]), ("fault", "reference_error"))
        self.assertIn("scale_rows/definition.json: reference: run() raised RuntimeError: boom", a["message"])
        os.close(fin)
        os.close(fgold)


if __name__ == "__main__":
    unittest.main()
