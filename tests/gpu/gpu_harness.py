"""What the GPU tests under tests/gpu share: the start (arguments, and exit 77 = skipped without nvcc or, unless
--build-only, without a GPU) and the C++ pieces their host harnesses splice in (the CUDA error check, the fast normal
generator)."""
import os
import pathlib
import shutil
import subprocess
import sys


def start():
    """(khive-tune, repository root, build_only, nvcc) from `SCRIPT KHIVE_TUNE ROOT [--build-only] ...`; exits 77 when
    the test cannot run here."""
    tune, root = sys.argv[1], pathlib.Path(sys.argv[2])
    build_only = "--build-only" in sys.argv[3:]
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    if not nvcc:
        print("skipped: no nvcc")
        sys.exit(77)
    if not build_only and (not shutil.which("nvidia-smi") or
                           subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode != 0):
        print("skipped: no GPU")
        sys.exit(77)
    return tune, root, build_only, nvcc


def check_macro(fail_value):
    """CK(e): on a CUDA error, print it with the line and `return fail_value` from the enclosing function."""
    return ("#define CK(e) do { cudaError_t err_ = (e); if (err_ != cudaSuccess) { std::printf(\"CUDA error %s at "
            "line %d\\n\", cudaGetErrorString(err_), __LINE__); return " + fail_value + "; } } while (0)")


# A fast approximately normal generator (xorshift64*, Irwin-Hall over 4 uniforms, unit variance): the large shapes
# need hundreds of millions of inputs, which std::normal_distribution makes in tens of seconds. Needs <cstdint>.
NORMAL = r"""
struct Normal {
  uint64_t s;
  float mean, sd;
  float operator()() {
    float u = 0;
    for (int i = 0; i < 4; ++i) {
      s ^= s >> 12; s ^= s << 25; s ^= s >> 27;
      u += float((s * 2685821657736338717ull) >> 40) * (1.0f / 16777216.0f);
    }
    return mean + sd * (u - 2.0f) * 1.7320508f;
  }
};
"""


def finish(sources, failures, build_only):
    """The summary line and each failure; the exit status (1 when anything failed or nothing was built)."""
    print(f"{len(sources)} kernels {'built' if build_only else 'checked'}, {len(failures)} failed")
    for f in failures:
        print("FAIL", f)
    return 1 if failures or not sources else 0
