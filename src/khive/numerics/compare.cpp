// Host side of compare.hpp: the elementwise comparison, the pass rule and the diagnosis text.
#include "khive/numerics/compare.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

namespace khive {
namespace {

template <DType T>
void compare_typed(const void* out, const void* ref, int64_t n, int64_t cols, const detail::ElemRule& rule,
                   CompareStats& s) {
  const int64_t ntiles = (n + kCompareTile - 1) / kCompareTile;
  std::vector<double> tile_sums(static_cast<size_t>(ntiles), 0.0);
  int64_t* rows_hist = s.bad_per_row.data();
  int64_t* cols_hist = s.bad_per_col.data();
  detail::Partial total;
#pragma omp parallel if (ntiles > 16)
  {
    detail::Partial mine;
    std::array<double, kCompareTile> errs;
#pragma omp for schedule(static)
    for (int64_t t = 0; t < ntiles; ++t) {
      const int64_t begin = t * kCompareTile, end = std::min(n, begin + kCompareTile);
      errs.fill(0.0);
      for (int64_t i = begin; i < end; ++i) {
        const detail::Elem e = detail::classify<T>(out, ref, i, rule);
        mine.add(e, i);
        if (e.flags & detail::kFinitePair) errs[static_cast<size_t>(i - begin)] = e.err;
        if ((e.flags & detail::kBad) && rows_hist) {
#pragma omp atomic
          ++rows_hist[i / cols];
#pragma omp atomic
          ++cols_hist[i % cols];
        }
      }
      tile_sums[static_cast<size_t>(t)] = detail::tile_sum(errs.data());
    }
#pragma omp critical(khive_compare_merge)
    total.merge(mine);
  }
  double sum = 0.0;
  for (double v : tile_sums) sum += v;  // tile order: the same on host and device
  detail::finish(s, total, sum);
}

void compare_pass(DType t, const void* out, const void* ref, int64_t n, int64_t cols, const detail::ElemRule& rule,
                  CompareStats& s) {
  switch (t) {
    case DType::f64: compare_typed<DType::f64>(out, ref, n, cols, rule, s); break;
    case DType::f32: compare_typed<DType::f32>(out, ref, n, cols, rule, s); break;
    case DType::f16: compare_typed<DType::f16>(out, ref, n, cols, rule, s); break;
    case DType::bf16: compare_typed<DType::bf16>(out, ref, n, cols, rule, s); break;
    case DType::f8e4m3: compare_typed<DType::f8e4m3>(out, ref, n, cols, rule, s); break;
    case DType::f8e5m2: compare_typed<DType::f8e5m2>(out, ref, n, cols, rule, s); break;
    case DType::i64: compare_typed<DType::i64>(out, ref, n, cols, rule, s); break;
    case DType::i32: compare_typed<DType::i32>(out, ref, n, cols, rule, s); break;
    case DType::i16: compare_typed<DType::i16>(out, ref, n, cols, rule, s); break;
    case DType::i8: compare_typed<DType::i8>(out, ref, n, cols, rule, s); break;
    case DType::boolean: compare_typed<DType::boolean>(out, ref, n, cols, rule, s); break;
    default: break;
  }
}

// ---- describing the pattern ----

// The set of indices with a non-zero count in a histogram.
struct IndexSet {
  int64_t size = 0;  // histogram length
  int64_t count = 0, first = -1, last = -1;
  bool contiguous = false, alternating = false;
};

IndexSet index_set(const std::vector<int64_t>& h) {
  IndexSet s;
  s.size = static_cast<int64_t>(h.size());
  bool same_parity_step2 = true;
  int64_t prev = -1;
  for (int64_t i = 0; i < s.size; ++i) {
    if (h[static_cast<size_t>(i)] == 0) continue;
    if (s.first < 0) s.first = i;
    if (prev >= 0 && i - prev != 2) same_parity_step2 = false;
    prev = i;
    s.last = i;
    ++s.count;
  }
  if (s.count > 0) {
    s.contiguous = s.last - s.first + 1 == s.count;
    // every index of one parity, and nothing else: 0,2,4,... or 1,3,5,...
    s.alternating = s.size >= 3 && s.count >= 2 && same_parity_step2 && s.first <= 1 && s.last >= s.size - 2;
  }
  return s;
}

enum class SetKind { none, all, single, first, last, range, alternating, other };

SetKind set_kind(const IndexSet& s) {
  if (s.count == 0) return SetKind::none;
  if (s.count == s.size) return SetKind::all;
  if (s.count == 1) return SetKind::single;
  if (s.contiguous && s.first == 0) return SetKind::first;
  if (s.contiguous && s.last == s.size - 1) return SetKind::last;
  if (s.alternating) return SetKind::alternating;
  if (s.contiguous) return SetKind::range;
  return SetKind::other;
}

bool special(SetKind k) { return k != SetKind::none && k != SetKind::all && k != SetKind::other; }

// "only the last 17 of 4096 columns are wrong", "only column 5 is wrong", "every other row is wrong".
std::string set_sentence(const IndexSet& s, SetKind k, const char* noun) {
  switch (k) {
    case SetKind::single: return fmt::format("only {} {} is wrong", noun, s.first);
    case SetKind::first: return fmt::format("only the first {} of {} {}s are wrong", s.count, s.size, noun);
    case SetKind::last: return fmt::format("only the last {} of {} {}s are wrong", s.count, s.size, noun);
    case SetKind::range: return fmt::format("only {}s {}-{} of {} are wrong", noun, s.first, s.last, s.size);
    case SetKind::alternating:
      return fmt::format("every other {} is wrong, the {} ones", noun, s.first % 2 ? "odd" : "even");
    case SetKind::all: return fmt::format("all {} {}s are wrong", s.size, noun);
    default: return fmt::format("{} of {} {}s are wrong", s.count, s.size, noun);
  }
}

// The short form used in "(rows: ...)".
std::string set_brief(const IndexSet& s, SetKind k) {
  switch (k) {
    case SetKind::all: return "all";
    case SetKind::single: return fmt::format("{} only", s.first);
    case SetKind::first: return fmt::format("the first {} of {}", s.count, s.size);
    case SetKind::last: return fmt::format("the last {} of {}", s.count, s.size);
    case SetKind::range: return fmt::format("{}-{} of {}", s.first, s.last, s.size);
    case SetKind::alternating: return fmt::format("every other ({})", s.first % 2 ? "odd" : "even");
    default: return fmt::format("{} of {}", s.count, s.size);
  }
}

std::string where(const CompareStats& s, int64_t i) {
  if (s.rows > 1 && s.cols > 1) return fmt::format("row {}, column {}", i / s.cols, i % s.cols);
  return fmt::format("index {}", i);
}

std::string spatial_pattern(const CompareStats& s) {
  if (s.bad == 1) return fmt::format("only 1 element is wrong, at {}", where(s, s.first_bad));
  const bool have_hist =
      static_cast<int64_t>(s.bad_per_row.size()) == s.rows && static_cast<int64_t>(s.bad_per_col.size()) == s.cols;
  if (!have_hist) return fmt::format("{} of {} elements are wrong (first at {})", s.bad, s.n, where(s, s.first_bad));
  const IndexSet rs = index_set(s.bad_per_row), cs = index_set(s.bad_per_col);
  const SetKind rk = set_kind(rs), ck = set_kind(cs);
  // A 1-D view: one histogram says it all, in elements.
  if (s.rows == 1 || s.cols == 1) {
    const IndexSet& e = s.rows == 1 ? cs : rs;
    const SetKind ek = s.rows == 1 ? ck : rk;
    if (special(ek)) return set_sentence(e, ek, "element");
    if (s.bad <= 32) return fmt::format("{} scattered elements are wrong (first at index {})", s.bad, s.first_bad);
    return fmt::format("{} of {} elements are wrong (first at index {})", s.bad, s.n, s.first_bad);
  }
  // Every (bad row, bad column) pair bad: the errors form a product of a row set and a column set.
  const bool product = rs.count > 0 && cs.count > 0 && s.bad == rs.count * cs.count;
  if (product) {
    if (special(ck)) return set_sentence(cs, ck, "column") + " (rows: " + set_brief(rs, rk) + ")";
    if (special(rk)) return set_sentence(rs, rk, "row") + " (columns: " + set_brief(cs, ck) + ")";
  }
  if (s.bad <= 32) return fmt::format("{} scattered elements are wrong (first at {})", s.bad, where(s, s.first_bad));
  return fmt::format("{} of {} elements are wrong in {} of {} rows and {} of {} columns (first at {})", s.bad, s.n,
                     rs.count, s.rows, cs.count, s.cols, where(s, s.first_bad));
}

// Enough decimals that a failing ratio never prints as 100%.
std::string percent(double ratio, bool exact_one) {
  const double p = ratio * 100.0;
  if (exact_one) return "100%";
  for (int d = 2; d <= 12; ++d) {
    std::string t = fmt::format("{:.{}f}", p, d);
    if (std::stod(t) < 100.0) return t + "%";
  }
  return fmt::format("{}%", p);
}

}  // namespace

namespace detail {

CompareStats start_stats(DType t, int64_t n, int64_t cols, bool histograms) {
  if (n < 0) throw std::invalid_argument("compare: negative element count");
  if (cols < 1) throw std::invalid_argument("compare: cols must be >= 1");
  if (n % cols != 0)
    throw std::invalid_argument(fmt::format("compare: {} elements are not rows of {} columns", n, cols));
  if (num::size_of(t) == 0) throw std::invalid_argument("compare: packed fp4 outputs are not supported");
  CompareStats s;
  s.n = n;
  s.cols = cols;
  s.rows = n / cols;
  if (histograms) {
    s.bad_per_row.assign(static_cast<size_t>(s.rows), 0);
    s.bad_per_col.assign(static_cast<size_t>(s.cols), 0);
  }
  return s;
}

ElemRule elem_rule(DType t, const Tolerance& tol, Poison poison) {
  ElemRule rule;
  rule.sentinel = poison_bits(t, poison);
  rule.atol = tol.atol;
  rule.rtol = tol.rtol;
  rule.has_cap = tol.max_error_cap.has_value();
  rule.cap = rule.has_cap ? *tol.max_error_cap : 0.0;
  return rule;
}

}  // namespace detail

CompareStats compare_host(DType t, const void* out, const void* ref, int64_t n, int64_t cols, const Tolerance& tol,
                          Poison poison) {
  // A first pass without histograms (for a 1-D output they are n + 1 counters to clear); a failing comparison gets a
  // second pass with them, for the diagnosis.
  CompareStats s = detail::start_stats(t, n, cols, false);
  if (n == 0) return s;
  const detail::ElemRule rule = detail::elem_rule(t, tol, poison);
  compare_pass(t, out, ref, n, cols, rule, s);
  if (s.bad > 0) {
    s = detail::start_stats(t, n, cols, true);
    compare_pass(t, out, ref, n, cols, rule, s);
  }
  return s;
}

bool passes(const CompareStats& s, const Tolerance& tol) {
  if (s.unwritten != 0 || s.nonfinite != 0 || s.over_cap != 0) return false;
  if (s.matched_ratio() < tol.matched_ratio - 1e-12) return false;
  if (s.n > 0 && s.out_zeros == s.n && s.ref_zeros < s.n) return false;
  return true;
}

std::string describe_pattern(const CompareStats& s) {
  if (s.n == 0) return "the output is empty";
  if (s.unwritten == s.n) return fmt::format("nothing was written (all {} elements still hold the sentinel)", s.n);
  if (s.out_zeros == s.n && s.ref_zeros < s.n)
    return fmt::format("the output is all zeros (the reference has {} non-zero elements)", s.n - s.ref_zeros);
  if (s.nonfinite == s.n) return fmt::format("the output is all NaN/Inf ({} elements)", s.n);
  if (s.bad == 0) return "no element is wrong";
  if (s.bad == s.n) return fmt::format("all {} elements are wrong", s.n);
  if (s.unwritten > 0) {
    std::string p = fmt::format("{} elements were never written (still hold the sentinel); first at {}", s.unwritten,
                                where(s, s.first_unwritten));
    if (s.unwritten == 1)
      p = fmt::format("1 element was never written (still holds the sentinel); first at {}",
                      where(s, s.first_unwritten));
    return p + "; " + spatial_pattern(s);
  }
  return spatial_pattern(s);
}

std::string describe_mismatch(const std::string& output, const CompareStats& s, const Tolerance& tol) {
  std::string m = fmt::format("output {}: {} of {} elements wrong (matched {}, need {:g}%)", output, s.bad, s.n,
                              percent(s.matched_ratio(), s.bad == 0), tol.matched_ratio * 100.0);
  if (s.worst_index >= 0 && s.max_abs_err > 0)
    m += fmt::format("; max abs err {:.2e} at {} (got {:.6g}, expected {:.6g})", s.max_abs_err, where(s, s.worst_index),
                     s.worst_out, s.worst_ref);
  else if (s.worst_index >= 0)
    m += "; max abs err 0";
  else
    m += "; max abs err n/a (no finite pair)";
  m += fmt::format("; mean abs err {:.2e}; max rel err {:.2e}", s.mean_abs_err(), s.max_rel_err);
  if (s.first_bad >= 0 && s.first_bad == s.first_unwritten)
    m += fmt::format("; first wrong at {} (never written, expected {:.6g})", where(s, s.first_bad), s.first_bad_ref);
  else if (s.first_bad >= 0 && s.first_bad != s.worst_index)
    m += fmt::format("; first wrong at {} (got {:.6g}, expected {:.6g})", where(s, s.first_bad), s.first_bad_out,
                     s.first_bad_ref);
  m += fmt::format("; tolerance atol {:g} rtol {:g}", tol.atol, tol.rtol);
  m += fmt::format("; unwritten {}; nonfinite {}", s.unwritten, s.nonfinite);
  if (tol.max_error_cap) m += fmt::format("; over the error cap {:g}: {}", *tol.max_error_cap, s.over_cap);
  if (s.n > 0 && s.bad > 0)
    m += "; " + describe_pattern(s);
  else if (s.n > 0 && s.out_zeros == s.n && s.ref_zeros < s.n)
    m += "; " + describe_pattern(s);
  return m;
}

}  // namespace khive
