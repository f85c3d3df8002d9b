// Device against host: fill_input_device, poison_device and compare_device must give exactly what the
// host versions give. Built only with CUDA; skipped where no GPU is visible.
#if defined(KHIVE_WITH_CUDA)
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "khive/numerics/compare.hpp"
#include "test_key.hpp"

using namespace khive;

namespace {

bool have_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

#define KHIVE_REQUIRE_DEVICE() \
  if (!have_device()) GTEST_SKIP() << "no CUDA device visible"

void ok(cudaError_t e) { ASSERT_EQ(e, cudaSuccess) << cudaGetErrorString(e); }

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { ok(cudaMalloc(&p, bytes ? bytes : 1)); }
  ~DeviceBuffer() { cudaFree(p); }
};

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s); }
};

const DType kTypes[] = {DType::f64, DType::f32, DType::f16, DType::bf16, DType::f8e4m3, DType::f8e5m2,
                        DType::i64, DType::i32, DType::i16, DType::i8,   DType::boolean};

std::vector<DistParams> dists() {
  std::vector<DistParams> v;
  Distribution d;
  v.push_back(dist_params(d));  // normal(0.5, 1)
  d.mean = -3;
  d.stddev = 100;
  v.push_back(dist_params(d));
  d.kind = Distribution::Kind::uniform;
  d.low = -2;
  d.high = 3;
  v.push_back(dist_params(d));
  d.kind = Distribution::Kind::integers;
  d.low = -7;
  d.high = 7;
  v.push_back(dist_params(d));
  d.kind = Distribution::Kind::integers;
  d.low = 0;
  d.high = 1;
  v.push_back(dist_params(d));
  d.kind = Distribution::Kind::constant;
  d.value = 1.25;
  v.push_back(dist_params(d));
  return v;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_same(const CompareStats& h, const CompareStats& d, const std::string& what) {
  EXPECT_EQ(h.n, d.n) << what;
  EXPECT_EQ(h.rows, d.rows) << what;
  EXPECT_EQ(h.cols, d.cols) << what;
  EXPECT_EQ(h.bad, d.bad) << what;
  EXPECT_EQ(h.unwritten, d.unwritten) << what;
  EXPECT_EQ(h.nonfinite, d.nonfinite) << what;
  EXPECT_EQ(h.over_cap, d.over_cap) << what;
  EXPECT_EQ(h.out_zeros, d.out_zeros) << what;
  EXPECT_EQ(h.ref_zeros, d.ref_zeros) << what;
  EXPECT_TRUE(same_bits(h.max_abs_err, d.max_abs_err)) << what << " " << h.max_abs_err << " " << d.max_abs_err;
  EXPECT_TRUE(same_bits(h.sum_abs_err, d.sum_abs_err)) << what << " " << h.sum_abs_err << " " << d.sum_abs_err;
  EXPECT_TRUE(same_bits(h.max_rel_err, d.max_rel_err)) << what;
  EXPECT_EQ(h.first_bad, d.first_bad) << what;
  EXPECT_TRUE(same_bits(h.first_bad_out, d.first_bad_out) ||
              (std::isnan(h.first_bad_out) && std::isnan(d.first_bad_out)))
      << what;
  EXPECT_TRUE(same_bits(h.first_bad_ref, d.first_bad_ref)) << what;
  EXPECT_EQ(h.first_unwritten, d.first_unwritten) << what;
  EXPECT_EQ(h.worst_index, d.worst_index) << what;
  EXPECT_TRUE(same_bits(h.worst_out, d.worst_out)) << what;
  EXPECT_TRUE(same_bits(h.worst_ref, d.worst_ref)) << what;
  EXPECT_EQ(h.bad_per_row, d.bad_per_row) << what;
  EXPECT_EQ(h.bad_per_col, d.bad_per_col) << what;
  EXPECT_EQ(describe_pattern(h), describe_pattern(d)) << what;
}

}  // namespace

TEST(DeviceCheck, FillMatchesHost) {
  KHIVE_REQUIRE_DEVICE();
  Stream st;
  const auto ds = dists();
  for (DType t : kTypes) {
    for (size_t k = 0; k < ds.size(); ++k) {
      for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{(1 << 20) + 37}}) {
        const size_t bytes = static_cast<size_t>(n * num::size_of(t));
        std::vector<unsigned char> host(bytes), back(bytes);
        fill_input_host(t, host.data(), n, ds[k], test_key(0x1234567890ull + k), 3);
        DeviceBuffer dev(bytes);
        fill_input_device(t, dev.p, n, ds[k], test_key(0x1234567890ull + k), 3, st.s);
        ok(cudaMemcpyAsync(back.data(), dev.p, bytes, cudaMemcpyDeviceToHost, st.s));
        ok(cudaStreamSynchronize(st.s));
        size_t first_diff = bytes;
        for (size_t i = 0; i < bytes; ++i)
          if (host[i] != back[i]) {
            first_diff = i;
            break;
          }
        EXPECT_EQ(first_diff, bytes) << "dtype " << static_cast<int>(t) << " dist " << k << " n " << n
                                     << ": first differing byte";
      }
    }
  }
}

TEST(DeviceCheck, PoisonMatchesHost) {
  KHIVE_REQUIRE_DEVICE();
  Stream st;
  for (DType t : kTypes) {
    for (Poison w : {Poison::a, Poison::b}) {
      const int64_t n = 100003;
      const size_t bytes = static_cast<size_t>(n * num::size_of(t));
      std::vector<unsigned char> host(bytes), back(bytes);
      poison_host(t, host.data(), n, w);
      DeviceBuffer dev(bytes);
      poison_device(t, dev.p, n, w, st.s);
      ok(cudaMemcpyAsync(back.data(), dev.p, bytes, cudaMemcpyDeviceToHost, st.s));
      ok(cudaStreamSynchronize(st.s));
      EXPECT_EQ(host, back) << static_cast<int>(t);
    }
  }
}

TEST(DeviceCheck, CompareMatchesHost) {
  KHIVE_REQUIRE_DEVICE();
  Stream st;
  for (DType t : kTypes) {
    const bool is_int = t == DType::i64 || t == DType::i32 || t == DType::i16 || t == DType::i8;
    const bool is_bool = t == DType::boolean;
    Distribution d;
    if (is_int) {
      d.kind = Distribution::Kind::integers;
      d.low = -60;
      d.high = 60;
    }
    if (is_bool) {
      d.kind = Distribution::Kind::integers;
      d.low = 0;
      d.high = 1;
    }
    const int64_t rows = 777, cols = 1333;  // not a multiple of the tile
    const int64_t n = rows * cols;
    const size_t bytes = static_cast<size_t>(n * num::size_of(t));
    std::vector<unsigned char> ref(bytes), out(bytes);
    fill_input_host(t, ref.data(), n, dist_params(d), test_key(5), 0);
    for (int scenario = 0; scenario < 6; ++scenario) {
      out = ref;
      Tolerance tol;
      tol.atol = 1e-3;
      tol.rtol = 1e-2;
      if (scenario == 0) {  // small noise everywhere, a few large errors
        fill_input_host(t, out.data(), n, dist_params(d), test_key(5), 0);
        for (int64_t i = 0; i < n; i += 17) num::store(t, out.data(), i, num::load(t, ref.data(), i) * 1.01 + 0.002);
        for (int64_t i = 5; i < n; i += 9973) num::store(t, out.data(), i, num::load(t, ref.data(), i) + 3.0);
      } else if (scenario == 1) {  // the last 17 columns unwritten
        std::vector<unsigned char> poison(bytes);
        poison_host(t, poison.data(), n, Poison::a);
        const int sz = num::size_of(t);
        for (int64_t r = 0; r < rows; ++r)
          std::memcpy(out.data() + (r * cols + cols - 17) * sz, poison.data() + (r * cols + cols - 17) * sz, 17 * sz);
      } else if (scenario == 2) {  // NaNs and infinities (floats), garbage bytes (bool), big errors (ints)
        for (int64_t i = 3; i < n; i += 4099) {
          if (is_bool)
            static_cast<uint8_t*>(static_cast<void*>(out.data()))[i] = 7;
          else if (is_int)
            num::store(t, out.data(), i, 100.0);
          else
            num::store(t, out.data(), i, (i / 4099) % 2 ? NAN : -INFINITY);
        }
      } else if (scenario == 3) {  // all zeros
        std::memset(out.data(), 0, bytes);
      } else if (scenario == 4) {  // every other row wrong, with a cap and a matched ratio
        for (int64_t i = 0; i < n; ++i)
          if ((i / cols) % 2)
            num::store(t, out.data(), i,
                       is_bool ? 1.0 - num::load(t, ref.data(), i) : num::load(t, ref.data(), i) + 0.25 * (i % 5));
        tol.matched_ratio = 0.4;
        tol.max_error_cap = 0.6;
      } else {  // identical
      }
      const CompareStats h = compare_host(t, out.data(), ref.data(), n, cols, tol, Poison::a);
      DeviceBuffer dout(bytes), dref(bytes);
      ok(cudaMemcpy(dout.p, out.data(), bytes, cudaMemcpyHostToDevice));
      ok(cudaMemcpy(dref.p, ref.data(), bytes, cudaMemcpyHostToDevice));
      const CompareStats dv = compare_device(t, dout.p, dref.p, n, cols, tol, Poison::a, st.s);
      expect_same(h, dv, "dtype " + std::to_string(static_cast<int>(t)) + " scenario " + std::to_string(scenario));
      if (scenario == 1) {
        EXPECT_EQ(h.unwritten, rows * 17) << static_cast<int>(t);
      }
    }
  }
}

TEST(DeviceCheck, CompareLargeAndEmpty) {
  KHIVE_REQUIRE_DEVICE();
  Stream st;
  const int64_t n = int64_t{1} << 25, cols = 4096;
  const size_t bytes = static_cast<size_t>(n) * 2;
  DeviceBuffer dref(bytes), dout(bytes);
  fill_input_device(DType::bf16, dref.p, n, dist_params(Distribution{}), test_key(1), 0, st.s);
  fill_input_device(DType::bf16, dout.p, n, dist_params(Distribution{}), test_key(1), 0, st.s);
  Tolerance tol;
  tol.atol = 1e-2;
  tol.rtol = 1e-2;
  CompareStats dv = compare_device(DType::bf16, dout.p, dref.p, n, cols, tol, Poison::a, st.s);
  EXPECT_EQ(dv.bad, 0);
  EXPECT_TRUE(passes(dv, tol));
  fill_input_device(DType::bf16, dout.p, n, dist_params(Distribution{}), test_key(2), 0, st.s);  // other data
  dv = compare_device(DType::bf16, dout.p, dref.p, n, cols, tol, Poison::a, st.s);
  std::vector<unsigned char> out(bytes), ref(bytes);
  ok(cudaMemcpy(out.data(), dout.p, bytes, cudaMemcpyDeviceToHost));
  ok(cudaMemcpy(ref.data(), dref.p, bytes, cudaMemcpyDeviceToHost));
  expect_same(compare_host(DType::bf16, out.data(), ref.data(), n, cols, tol, Poison::a), dv, "large");
  const CompareStats e = compare_device(DType::f32, dout.p, dref.p, 0, 8, tol, Poison::a, st.s);
  EXPECT_EQ(e.n, 0);
  EXPECT_THROW(compare_device(DType::f32, dout.p, dref.p, 10, 3, tol, Poison::a, st.s), std::invalid_argument);
}
#endif  // KHIVE_WITH_CUDA
