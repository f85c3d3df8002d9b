// Output against golden: the numbers behind guard checks 4 (every element written), 5 (correctness)
// and 6 (determinism), and the diagnosis text a person or a model can act on.
//
//   CompareStats s = compare_host(DType::f32, out, gold, n, cols, tol, Poison::a);
//   s.bad == 0 && s.unwritten == 0 && s.nonfinite == 0  -> this output passes at this tolerance
//   describe_pattern(s) -> "only the last 17 of 4096 columns are wrong (rows: all)"
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "khive/numerics/inputs.hpp"
#include "khive/task/task.hpp"

namespace khive {

struct CompareStats {
  int64_t n = 0;                         // elements compared
  int64_t rows = 1, cols = 1;            // the 2-D view used for patterns: cols = last dim, rows = n / cols
  int64_t bad = 0;                       // elements outside atol + rtol*|ref| (includes unwritten and nonfinite ones)
  int64_t unwritten = 0;                 // still holding the poison sentinel
  int64_t nonfinite = 0;                 // NaN/Inf in the output where the reference is finite (sentinels excluded)
  int64_t over_cap = 0;                  // elements whose |err| exceeds max_error_cap (if set)
  int64_t out_zeros = 0, ref_zeros = 0;  // exact zeros in output / reference
  double max_abs_err = 0, sum_abs_err = 0;  // over finite pairs
  double max_rel_err = 0;                   // |err| / max(|ref|, tiny) over finite pairs
  int64_t first_bad = -1;                   // smallest index of a bad element, -1 if none
  double first_bad_out = 0, first_bad_ref = 0;
  int64_t first_unwritten = -1;         // smallest index still holding the sentinel, -1 if none
  int64_t worst_index = -1;             // smallest index where |err| == max_abs_err over finite pairs, -1 if none
  double worst_out = 0, worst_ref = 0;  // the values there
  std::vector<int64_t> bad_per_row, bad_per_col;  // histograms for the pattern (sizes rows, cols)
  double mean_abs_err() const { return n ? sum_abs_err / static_cast<double>(n) : 0.0; }
  double matched_ratio() const { return n ? 1.0 - static_cast<double>(bad) / static_cast<double>(n) : 1.0; }
};

// Elementwise comparison of n elements of type t; `cols` is the size of the output's last dimension
// (1 for scalars). `poison` names the sentinel that was written before the call.
// Per element (o = output, r = reference, both as double):
//   output holds the sentinel bit for bit -> unwritten (and bad). Integers: unless the reference holds the
//     same value (a legitimate result that happens to equal the sentinel; the guard's A/B poisoning
//     tells those apart);
//   bool: the output byte must be 0 or 1 (else bad); integers: the error is computed exactly (no
//     rounding through double, so i64 values above 2^53 still compare exactly);
//   r NaN -> good iff o is NaN; r +-inf -> good iff o == r; o NaN/inf -> nonfinite (and bad);
//   else err = |o - r|, bad iff !(err <= atol + rtol*|r|), over_cap iff err > max_error_cap.
// Results do not depend on the number of threads; sum_abs_err is summed in a fixed order (tiles of
// kCompareTile elements reduced as one CUDA block does, then the tile sums in index order), so
// compare_device gives the same CompareStats bit for bit.
// Throws std::invalid_argument for n < 0, cols < 1, n not a multiple of cols, or a packed fp4 type.
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

// One phrase describing where the errors are, from the counts and histograms (deterministic), e.g.
//   "nothing was written (all 4096 elements still hold the sentinel)"
//   "the output is all zeros (the reference has 4096 non-zero elements)"
//   "all 4096 elements are wrong"
//   "5 elements were never written (still hold the sentinel); first at row 63, column 4091; <where>"
//   "only the last 17 of 4096 columns are wrong (rows: all)"       (also "the first k of N", "columns a-b of N")
//   "only the first 3 of 64 rows are wrong (columns: all)"
//   "only the last 17 of 256 columns are wrong (rows: the last 5 of 64)"
//   "every other column is wrong, the odd ones (rows: all)"        "only column 5 is wrong (rows: all)"
//   "only 1 element is wrong, at row 3, column 7"
//   "3 scattered elements are wrong (first at row 5, column 3)"   (at most 32 elements, no row/column pattern)
//   "127 of 4096 elements are wrong in 64 of 64 rows and 64 of 64 columns (first at row 0, column 63)"
//   1-D outputs (rows or cols == 1) speak of elements: "only the last 10 of 1000 elements are wrong".
std::string describe_pattern(const CompareStats& s);

// Full diagnosis, e.g.: "output C: 1088 of 262144 elements wrong (matched 99.58%, need 100%); max abs err
// 3.45e+00 at row 4, column 4087 (got 0, expected 3.44692); mean abs err 3.81e-03; max rel err 1.00e+00;
// first wrong at row 0, column 4079 (got 0, expected 0.0860573); tolerance atol 0.0001 rtol 0.0001;
// unwritten 0; nonfinite 0; only the last 17 of 4096 columns are wrong (rows: all)"
// (the matched percentage never rounds up to 100% while anything is wrong).
std::string describe_mismatch(const std::string& output, const CompareStats& s, const Tolerance& tol);

// ---- shared by compare.cpp and compare.cu (not an API) ----
inline constexpr int64_t kCompareTile = 256;   // elements per canonical partial sum (one CUDA block)
inline constexpr double kRelErrFloor = 1e-30;  // max_rel_err divides by max(|ref|, this)

namespace detail {

enum : unsigned {
  kBad = 1u,
  kUnwritten = 2u,
  kNonfinite = 4u,
  kOverCap = 8u,
  kOutZero = 16u,
  kRefZero = 32u,
  kFinitePair = 64u,
};
struct Elem {
  unsigned flags = 0;
  double o = 0, r = 0, err = 0, rel = 0;  // err/rel only meaningful with kFinitePair
};
struct ElemRule {
  uint64_t sentinel = 0;
  double atol = 0, rtol = 0, cap = 0;
  bool has_cap = false;
};

KHIVE_HD bool is_nan(double x) { return x != x; }
KHIVE_HD bool is_finite(double x) { return fabs(x) <= 1.7976931348623157e308; }

template <typename I>
KHIVE_HD Elem classify_int(const void* out, const void* ref, int64_t i, const ElemRule& k) {
  Elem e;
  const I oi = static_cast<const I*>(out)[i], ri = static_cast<const I*>(ref)[i];
  e.o = static_cast<double>(oi);
  e.r = static_cast<double>(ri);
  if (ri == 0) e.flags |= kRefZero;
  if (static_cast<uint64_t>(static_cast<std::make_unsigned_t<I>>(oi)) == k.sentinel && oi != ri) {
    e.flags |= kBad | kUnwritten;
    return e;
  }
  if (oi == 0) e.flags |= kOutZero;
  const int64_t a = oi, b = ri;
  const uint64_t d = a >= b ? static_cast<uint64_t>(a) - static_cast<uint64_t>(b)
                            : static_cast<uint64_t>(b) - static_cast<uint64_t>(a);
  e.err = static_cast<double>(d);
  e.flags |= kFinitePair;
  return e;
}

// Classifies element i (T is the element type, a constant after inlining).
template <DType T>
KHIVE_HD Elem classify(const void* out, const void* ref, int64_t i, const ElemRule& k) {
  Elem e;
  if constexpr (T == DType::i64)
    e = classify_int<int64_t>(out, ref, i, k);
  else if constexpr (T == DType::i32)
    e = classify_int<int32_t>(out, ref, i, k);
  else if constexpr (T == DType::i16)
    e = classify_int<int16_t>(out, ref, i, k);
  else if constexpr (T == DType::i8)
    e = classify_int<int8_t>(out, ref, i, k);
  else if constexpr (T == DType::boolean) {
    const uint8_t ob = static_cast<const uint8_t*>(out)[i], rb = static_cast<const uint8_t*>(ref)[i];
    e.o = ob;
    e.r = rb != 0 ? 1.0 : 0.0;
    if (rb == 0) e.flags |= kRefZero;
    if (ob == k.sentinel) {
      e.flags |= kBad | kUnwritten;
      return e;
    }
    if (ob > 1) {
      e.flags |= kBad;
      return e;
    }  // not a valid bool
    if (ob == 0) e.flags |= kOutZero;
    e.err = ob == (rb != 0 ? 1 : 0) ? 0.0 : 1.0;
    e.flags |= kFinitePair;
  } else {
    e.o = num::load(T, out, i);
    e.r = num::load(T, ref, i);
    if (e.r == 0.0) e.flags |= kRefZero;
    if (num::load_bits(T, out, i) == k.sentinel) {
      e.flags |= kBad | kUnwritten;
      return e;
    }
    if (e.o == 0.0) e.flags |= kOutZero;
    if (is_nan(e.r)) {
      if (!is_nan(e.o)) e.flags |= kBad;
      return e;
    }
    if (!is_finite(e.r)) {
      if (!(e.o == e.r)) e.flags |= kBad;
      return e;
    }
    if (!is_finite(e.o)) {
      e.flags |= kBad | kNonfinite;
      return e;
    }
    e.err = fabs(e.o - e.r);
    e.flags |= kFinitePair;
  }
  if (e.flags & kFinitePair) {
    const double ar = fabs(e.r);
    if (!(e.err <= num::add_rn(k.atol, num::mul_rn(k.rtol, ar)))) e.flags |= kBad;
    if (k.has_cap && e.err > k.cap) e.flags |= kOverCap;
    e.rel = e.err / (ar > kRelErrFloor ? ar : kRelErrFloor);
  }
  return e;
}

// What one thread saw; merged with order-independent rules (sums of integers, max with the smallest
// index on ties, min index), so the result does not depend on how the elements were shared out.
struct Partial {
  int64_t bad = 0, unwritten = 0, nonfinite = 0, over_cap = 0, out_zeros = 0, ref_zeros = 0;
  double max_abs_err = -1.0;
  int64_t worst_index = -1;
  double worst_out = 0, worst_ref = 0;
  double max_rel_err = 0.0;
  int64_t first_bad = -1;
  double first_bad_out = 0, first_bad_ref = 0;
  int64_t first_unwritten = -1;

  KHIVE_HD void add(const Elem& e, int64_t i) {
    const unsigned f = e.flags;
    if (f & kOutZero) ++out_zeros;
    if (f & kRefZero) ++ref_zeros;
    if (f & kUnwritten) {
      ++unwritten;
      if (first_unwritten < 0 || i < first_unwritten) first_unwritten = i;
    }
    if (f & kNonfinite) ++nonfinite;
    if (f & kOverCap) ++over_cap;
    if (f & kFinitePair) {
      if (e.err > max_abs_err || (e.err == max_abs_err && i < worst_index)) {
        max_abs_err = e.err;
        worst_index = i;
        worst_out = e.o;
        worst_ref = e.r;
      }
      if (e.rel > max_rel_err) max_rel_err = e.rel;
    }
    if (f & kBad) {
      ++bad;
      if (first_bad < 0 || i < first_bad) {
        first_bad = i;
        first_bad_out = e.o;
        first_bad_ref = e.r;
      }
    }
  }
  KHIVE_HD void merge(const Partial& p) {
    bad += p.bad;
    unwritten += p.unwritten;
    nonfinite += p.nonfinite;
    over_cap += p.over_cap;
    out_zeros += p.out_zeros;
    ref_zeros += p.ref_zeros;
    if (p.worst_index >= 0 && (worst_index < 0 || p.max_abs_err > max_abs_err ||
                               (p.max_abs_err == max_abs_err && p.worst_index < worst_index))) {
      max_abs_err = p.max_abs_err;
      worst_index = p.worst_index;
      worst_out = p.worst_out;
      worst_ref = p.worst_ref;
    }
    max_rel_err = (p.max_rel_err > max_rel_err ? p.max_rel_err : max_rel_err);
    if (p.first_bad >= 0 && (first_bad < 0 || p.first_bad < first_bad)) {
      first_bad = p.first_bad;
      first_bad_out = p.first_bad_out;
      first_bad_ref = p.first_bad_ref;
    }
    if (p.first_unwritten >= 0 && (first_unwritten < 0 || p.first_unwritten < first_unwritten))
      first_unwritten = p.first_unwritten;
  }
};

// Copies the merged partial and the ordered sum into the stats.
inline void finish(CompareStats& s, const Partial& p, double sum_abs_err) {
  s.bad = p.bad;
  s.unwritten = p.unwritten;
  s.nonfinite = p.nonfinite;
  s.over_cap = p.over_cap;
  s.out_zeros = p.out_zeros;
  s.ref_zeros = p.ref_zeros;
  s.worst_index = p.worst_index;
  s.worst_out = p.worst_out;
  s.worst_ref = p.worst_ref;
  s.max_abs_err = p.worst_index >= 0 ? p.max_abs_err : 0.0;
  s.max_rel_err = p.max_rel_err;
  s.sum_abs_err = sum_abs_err;
  s.first_bad = p.first_bad;
  s.first_bad_out = p.first_bad_out;
  s.first_bad_ref = p.first_bad_ref;
  s.first_unwritten = p.first_unwritten;
}

// The order in which one tile's |err| values are summed: what a 256-thread CUDA block does with warp
// shuffles (offsets 16, 8, 4, 2, 1; lane 0 keeps the sum), then the 8 warp sums added in warp order.
// `v` (kCompareTile values, 0 past the end) is overwritten.
inline double tile_sum(double* v) {
  for (int w = 0; w < 8; ++w) {
    double* x = v + 32 * w;
    for (int off = 16; off > 0; off >>= 1)
      for (int l = 0; l < off; ++l) x[l] = x[l] + x[l + off];
  }
  double s = v[0];
  for (int w = 1; w < 8; ++w) s = s + v[32 * w];
  return s;
}

// What compare_host and compare_device both start from: the arguments checked (std::invalid_argument) and empty
// stats of n elements in rows of cols; the rule an element is judged by.
// `histograms`: bad_per_row / bad_per_col sized and zeroed (else left empty, for a pass that only counts).
CompareStats start_stats(DType t, int64_t n, int64_t cols, bool histograms = true);
ElemRule elem_rule(DType t, const Tolerance& tol, Poison poison);

}  // namespace detail

#if defined(KHIVE_WITH_CUDA)
// The same on device buffers (asynchronous work on `stream`, synchronized before returning).
CompareStats compare_device(DType t, const void* out, const void* ref, int64_t n, int64_t cols, const Tolerance& tol,
                            Poison poison, void* stream);
#endif

}  // namespace khive
