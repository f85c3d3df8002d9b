// Device side of compare.hpp: the same CompareStats as compare_host, bit for bit, from device buffers.
//
// One 256-thread block per tile of kCompareTile elements (grid-stride over tiles). Per tile, the |err|
// values are summed with warp shuffles and then in warp order (detail::tile_sum does the same on the
// host); tile sums go to an array that the host adds in tile order, so sum_abs_err does not depend on
// scheduling. Counts, maxima and first indices are merged per thread, per block (cub::BlockReduce), then
// per block on the host, with order-independent rules (detail::Partial). Histograms: atomicAdd.
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>
#include <stdexcept>
#include <string>
#include <vector>

#include "khive/numerics/compare.hpp"

namespace khive {
namespace {

constexpr int kThreads = static_cast<int>(kCompareTile);
static_assert(kThreads == 256, "detail::tile_sum mirrors a block of 8 warps");

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("compare_device: ") + what + ": " + cudaGetErrorName(e) + ": " +
                             cudaGetErrorString(e));
}

// Stream-ordered device scratch, freed on the same stream (also when an exception unwinds).
class Scratch {
 public:
  Scratch(size_t bytes, cudaStream_t s) : s_(s) {
    if (bytes) check(cudaMallocAsync(&p_, bytes, s), "cudaMallocAsync");
  }
  ~Scratch() { release(); }
  void release() {
    if (p_) (void)cudaFreeAsync(p_, s_);
    p_ = nullptr;
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  template <typename U>
  U* as() const {
    return static_cast<U*>(p_);
  }

 private:
  void* p_ = nullptr;
  cudaStream_t s_;
};

struct MergeOp {
  __device__ detail::Partial operator()(const detail::Partial& a, const detail::Partial& b) const {
    detail::Partial r = a;
    r.merge(b);
    return r;
  }
};

template <DType T>
__global__ void __launch_bounds__(kThreads)
    compare_kernel(const void* out, const void* ref, int64_t n, int64_t cols, detail::ElemRule rule, int64_t ntiles,
                   double* tile_sums, detail::Partial* block_parts, unsigned long long* row_hist,
                   unsigned long long* col_hist) {
  using BlockReduce = cub::BlockReduce<detail::Partial, kThreads>;
  __shared__ typename BlockReduce::TempStorage temp;
  __shared__ double warp_sums[kThreads / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  detail::Partial mine;
  for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
    const int64_t i = t * kCompareTile + threadIdx.x;
    double v = 0.0;
    if (i < n) {
      const detail::Elem e = detail::classify<T>(out, ref, i, rule);
      mine.add(e, i);
      if (e.flags & detail::kFinitePair) v = e.err;
      if ((e.flags & detail::kBad) && row_hist) {
        atomicAdd(&row_hist[i / cols], 1ull);
        atomicAdd(&col_hist[i % cols], 1ull);
      }
    }
    for (int off = 16; off > 0; off >>= 1) v = v + __shfl_down_sync(0xffffffffu, v, off);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
      double s = warp_sums[0];
      for (int w = 1; w < kThreads / 32; ++w) s = s + warp_sums[w];
      tile_sums[t] = s;
    }
    __syncthreads();
  }
  const detail::Partial total = BlockReduce(temp).Reduce(mine, MergeOp());
  if (threadIdx.x == 0) block_parts[blockIdx.x] = total;
}

template <DType T>
void launch(const void* out, const void* ref, int64_t n, int64_t cols, const detail::ElemRule& rule, int64_t ntiles,
            unsigned grid, double* sums, detail::Partial* parts, unsigned long long* rh, unsigned long long* ch,
            cudaStream_t s) {
  compare_kernel<T><<<grid, kThreads, 0, s>>>(out, ref, n, cols, rule, ntiles, sums, parts, rh, ch);
  check(cudaGetLastError(), "kernel launch");
}

}  // namespace

CompareStats compare_device(DType t, const void* out, const void* ref, int64_t n, int64_t cols, const Tolerance& tol,
                            Poison poison, void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  CompareStats st = detail::start_stats(t, n, cols, false);
  if (n == 0) {
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    return st;
  }
  const detail::ElemRule rule = detail::elem_rule(t, tol, poison);

  (void)cudaGetLastError();  // a stale error from someone else's call must not be blamed on this one
  int dev = 0, sms = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
  const int64_t ntiles = (n + kCompareTile - 1) / kCompareTile;
  const int64_t max_grid = static_cast<int64_t>(sms > 0 ? sms : 1) * 8;
  const unsigned grid = static_cast<unsigned>(ntiles < max_grid ? ntiles : max_grid);
  const size_t hist_len = static_cast<size_t>(st.rows + st.cols);

  Scratch sums(sizeof(double) * static_cast<size_t>(ntiles), s);
  Scratch parts(sizeof(detail::Partial) * grid, s);
  auto run = [&](unsigned long long* rh, unsigned long long* ch) {
    switch (t) {
      case DType::f64:
        launch<DType::f64>(out, ref, n, cols, rule, ntiles, grid, sums.as<double>(), parts.as<detail::Partial>(), rh,
                           ch, s);
        break;
      case DType::f32:
        launch<DType::f32>(out, ref, n, cols, rule, ntiles, grid, sums.as<double>(), parts.as<detail::Partial>(), rh,
                           ch, s);
        break;
      case DType::f16:
        launch<DType::f16>(out, ref, n, cols, rule, ntiles, grid, sums.as<double>(), parts.as<detail::Partial>(), rh,
                           ch, s);
        break;
      case DType::bf16:
        launch<DType::bf16>(out, ref, n, cols, rule, ntiles, grid, sums.as<double>(), parts.as<detail::Partial>(), rh,
                            ch, s);
        break;
      case DType::f8e4m3:
        launch<DType::f8e4m3>(out, ref, n, cols, rule, ntiles, grid, sums.as<double>(), parts.as<detail::Partial>(), rh,
                              ch, s);
        break;
      case DType::f8e5m2:
        launch<DType::f8e5m2>(out, ref, n, cols, rule, ntiles, grid, sums.as<double>(), parts.as<detail::Partial>(), rh,
                              ch, s);
        break;
      case DType::i64:
        launch<DType::i64>(out, ref, n, cols, rule, ntiles, grid, sums.as<double>(), parts.as<detail::Partial>(), rh,
                           ch, s);
        break;
      case DType::i32:
        launch<DType::i32>(out, ref, n, cols, rule, ntiles, grid, sums.as<double>(), parts.as<detail::Partial>(), rh,
                           ch, s);
        break;
      case DType::i16:
        launch<DType::i16>(out, ref, n, cols, rule, ntiles, grid, sums.as<double>(), parts.as<detail::Partial>(), rh,
                           ch, s);
        break;
      case DType::i8:
        launch<DType::i8>(out, ref, n, cols, rule, ntiles, grid, sums.as<double>(), parts.as<detail::Partial>(), rh, ch,
                          s);
        break;
      case DType::boolean:
        launch<DType::boolean>(out, ref, n, cols, rule, ntiles, grid, sums.as<double>(), parts.as<detail::Partial>(),
                               rh, ch, s);
        break;
      default: break;
    }
  };
  // The pass every call gets: no histograms (for a 1-D output of n elements they are n + 1 counters to clear and
  // copy, which made a passing comparison of a 16M-element output cost ~20 ms).
  run(nullptr, nullptr);
  std::vector<double> tile_sums(static_cast<size_t>(ntiles));
  std::vector<detail::Partial> block_parts(grid);
  check(cudaMemcpyAsync(tile_sums.data(), sums.as<double>(), sizeof(double) * tile_sums.size(), cudaMemcpyDeviceToHost,
                        s),
        "cudaMemcpyAsync (tile sums)");
  check(cudaMemcpyAsync(block_parts.data(), parts.as<detail::Partial>(), sizeof(detail::Partial) * block_parts.size(),
                        cudaMemcpyDeviceToHost, s),
        "cudaMemcpyAsync (block results)");
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize (comparison)");

  detail::Partial total;
  for (const detail::Partial& p : block_parts) total.merge(p);
  double sum = 0.0;
  for (double v : tile_sums) sum += v;  // tile order: the same as compare_host
  detail::finish(st, total, sum);
  if (total.bad > 0) {  // a failing comparison: a second pass for the histograms the diagnosis reads
    const size_t hist_len = static_cast<size_t>(st.rows + st.cols);
    Scratch hist(sizeof(unsigned long long) * hist_len, s);
    unsigned long long* rh = hist.as<unsigned long long>();
    unsigned long long* ch = rh + st.rows;
    check(cudaMemsetAsync(rh, 0, sizeof(unsigned long long) * hist_len, s), "cudaMemsetAsync");
    run(rh, ch);
    st.bad_per_row.assign(static_cast<size_t>(st.rows), 0);
    st.bad_per_col.assign(static_cast<size_t>(st.cols), 0);
    static_assert(sizeof(int64_t) == sizeof(unsigned long long));
    check(cudaMemcpyAsync(st.bad_per_row.data(), rh, sizeof(int64_t) * static_cast<size_t>(st.rows),
                          cudaMemcpyDeviceToHost, s),
          "cudaMemcpyAsync (row histogram)");
    check(cudaMemcpyAsync(st.bad_per_col.data(), ch, sizeof(int64_t) * static_cast<size_t>(st.cols),
                          cudaMemcpyDeviceToHost, s),
          "cudaMemcpyAsync (column histogram)");
    hist.release();
  }
  // Free on the stream, then wait, so nothing of this call is left pending when it returns.
  sums.release();
  parts.release();
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  return st;
}

}  // namespace khive
