// Output against golden: the numbers behind guard checks 4 (every element written), 5 (correctness)
// and 6 (determinism), and the diagnosis text a person or a model can act on.
//
//   CompareStats s = compare_host(DType::f32, out, gold, n, cols, tol, Poison::a);
//   s.bad == 0 && s.unwritten == 0 && s.nonfinite == 0  -> this output passes at this tolerance
//   describe_pattern(s) -> "only the last 17 of 4096 columns are wrong (rows: all)"
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "khive/check/inputs.hpp"
#include "khive/task/task.hpp"

namespace khive {

struct CompareStats {
  int64_t n = 0;               // elements compared
  int64_t rows = 1, cols = 1;  // the 2-D view used for patterns: cols = last dim, rows = n / cols
  int64_t bad = 0;             // elements outside atol + rtol*|ref| (includes unwritten and nonfinite ones)
  int64_t unwritten = 0;       // still holding the poison sentinel
  int64_t nonfinite = 0;       // NaN/Inf in the output where the reference is finite (sentinels excluded)
  int64_t over_cap = 0;        // elements whose |err| exceeds max_error_cap (if set)
  int64_t out_zeros = 0, ref_zeros = 0;   // exact zeros in output / reference
  double max_abs_err = 0, sum_abs_err = 0;   // over finite pairs
  double max_rel_err = 0;                    // |err| / max(|ref|, tiny) over finite pairs
  int64_t first_bad = -1;      // smallest index of a bad element, -1 if none
  double first_bad_out = 0, first_bad_ref = 0;
  int64_t worst_index = -1;    // index of max_abs_err
  std::vector<int64_t> bad_per_row, bad_per_col;   // histograms for the pattern (sizes rows, cols)
  double mean_abs_err() const { return n ? sum_abs_err / static_cast<double>(n) : 0.0; }
  double matched_ratio() const { return n ? 1.0 - static_cast<double>(bad) / static_cast<double>(n) : 1.0; }
};

// Elementwise comparison of n elements of type t; `cols` is the size of the output's last dimension
// (1 for scalars). `poison` names the sentinel that was written before the call.
CompareStats compare_host(DType t, const void* out, const void* ref, int64_t n, int64_t cols, const Tolerance& tol,
                          Poison poison);

// Two candidate outputs against each other (determinism): bad counts elements that differ by more than
// the tolerance, treating the first as reference.
inline CompareStats compare_runs_host(DType t, const void* first, const void* second, int64_t n, int64_t cols,
                                      const Tolerance& tol, Poison poison) {
  return compare_host(t, second, first, n, cols, tol, poison);
}

// Does the comparison pass the tolerance rule? (bad/n within 1 - matched_ratio, nothing unwritten, no
// nonfinite, nothing over the cap, and not all-zero where the reference is not all-zero.)
bool passes(const CompareStats& s, const Tolerance& tol);

// One phrase describing where the errors are, from the histograms, e.g.
//   "all 4096 elements are wrong", "only the last 17 of 4096 columns are wrong",
//   "only the first 3 of 64 rows are wrong", "every other column is wrong",
//   "2 scattered elements are wrong (rows 5, 77)", "the output is all zeros".
std::string describe_pattern(const CompareStats& s);

// Full diagnosis: "output C: 17 of 262144 elements wrong (matched 99.99%, need 100%); max abs err
// 3.1e+00 at index 4095 (got 0, expected 3.1), mean abs err 2.0e-04; unwritten 0; only the last ..."
std::string describe_mismatch(const std::string& output, const CompareStats& s, const Tolerance& tol);

#if defined(KHIVE_WITH_CUDA)
// The same on device buffers (asynchronous work on `stream`, synchronized before returning).
CompareStats compare_device(DType t, const void* out, const void* ref, int64_t n, int64_t cols, const Tolerance& tol,
                            Poison poison, void* stream);
#endif

}  // namespace khive
