// The gemm family's binder: C = act(A @ B + residual + bias), or an epilogue expression of x = A @ B + residual and
// b = bias[column] (and b1, b2, ... = vectors[k][column], "vectors"), batched over one axis or a list of C's leading
// axes (torch.matmul's broadcast of the operands' leading axes), with triangular and symmetric operands.
#include "khive/tuner/bind/common.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace khive::tuner::bind_detail {

namespace {

// The CPU side of a symmetric binding: full copies of S(A), S(B) in static vectors.
constexpr const char* kSymmetricCpu = R"KH(#include <vector>
// Y = S(X) for one n x n stored matrix, in 32 x 32 blocks so that the mirrored reads stay in cache.
static void khive_symmetrize(const khive_t* X, khive_t* Y, int64_t n) {
  constexpr int64_t kB = 32;
  for (int64_t i0 = 0; i0 < n; i0 += kB)
    for (int64_t k0 = 0; k0 < n; k0 += kB)
      for (int64_t i = i0; i < i0 + kB && i < n; ++i)
        for (int64_t k = k0; k < k0 + kB && k < n; ++k) {
          const bool stored = KHIVE_SYMM_UPPER ? i <= k : i >= k;
          Y[i * n + k] = stored ? X[i * n + k] : X[k * n + i];
        }
}
static void khive_symm_prepare(khive_gemm_args& g) {
  static std::vector<khive_t> sa, sb;
  const int64_t n = g.M;
  const size_t elems = static_cast<size_t>(n) * static_cast<size_t>(n);
  if (sa.size() < elems) {
    sa.resize(elems);
    sb.resize(elems);
  }
  khive_symmetrize(g.A, sa.data(), n);
  khive_symmetrize(g.B, sb.data(), n);
  g.A = sa.data();
  g.B = sb.data();
}
)KH";

// The CUDA side: a tiled copy kernel into a buffer kept between calls, or (no memory for it) a direct kernel.
constexpr const char* kSymmetricCuda = R"KH(// S(X)[r, c] read from the stored triangle.
KHIVE_HD float khive_symm_at(const khive_t* X, int64_t r, int64_t c, int64_t n) {
  const bool stored = KHIVE_SYMM_UPPER ? r <= c : r >= c;
  return khive_to_float_t(stored ? X[r * n + c] : X[c * n + r]);
}
// Y = S(X) for A (blockIdx.z 0) and B (1). A 32 x 32 block of Y is its stored block or the transpose of the mirrored
// one: staged through shared memory, so both are read and written coalesced; only diagonal blocks load entries of
// the other triangle, and those are never written out.
static __global__ void __launch_bounds__(256) khive_symm_copy(const khive_t* __restrict__ A, const khive_t* __restrict__ B,
                                                            khive_t* __restrict__ SA, khive_t* __restrict__ SB, int64_t n) {
  __shared__ alignas(16) unsigned char raw[32 * 33 * sizeof(khive_t)];   // raw bytes: khive_t may have a constructor
  khive_t (*tile)[33] = reinterpret_cast<khive_t (*)[33]>(raw);
  const khive_t* X = blockIdx.z ? B : A;
  khive_t* Y = blockIdx.z ? SB : SA;
  const int64_t blocks = (n + 31) / 32;
  for (int64_t bi = blockIdx.y; bi < blocks; bi += gridDim.y)
    for (int64_t bk = blockIdx.x; bk < blocks; bk += gridDim.x) {
      const bool direct = KHIVE_SYMM_UPPER ? bi <= bk : bi >= bk;   // block (bi, bk) is stored itself
      const int64_t r0 = (direct ? bi : bk) * 32, c0 = (direct ? bk : bi) * 32;
      for (int j = threadIdx.y; j < 32; j += 8)
        if (r0 + j < n && c0 + threadIdx.x < n) tile[j][threadIdx.x] = X[(r0 + j) * n + c0 + threadIdx.x];
      __syncthreads();
      for (int j = threadIdx.y; j < 32; j += 8) {
        const int64_t i = bi * 32 + j, k = bk * 32 + threadIdx.x;
        const bool stored = KHIVE_SYMM_UPPER ? i <= k : i >= k;
        if (i < n && k < n) Y[i * n + k] = stored ? tile[j][threadIdx.x] : tile[threadIdx.x][j];
      }
      __syncthreads();
    }
}
// C = the epilogue of S(A) S(B) + R straight from the stored triangles, one thread per element: only when the buffer for the
// copies cannot be had (slow, but the call is still served).
static __global__ void khive_symm_direct(khive_gemm_args g) {
  const int64_t n = g.M;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n * n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e / n, j = e % n;
    float acc = 0.0f;
    for (int64_t k = 0; k < n; ++k) acc = fmaf(khive_symm_at(g.A, i, k, n), khive_symm_at(g.B, k, j, n), acc);
    if constexpr (KHIVE_HAS_RESIDUAL) acc += khive_to_float_t(g.R[i * n + j]);
    g.C[i * g.ldc + j] = khive_from_float_t(khive_epi_at(acc, g, j));
  }
}
// Points g at full copies of S(A), S(B) (false: no memory for them; C was computed by khive_symm_direct instead).
// The buffer grows on demand and is kept; growing frees the old one first (cudaFree waits for its last reader).
static bool khive_symm_prepare(khive_gemm_args& g, cudaStream_t stream) {
  static khive_t* buf = nullptr;
  static size_t cap = 0;   // elements
  const int64_t n = g.M;
  if (n <= 0) return true;
  const size_t elems = size_t(n) * size_t(n);
  if (2 * elems > cap) {
    if (buf) cudaFree(buf);
    buf = nullptr;
    cap = 0;
    if (cudaMalloc(&buf, 2 * elems * sizeof(khive_t)) == cudaSuccess) cap = 2 * elems;
    else {
      buf = nullptr;
      (void)cudaGetLastError();   // the failed allocation is not the kernel's error
    }
  }
  if (!buf) {
    const int64_t want = (int64_t(elems) + 255) / 256;
    khive_symm_direct<<<unsigned(want < 8192 ? want : 8192), 256, 0, stream>>>(g);
    return false;
  }
  const int64_t blocks = (n + 31) / 32;
  const unsigned gb = unsigned(blocks < 65535 ? blocks : 65535);
  khive_symm_copy<<<dim3(gb, gb, 2), dim3(32, 8), 0, stream>>>(g.A, g.B, buf, buf + elems, n);
  g.A = buf;
  g.B = buf + elems;
  return true;
}
)KH";

// The PROLOGUE part of a symmetric binding: khive_symm_prepare(g) writes S(A) and S(B) as full [N, N] matrices into
// a buffer kept between calls and points g at them; the template then runs a plain GEMM. S is its own transpose,
// so the copies read the same whichever layout the binding gives A and B.
std::string symmetric_prologue(const Ctx& c, bool upper) {
  std::string p = fmt::format(
      "// Symmetric operands (binding \"symmetric\": {0}): A and B store one triangle each, S(X)[i, k] = {1}; the "
      "other\n"
      "// triangle is not part of the input and is never read as data. khive_symm_prepare writes the full S(A), S(B)\n"
      "// into a buffer kept between calls (O(N^2) next to the product's O(N^3)) and points the GEMM at them.\n"
      "constexpr bool KHIVE_SYMM_UPPER = {2};\n",
      upper ? "upper" : "lower", upper ? "X[min(i, k), max(i, k)]" : "X[max(i, k), min(i, k)]",
      upper ? "true" : "false");
  return p + (c.backend == Backend::cpu ? kSymmetricCpu : kSymmetricCuda);
}

// The most batch axes a binding lists ("batch": [...]).
constexpr std::size_t kMaxBatchAxes = 8;

// One tensor's strides along the binding's batch axes: C++ (over the ENTRY's khive_M, khive_N, khive_K and the
// launch parameters) and their values on each workload. 0 along an axis the tensor lacks or holds once (size 1):
// torch.matmul's broadcast.
struct BatchStrides {
  std::vector<std::string> cpp;             // per batch axis
  std::vector<std::vector<int64_t>> value;  // [workload][batch axis]
};

// What a gemm binding says, read and checked (bind_gemm's parts share it).
struct Gemm {
  std::string tri, sym;                 // "triangular", "symmetric": none, upper or lower
  std::string la, lb;                   // the task's layouts of A and B: row or col
  std::string la_read;                  // the layout the kernel reads A in (below)
  std::string M, N, K;                  // axis names; M ("(b*i*j)") and K ("(b*s)") text when lists
  std::string batch;                    // "" for none, the axis ("b"), or the list as text ("[b, h]")
  std::vector<std::string> rows;        // C's row axes when M is a list (A [rows..., K], C [rows..., N]); else {M}
  std::vector<std::string> kaxes;       // the summed axes when K is a list (A [*K, M] or [M, *K]); else {K}
  std::vector<std::string> batch_axes;  // C's leading axes the batch runs over (row-major), or none
  std::vector<std::vector<int64_t>> batch_sizes;  // [workload][batch axis]
  BatchStrides sa, sb, sc, sr;                    // A's, B's, C's and the residual's strides along them
  // The batch axes the kernels index, as groups of neighbours folded into one axis (their product, the innermost
  // member's strides); axes of size 1 on every workload are in none. One group (or none): the kernels' single batch
  // stride per operand; more: KHIVE_BATCH_AXES > 1, per-axis strides.
  std::vector<std::vector<std::size_t>> batch_groups;
  std::string act;       // the epilogue's activation ("custom": the epilogue expression)
  std::string epilogue;  // the binding's epilogue: a float expression of x and b ("" for none)
  int act_index = 0;
  const TensorSpec *A = nullptr, *B = nullptr, *C = nullptr, *R = nullptr, *bias = nullptr;
  std::vector<EpilogueVector> vecs;  // the bias (b) and the binding's "vectors" (b1, b2, ...)
};

// The operands, their layouts and the triangular / symmetric forms.
Gemm read_forms(const Ctx& c) {
  Gemm g;
  // triangular: A and B are upper (lower) triangular, their other triangle holds arbitrary values that are not part
  // of the input, and C = triu(A·B) (tril) with its zero triangle written: op gemm_triu / gemm_tril, served only by
  // templates that restrict k per tile and mask the operands (their manifests' "ops").
  // "triangular" and "symmetric" each say none, upper or lower.
  auto upper_lower = [&](const char* key, const std::string& expected) {
    const std::string v = c.has(key) ? c.str(key, true) : "none";
    if (v != "none" && v != "upper" && v != "lower") c.fail(key, expected, "\"" + v + "\"");
    return v;
  };
  g.tri = upper_lower("triangular", "none, upper (A, B upper triangular, C = triu(A·B)) or lower");
  // symmetric: A and B are symmetric matrices stored as one triangle (BLAS SYMM style), S(X)[i, k] =
  // X[min(i, k), max(i, k)] for upper; the other triangle holds arbitrary values. The ENTRY first writes full
  // copies S(A), S(B) into a buffer kept between calls (O(N^2) against the product's O(N^3)) and runs khive_run on
  // them, so every GEMM template serves the task as a plain GEMM (op gemm) and none reads the other triangle.
  g.sym =
      upper_lower("symmetric", "none, upper (S(X)[i, k] = X[min(i, k), max(i, k)]) or lower (X[max(i, k), min(i, k)])");
  if (g.sym != "none" && g.tri != "none") c.fail("triangular", "none with symmetric " + g.sym, "\"" + g.tri + "\"");
  g.A = &c.input("A");
  g.B = &c.input("B");
  g.C = &c.output("C");
  g.la = c.has("layout_a") ? c.str("layout_a", true) : "row";
  g.lb = c.has("layout_b") ? c.str("layout_b", true) : "row";
  if (g.la != "row" && g.la != "col")
    c.fail("layout_a", "row (A is [M, K]) or col (A is stored [K, M])", "\"" + g.la + "\"");
  if (g.lb != "row" && g.lb != "col")
    c.fail("layout_b", "row (B is [K, N]) or col (B is stored [N, K])", "\"" + g.lb + "\"");
  // The symmetric copies read the stored triangle row-major (X[min(i, k), max(i, k)] at X[min * n + max]).
  if (g.sym != "none" && g.la != "row")
    c.fail("layout_a", "row with symmetric " + g.sym + " (the stored triangle is read row-major)", "\"" + g.la + "\"");
  if (g.sym != "none" && g.lb != "row")
    c.fail("layout_b", "row with symmetric " + g.sym + " (the stored triangle is read row-major)", "\"" + g.lb + "\"");
  // The layout the kernel reads A in: the task's, except for symmetric operands on CUDA. There the kernel reads the
  // full copy S(A), whose row-major storage is its column-major storage (S(A)[i, k] = S(A)[k, i]), so it is read as
  // column-major: M-contiguous, what the SIMT mainloops want, at no cost (S(B) read row-major is N-contiguous
  // already). The CPU template stays on the row-major read its loops are written for.
  g.la_read = g.sym != "none" && c.backend == Backend::cuda ? "col" : g.la;
  return g;
}

// Field `field` (M or K): one axis name, or a list of axis names whose product is the GEMM's size there. The names go
// to *axes; returned, the text the messages use ("M", or "(b*i*j)" for a list).
std::string axis_or_list(const Ctx& c, const char* field, std::vector<std::string>& axes) {
  if (!c.has(field) || !c.b.spec[field].is_array()) {
    axes = {c.str(field, true)};
    return axes[0];
  }
  for (const auto& d : c.b.spec[field])
    if (d.is_string() && !d.get<std::string>().empty())
      axes.push_back(d.get<std::string>());
    else
      c.fail(field, "an axis name or a list of axis names", c.b.spec[field].dump());
  if (axes.empty()) c.fail(field, "an axis name or a non-empty list of axis names", "[]");
  return fmt::format("({})", fmt::join(axes, "*"));
}

// The product of the axes' values on one workload (M's rows, K's axes).
int64_t axes_product(const AxisValues& ax, const std::vector<std::string>& names) {
  int64_t n = 1;
  for (const auto& a : names) n *= axis_value(ax, a);
  return n;
}

// The axes, shapes, residual and activation; every task tensor bound.
void read_shapes(const Ctx& c, Gemm& g) {
  const TensorSpec &A = *g.A, &B = *g.B, &C = *g.C;
  // M: one axis, or a list of C's leading axes (torch.matmul of an N-D tensor and a matrix: A [b, i, j, K] @ B
  // [K, N] = C [b, i, j, N]), whose product is the GEMM's M; those rows are A's and C's leading axes, row-major.
  g.M = axis_or_list(c, "M", g.rows);
  g.N = c.str("N", true);
  // K: one axis, or a list of axes whose product is the GEMM's K (a weight's gradient over a batch of rows: A =
  // grad_out [b, s, M] read transposed, B = x [b, s, N], K = [b, s]); each operand holds them together, row-major,
  // where it holds K.
  g.K = axis_or_list(c, "K", g.kaxes);
  // batch: one axis of C, or a list of C's leading axes (torch.matmul of N-D operands: [*batch, M, K] @
  // [*batch, K, N] = [*batch, M, N]).
  if (c.has("batch") && c.b.spec["batch"].is_array()) {
    const json& bl = c.b.spec["batch"];
    if (bl.empty() || bl.size() > kMaxBatchAxes)
      c.fail("batch", fmt::format("an axis name or a list of 1 to {} axis names (C's leading axes)", kMaxBatchAxes),
             bl.dump());
    for (std::size_t i = 0; i < bl.size(); ++i) {
      const std::string f = fmt::format("batch[{}]", i);
      if (!bl[i].is_string() || bl[i].get<std::string>().empty()) c.fail(f, "an axis name", bl[i].dump());
      const std::string a = bl[i].get<std::string>();
      if (std::find(g.batch_axes.begin(), g.batch_axes.end(), a) != g.batch_axes.end())
        c.fail(f, "an axis not listed before in batch", "\"" + a + "\"");
      g.batch_axes.push_back(a);
    }
    g.batch = shape_text(g.batch_axes);
  } else {
    g.batch = c.str("batch", false);
    if (!g.batch.empty()) g.batch_axes = {g.batch};
  }
  const std::string &M = g.M, &N = g.N, &batch = g.batch;
  if (g.rows.size() > 1) {
    if (g.la != "row") c.fail("layout_a", "row when M is a list of axes (A is [rows..., K])", "\"" + g.la + "\"");
    if (!batch.empty())
      c.fail("batch", "nothing when M is a list of axes (they are C's leading axes)", "\"" + batch + "\"");
    if (g.tri != "none" || g.sym != "none")
      c.fail(g.tri != "none" ? "triangular" : "symmetric", "none when M is a list of axes", "square operands");
  }
  if (g.kaxes.size() > 1) {
    if (g.rows.size() > 1) c.fail("K", "one axis when M is a list of axes", c.b.spec["K"].dump());
    if (!batch.empty()) c.fail("batch", "nothing when K is a list of axes", "\"" + batch + "\"");
    if (g.tri != "none" || g.sym != "none")
      c.fail(g.tri != "none" ? "triangular" : "symmetric", "none when K is a list of axes", "square operands");
  }
  // K's axes where an operand holds K.
  auto with_k = [&](std::vector<std::string> before, const std::vector<std::string>& after) {
    before.insert(before.end(), g.kaxes.begin(), g.kaxes.end());
    before.insert(before.end(), after.begin(), after.end());
    return before;
  };
  // dims of a [M, last] operand: C's row axes, then last.
  auto rows_then = [&](const std::string& last) {
    std::vector<std::string> d = g.rows;
    d.push_back(last);
    return d;
  };
  for (const auto* t : {&A, &B, &C})
    if (t->dtype != C.dtype || !is_float_storage(t->dtype))
      c.fail(t == &A   ? "A"
             : t == &B ? "B"
                       : "C",
             "float32, bfloat16 or float16 tensors of one dtype", std::string(dtype_name(t->dtype)));
  const std::size_t nb = g.batch_axes.size();
  const auto axes = resolved(c.task);
  const std::size_t nw = axes.size();
  for (const auto& ax : axes) {
    std::vector<int64_t> sizes;
    for (const auto& b : g.batch_axes) sizes.push_back(axis_value(ax, b));
    g.batch_sizes.push_back(std::move(sizes));
  }
  // The elements of one matrix of A, B and C (or the residual) per workload, and in the ENTRY's C++.
  std::vector<int64_t> mk, kn, mn;
  for (const auto& ax : axes) {
    const int64_t m = axes_product(ax, g.rows), k = axes_product(ax, g.kaxes);
    mk.push_back(m * k);
    kn.push_back(k * axis_value(ax, N));
    mn.push_back(m * axis_value(ax, N));
  }
  // An operand [*lead, dims...]: lead aligned at the end of the batch axes (torch.matmul's rule), each lead axis the
  // batch axis itself, or one of size 1 (read again for every index of the batch axis: stride 0) or of the batch
  // axis' size on every workload; the batch axes before lead are ones the operand lacks (shared along them).
  auto operand = [&](const char* key, const TensorSpec& t, const std::vector<std::string>& dims,
                     const std::string& mat_cpp, const std::vector<int64_t>& mat) {
    std::vector<std::string> want = g.batch_axes;
    want.insert(want.end(), dims.begin(), dims.end());
    const std::string expected =
        "shape " + shape_text(want) +
        (nb ? " (its leading batch axes may be left out, or be of size 1 or the batch axis' size on every workload, "
              "as torch.matmul broadcasts)"
            : "");
    // An axis of another name but the same size on every workload is that axis (a copy's head_dim where the
    // weight says kv_proj_size = num_key_value_heads * head_dim, with one KV head).
    auto same = [&](const std::string& a, const std::string& b) {
      return a == b || std::all_of(axes.begin(), axes.end(),
                                   [&](const AxisValues& ax) { return axis_value(ax, a) == axis_value(ax, b); });
    };
    if (t.shape.size() < dims.size() || t.shape.size() > dims.size() + nb ||
        !std::equal(dims.rbegin(), dims.rend(), t.shape.rbegin(), same))
      c.fail(key, expected, shape_text(t.shape));
    const std::size_t lead = t.shape.size() - dims.size(), first = nb - lead;  // lead axis p is batch axis first + p
    BatchStrides s;
    s.cpp.assign(nb, "0");
    s.value.assign(nw, std::vector<int64_t>(nb, 0));
    for (std::size_t j = first; j < nb; ++j) {
      const std::size_t p = j - first;
      const std::string& name = t.shape[p];
      // Its stride as stored: the operand's later lead axes times one matrix.
      std::string natural;
      for (std::size_t q = p + 1; q < lead; ++q) natural += axis_cpp(c.task, t.shape[q]) + " * ";
      natural += mat_cpp;
      bool same = true, one = true;
      for (std::size_t w = 0; w < nw; ++w) {
        const int64_t vt = axis_value(axes[w], name), vb = g.batch_sizes[w][j];
        if (vt != vb && vt != 1)
          c.fail(key, expected,
                 fmt::format("{} ({} = {} where batch axis {} is {}, workload {})", shape_text(t.shape), name, vt,
                             g.batch_axes[j], vb, c.task.workloads[w].uuid));
        same = same && vt == vb;
        one = one && vt == 1;
      }
      const bool by_name = name == g.batch_axes[j];
      s.cpp[j] = by_name || same ? natural
                 : one           ? "0"
                                 : fmt::format("({} == 1 ? int64_t(0) : {})", axis_cpp(c.task, name), natural);
      for (std::size_t w = 0; w < nw; ++w) {
        int64_t nat = mat[w];
        for (std::size_t q = p + 1; q < lead; ++q) nat *= axis_value(axes[w], t.shape[q]);
        s.value[w][j] = by_name || same ? nat : one || axis_value(axes[w], name) == 1 ? 0 : nat;
      }
    }
    return s;
  };
  g.sa = operand("A", A, g.la == "row" ? with_k(g.rows, {}) : with_k({}, {M}), "khive_M * khive_K", mk);
  g.sb = operand("B", B, g.lb == "row" ? with_k({}, {N}) : with_k({N}, {}), "khive_K * khive_N", kn);
  // C is [*batch, rows, N], row-major.
  std::vector<std::string> c_want = g.batch_axes;
  for (const auto& d : rows_then(N)) c_want.push_back(d);
  if (C.shape != c_want) c.fail("C", "shape " + shape_text(c_want), shape_text(C.shape));
  g.sc = operand("C", C, rows_then(N), "khive_M * khive_N", mn);
  if (c.has("residual")) {
    g.R = &c.input("residual");
    if (g.R->dtype != C.dtype) c.fail("residual", "C's dtype", std::string(dtype_name(g.R->dtype)));
    g.sr = operand("residual", *g.R, rows_then(N), "khive_M * khive_N", mn);
  }
  // The kernels' batch axes: neighbours folded where every tensor reads them as one run (the outer's stride the
  // inner's times the inner's size, wherever the outer's size is not 1), axes of size 1 everywhere dropped (one
  // axis alone is kept as it is).
  std::vector<const BatchStrides*> tensors{&g.sa, &g.sb, &g.sc};
  if (g.R) tensors.push_back(&g.sr);
  auto joins = [&](const std::vector<std::size_t>& grp, std::size_t j) {
    for (std::size_t w = 0; w < nw; ++w)
      for (const std::size_t k : grp) {
        int64_t span = 1;  // the sizes of the axes after k up to j
        for (std::size_t l = k + 1; l <= j; ++l) span *= g.batch_sizes[w][l];
        if (g.batch_sizes[w][k] == 1) continue;
        for (const auto* t : tensors)
          if (t->value[w][k] != t->value[w][j] * span) return false;
      }
    return true;
  };
  for (std::size_t j = 0; j < nb; ++j) {
    const bool ones = std::all_of(g.batch_sizes.begin(), g.batch_sizes.end(),
                                  [&](const std::vector<int64_t>& sz) { return sz[j] == 1; });
    if (ones && nb > 1) continue;
    if (!g.batch_groups.empty() && joins(g.batch_groups.back(), j))
      g.batch_groups.back().push_back(j);
    else
      g.batch_groups.push_back({j});
  }
  // bias: a vector over C's columns ([N]), shared by every row and batch entry; "vectors" (with an epilogue): more
  // of them, b1, b2, ...; each may also be one value for all of C (every axis 1: a 0-d parameter), read at [0].
  g.vecs = epilogue_vectors(c, "bias", C.dtype, true);
  if (!g.vecs.empty()) g.bias = g.vecs[0].t;
  for (const auto& v : g.vecs)
    if (!v.one && v.t->shape != std::vector<std::string>{N} && v.t->shape != std::vector<std::string>{"1", N})
      c.fail(v.field, "shape [" + N + "] (one value per column of C), or one value for all of C (every axis 1)",
             "[" + fmt::format("{}", fmt::join(v.t->shape, ", ")) + "]");
  static const std::vector<std::string> acts{"none", "relu", "gelu", "gelu_tanh", "silu"};
  g.act = c.has("activation") ? c.str("activation", true) : "none";
  const auto act_it = std::find(acts.begin(), acts.end(), g.act);
  g.act_index = static_cast<int>(act_it - acts.begin());
  if (act_it == acts.end()) c.fail("activation", "none, relu, gelu, gelu_tanh or silu", "\"" + g.act + "\"");
  // epilogue: C = epilogue(x, b) with x = A @ B (+ residual) and b = bias[column] (0 without a bias); the bias is
  // added only where the expression adds it. In place of "activation".
  if (c.has("epilogue")) {
    if (c.has("activation"))
      c.fail("activation", "nothing next to an epilogue (it says the whole of C)", "\"" + g.act + "\"");
    g.epilogue = op_text(c, "epilogue");
    if (g.epilogue.find_first_not_of(" \t") == std::string::npos)
      c.fail("epilogue", "a C++ expression of x and b", "\"\"");
    g.act = "custom";
    g.act_index = 5;
  }
  std::set<std::string> covered{A.name, B.name, C.name};
  if (g.R) covered.insert(g.R->name);
  for (const auto& v : g.vecs) covered.insert(v.t->name);
  for (const auto& t : c.task.inputs)
    if (!covered.count(t.name))
      c.fail("residual", "every input of the task bound (A, B, residual, bias)", "\"" + t.name + "\" left out");
  if (c.task.outputs.size() != 1)
    c.fail("C", "a task with exactly one output", std::to_string(c.task.outputs.size()) + " outputs");

  // A triangular product has no epilogue: act(0) + residual would fill the zero triangle with something else.
  if (g.tri != "none" && g.R) c.fail("residual", "no residual with triangular " + g.tri, "\"" + g.R->name + "\"");
  if (g.tri != "none" && g.act != "none")
    c.fail(g.epilogue.empty() ? "activation" : "epilogue", "none with triangular " + g.tri, "\"" + g.act + "\"");
  if (g.tri != "none" && g.bias) c.fail("bias", "no bias with triangular " + g.tri, "\"" + g.bias->name + "\"");
  // The symmetric copies are per matrix: one [N, N] operand each, not a batch of them.
  if (g.sym != "none" && !batch.empty()) c.fail("batch", "no batch with symmetric " + g.sym, "\"" + batch + "\"");
}

std::string gemm_prologue(const Ctx& c, const Gemm& g) {
  const std::size_t axes = std::max<std::size_t>(g.batch_groups.size(), 1);
  const bool scalars = std::any_of(g.vecs.begin(), g.vecs.end(), [](const EpilogueVector& v) { return v.scalar; });
  std::string p = typed_prologue(c, g.C->dtype);
  p += fmt::format("constexpr bool KHIVE_A_ROW = {}, KHIVE_B_ROW = {}, KHIVE_HAS_RESIDUAL = {}, KHIVE_HAS_BIAS = {};\n",
                   g.la_read == "row", g.lb == "row", g.R != nullptr, g.bias != nullptr);
  p +=
      "enum { KHIVE_ACT_NONE = 0, KHIVE_ACT_RELU = 1, KHIVE_ACT_GELU = 2, KHIVE_ACT_GELU_TANH = 3, KHIVE_ACT_SILU = 4, "
      "KHIVE_ACT_CUSTOM = 5 };\n";
  p += fmt::format("constexpr int KHIVE_ACT = {};   // {}\n", g.act_index, g.act);
  p += "// Triangular operands (op gemm_triu / gemm_tril): A[i, k], B[k, j] outside the triangle read as 0, C's other\n"
       "// triangle written as 0. Upper: C[i, j] = sum over i <= k <= j; lower: over j <= k <= i.\n";
  p += "enum { KHIVE_TRI_NONE = 0, KHIVE_TRI_UPPER = 1, KHIVE_TRI_LOWER = 2 };\n";
  p += fmt::format("constexpr int KHIVE_TRI = {};   // {}\n", g.tri == "upper" ? 1 : g.tri == "lower" ? 2 : 0, g.tri);
  // With more vectors than the bias, the epilogue takes them as one khive_epi_vals (b, b1, b2, ...).
  const bool more = g.vecs.size() > 1;
  if (more)
    p += epilogue_vals_cpp(g.vecs) +
         "// The binding's epilogue: C[i, j] from x = acc (+ residual), b = bias[j], b1, ... = vectors[k][j].\n"
         "KHIVE_HD float khive_epi_v(float x, const khive_epi_vals& v) {\n  (void)x;\n" +
         epilogue_names_cpp(g.vecs.size(), "v") + "  return " + g.epilogue + ";\n}\n";
  else if (!g.epilogue.empty())
    p += "// The binding's epilogue: C[i, j] from x = acc (+ residual) and b = bias[j] (0 without a bias).\n"
         "KHIVE_HD float khive_epi(float x, float b) {\n  (void)x; (void)b;\n  return " +
         g.epilogue + ";\n}\n";
  p += "// The epilogue's activation, applied to acc (+ residual when the task has one).\n"
       "KHIVE_HD float khive_act(float v) {\n"
       "  if constexpr (KHIVE_ACT == KHIVE_ACT_RELU) return v > 0.0f ? v : 0.0f;\n"
       "  else if constexpr (KHIVE_ACT == KHIVE_ACT_GELU) return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));\n"
       "  else if constexpr (KHIVE_ACT == KHIVE_ACT_GELU_TANH) return 0.5f * v * (1.0f + tanhf(0.79788456080286536f * "
       "(v + 0.044715f * v * v * v)));\n"
       "  else if constexpr (KHIVE_ACT == KHIVE_ACT_SILU) return v / (1.0f + expf(-v));\n";
  if (more)  // (unreached: vectors come with a bias, and then every template calls khive_epi_at)
    p += "  else if constexpr (KHIVE_ACT == KHIVE_ACT_CUSTOM) return khive_epi_v(v, khive_epi_vals{});\n";
  else if (!g.epilogue.empty())
    p += "  else if constexpr (KHIVE_ACT == KHIVE_ACT_CUSTOM) return khive_epi(v, 0.0f);\n";
  p += "  else return v;\n}\n";
  if (g.epilogue.empty()) p += "KHIVE_HD float khive_epi(float x, float b) { return khive_act(x + b); }\n";
  p += "// Element (i, k) of A is A[i * a_rs + k * a_cs] (and so on): any layout, one code path.\n"
       "struct khive_gemm_args {\n  const khive_t* A; const khive_t* B; const khive_t* R; khive_t* C;\n"
       "  int64_t M, N, K, batch;\n  int64_t a_rs, a_cs, b_rs, b_cs, ldc;   // strides in elements\n"
       "  int64_t a_bs, b_bs, c_bs, r_bs;       // batch strides (0: shared across the batch)\n"
       "  const khive_t* bias;                  // [N], or nullptr\n" +
       (more ? fmt::format("  const khive_t* vecs[{}];               // b1, b2, ... of the epilogue\n",
                           g.vecs.size() - 1)
             : std::string()) +
       (scalars ? fmt::format("  float scal[{}];                        // the epilogue's scalar inputs (b, b1, ...)\n",
                              g.vecs.size())
                : std::string()) +
       (axes > 1 ? fmt::format("  int64_t bdim[{0}], a_bst[{0}], b_bst[{0}], c_bst[{0}], r_bst[{0}];   // the batch's "
                               "axes (row-major), each tensor's strides along them\n",
                               axes)
                 : std::string()) +
       "};\n";
  // Where batch entry z's matrices start: one batch axis (or several folded into one), z times each tensor's batch
  // stride; a batch over several axes that do not fold (an operand broadcast along an inner one: GQA's K read for
  // every query head), z's coordinates over bdim times each tensor's strides along them.
  p += fmt::format("constexpr int KHIVE_BATCH_AXES = {};   // the batch's axes as the kernels index them\n", axes);
  p += "// Batch entry z's first elements in A, B, C and R.\nstruct khive_boffs { int64_t a, b, c, r; };\n"
       "KHIVE_HD khive_boffs khive_batch_at(const khive_gemm_args& g, int64_t z) {\n";
  if (axes > 1)
    p += "  khive_boffs o{0, 0, 0, 0};\n"
         "  for (int d = KHIVE_BATCH_AXES - 1; d >= 0; --d) {\n"
         "    const int64_t i = z % g.bdim[d];\n"
         "    z /= g.bdim[d];\n"
         "    o.a += i * g.a_bst[d];\n    o.b += i * g.b_bst[d];\n    o.c += i * g.c_bst[d];\n    o.r += i * "
         "g.r_bst[d];\n"
         "  }\n  return o;\n}\n";
  else
    p += "  return khive_boffs{z * g.a_bs, z * g.b_bs, z * g.c_bs, z * g.r_bs};\n}\n";
  // A vector's element of column j ([0]: one value for all of C).
  auto at = [&](std::size_t k) {
    if (g.vecs[k].scalar) return fmt::format("g.scal[{}]", k);
    return fmt::format("khive_to_float_t({}[{}])", k ? fmt::format("g.vecs[{}]", k - 1) : std::string("g.bias"),
                       g.vecs[k].one ? "0" : "j");
  };
  p += "// C[., j] from v = acc (+ residual): what every template stores (j: the column).\n"
       "KHIVE_HD float khive_epi_at(float v, const khive_gemm_args& g, int64_t j) {\n";
  if (more) {
    p += "  if constexpr (KHIVE_HAS_BIAS) {\n    khive_epi_vals e{};\n";
    for (std::size_t k = 0; k < g.vecs.size(); ++k) p += fmt::format("    e.b[{}] = {};\n", k, at(k));
    p += "    return khive_epi_v(v, e);\n  } else {\n    return khive_act(v);\n  }\n}\n";
  } else {
    p += fmt::format("  if constexpr (KHIVE_HAS_BIAS) return khive_epi(v, {});\n",
                     g.vecs.empty() ? std::string("khive_to_float_t(g.bias[j])") : at(0)) +
         "  else return khive_act(v);\n}\n";
  }
  if (g.sym != "none") p += symmetric_prologue(c, g.sym == "upper");
  return p;
}

std::string gemm_entry(const Ctx& c, const Gemm& g) {
  const std::string m = g.rows.size() > 1 ? shape_product_cpp(c.task, g.rows) : axis_cpp(c.task, g.M),
                    n = axis_cpp(c.task, g.N),
                    k = g.kaxes.size() > 1 ? shape_product_cpp(c.task, g.kaxes) : axis_cpp(c.task, g.K);
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format("  const int64_t khive_M = {}, khive_N = {}, khive_K = {}, khive_batch = {};\n", m, n, k,
                   g.batch_axes.empty()       ? "int64_t(1)"
                   : g.batch_axes.size() == 1 ? axis_cpp(c.task, g.batch_axes[0])
                                              : shape_product_cpp(c.task, g.batch_axes));
  e += "  khive_gemm_args khive_g{};\n";
  e += fmt::format("  khive_g.A = {}; khive_g.B = {}; khive_g.R = {}; khive_g.C = {}; khive_g.bias = {};\n", g.A->name,
                   g.B->name, g.R ? g.R->name : "nullptr", g.C->name,
                   g.bias && !g.vecs[0].scalar ? g.bias->name : "nullptr");
  for (std::size_t k = 1; k < g.vecs.size(); ++k)
    e += fmt::format("  khive_g.vecs[{}] = {};\n", k - 1, g.vecs[k].scalar ? "nullptr" : g.vecs[k].t->name);
  for (std::size_t k = 0; k < g.vecs.size(); ++k)  // a scalar input of the epilogue: its value
    if (g.vecs[k].scalar) e += fmt::format("  khive_g.scal[{}] = float({});\n", k, g.vecs[k].t->name);
  e += "  khive_g.M = khive_M; khive_g.N = khive_N; khive_g.K = khive_K; khive_g.batch = khive_batch;\n";
  e += g.la_read == "row" ? "  khive_g.a_rs = khive_K; khive_g.a_cs = 1;\n"
                          : "  khive_g.a_rs = 1; khive_g.a_cs = khive_M;\n";
  e +=
      g.lb == "row" ? "  khive_g.b_rs = khive_N; khive_g.b_cs = 1;\n" : "  khive_g.b_rs = 1; khive_g.b_cs = khive_K;\n";
  e += "  khive_g.ldc = khive_N;\n";
  // A tensor's stride along batch axis j (C++), "0" for a residual the binding lacks.
  auto at = [&](const BatchStrides& s, std::size_t j) { return s.cpp.empty() ? std::string("0") : s.cpp[j]; };
  if (g.batch_groups.size() <= 1) {
    // One batch axis: each tensor's stride along it (its innermost axis' for several folded into one).
    const bool one = g.batch_groups.size() == 1;
    const std::size_t j = one ? g.batch_groups[0].back() : 0;
    e += fmt::format("  khive_g.a_bs = {}; khive_g.b_bs = {}; khive_g.c_bs = {}; khive_g.r_bs = {};\n",
                     one ? at(g.sa, j) : "0", one ? at(g.sb, j) : "0", one ? at(g.sc, j) : "khive_M * khive_N",
                     one && g.R ? at(g.sr, j) : "0");
  } else {
    e += "  // the batch over axes that do not fold into one: per-axis strides (khive_batch_at)\n";
    e += "  khive_g.a_bs = 0; khive_g.b_bs = 0; khive_g.c_bs = 0; khive_g.r_bs = 0;\n";
    for (std::size_t d = 0; d < g.batch_groups.size(); ++d) {
      const auto& grp = g.batch_groups[d];
      std::vector<std::string> names;
      for (const std::size_t j : grp) names.push_back(g.batch_axes[j]);
      const std::size_t j = grp.back();
      e += fmt::format(
          "  khive_g.bdim[{0}] = {1}; khive_g.a_bst[{0}] = {2}; khive_g.b_bst[{0}] = {3}; khive_g.c_bst[{0}] = {4}; "
          "khive_g.r_bst[{0}] = {5};\n",
          d, names.size() == 1 ? axis_cpp(c.task, names[0]) : shape_product_cpp(c.task, names), at(g.sa, j),
          at(g.sb, j), at(g.sc, j), g.R ? at(g.sr, j) : "0");
    }
  }
  if (g.sym != "none")
    e += c.backend == Backend::cuda
             ? "  if (!khive_symm_prepare(khive_g, stream)) return;   // no buffer: C computed directly through S\n"
             : "  khive_symm_prepare(khive_g);\n";
  e += fmt::format("  khive_run(khive_g{});\n}}\n", launch_args_tail(c.backend));
  return e;
}

// One line: "C = gelu(A @ B^T + bias) (MxNxK, bfloat16)"; symmetric and triangular products say so.
std::string gemm_summary(const Gemm& g, const std::string& dtype) {
  const std::string &M = g.M, &N = g.N, &K = g.K, &batch = g.batch, &act = g.act, &tri = g.tri, &sym = g.sym,
                    &la = g.la, &lb = g.lb;
  const TensorSpec &A = *g.A, &B = *g.B, &C = *g.C, *R = g.R;
  // x = A @ B (+ R); C = act(x + bias), or the binding's epilogue of x and b = bias[column].
  const std::string x = fmt::format("{}{} @ {}{}{}", A.name, la == "col" ? "^T" : "", B.name, lb == "col" ? "^T" : "",
                                    R ? " + " + R->name : std::string());
  const std::string batched =
      batch.empty() ? ""
                    : ", batch " + batch +
                          (g.batch_groups.size() > 1 ? fmt::format(" over {} strided axes", g.batch_groups.size())
                                                     : std::string());
  const std::string dims = fmt::format("{}x{}x{}{}, {}", M, N, K, batched, dtype);
  const std::string bias = g.bias ? g.bias->name : std::string();
  std::string summary = act == "custom" ? fmt::format("{} = epilogue(x = {}{}{}) ({}): {}", C.name, x,
                                                      bias.empty()    ? ""
                                                      : g.vecs[0].one ? ", b = " + bias
                                                                      : ", b = " + bias + "[column]",
                                                      g.vecs.size() > 1 ? vectors_text(g.vecs) : "", dims, g.epilogue)
                        : act == "none"
                            ? fmt::format("{} = {}{} ({})", C.name, x, bias.empty() ? "" : " + " + bias, dims)
                            : fmt::format("{} = {}({}{}) ({})", C.name, act, x, bias.empty() ? "" : " + " + bias, dims);
  if (sym != "none")
    summary = fmt::format("{} = {}S({}) @ S({}){}{} of symmetric operands stored as their {} triangles ({}x{}x{}, {})",
                          C.name, act == "none" ? "" : act + "(", A.name, B.name, R ? " + " + R->name : std::string(),
                          act == "none" ? "" : ")", sym, M, N, K, dtype);
  if (tri != "none")
    summary = fmt::format("{} = {}({}{} @ {}{}) of {} triangular operands ({}x{}x{}{}, {})", C.name,
                          tri == "upper" ? "triu" : "tril", A.name, la == "col" ? "^T" : "", B.name,
                          lb == "col" ? "^T" : "", tri, M, N, K, batched, dtype);
  return summary;
}

}  // namespace

BoundTask bind_gemm(const Ctx& c) {
  c.check_keys({"description", "A", "B", "C", "layout_a", "layout_b", "M", "N", "K", "batch", "residual", "bias",
                "vectors", "activation", "epilogue", "triangular", "symmetric"});
  BoundTask bt;
  Gemm g = read_forms(c);
  read_shapes(c, g);
  // gemm_epilogue: a bias or an epilogue expression, which the templates that compute their epilogue per element
  // serve (the sm90 template maps named activations onto CUTLASS's fused epilogue and has neither).
  bt.op = g.tri == "upper"                ? "gemm_triu"
          : g.tri == "lower"              ? "gemm_tril"
          : g.bias || !g.epilogue.empty() ? "gemm_epilogue"
                                          : "gemm";
  const std::string &M = g.M, &N = g.N, &K = g.K, &tri = g.tri, &sym = g.sym, &act = g.act;
  const std::string &la_read = g.la_read, &lb = g.lb;
  const TensorSpec &C = *g.C, *R = g.R;
  for (std::size_t i = 0; i < c.task.workloads.size(); ++i) {
    const auto ax = resolve_axes(c.task, c.task.workloads[i]);
    auto v = [&](const std::string& n) { return axis_value(ax, n); };
    const int64_t m = axes_product(ax, g.rows), k = axes_product(ax, g.kaxes);  // C's row axes, K's axes
    int64_t nbatch = 1;  // the batch entries: the product of its axes
    for (const int64_t s : g.batch_sizes[i]) nbatch *= s;
    // Triangular and symmetric operands (never both) are square.
    if ((tri != "none" || sym != "none") && (m != v(N) || k != v(N)))
      c.fail(tri != "none" ? "triangular" : "symmetric",
             tri != "none" ? "square operands (M = N = K) for a triangular product"
                           : "square operands (M = N = K) for symmetric operands",
             fmt::format("{} = {}, {} = {}, {} = {} on workload {}", M, m, N, v(N), K, k, c.task.workloads[i].uuid));
    add_workload(bt, c, i,
                 {{"M", m},
                  {"N", v(N)},
                  {"K", k},
                  {"BATCH", nbatch},
                  {"BATCH_AXES", static_cast<int64_t>(std::max<std::size_t>(g.batch_groups.size(), 1))},
                  {"ELEM_BYTES", static_cast<int64_t>(dtype_size(C.dtype))},
                  {"A_ROW", la_read == "row"},
                  {"B_ROW", lb == "row"},
                  {"HAS_RESIDUAL", R != nullptr},
                  {"HAS_ACTIVATION", act != "none"},
                  {"HAS_BIAS", g.bias != nullptr},
                  {"CUSTOM_EPILOGUE", act == "custom"},
                  {"TRI", tri == "upper"   ? 1
                          : tri == "lower" ? 2
                                           : 0}});
  }

  bt.placeholders["PROLOGUE"] = gemm_prologue(c, g);
  bt.placeholders["ENTRY"] = gemm_entry(c, g);
  bt.dtype = std::string(dtype_name(C.dtype));
  // CUTLASS's element type and layouts, for the CUTLASS templates.
  bt.placeholders["CUTLASS_ELEMENT"] = C.dtype == DType::bf16  ? "cutlass::bfloat16_t"
                                       : C.dtype == DType::f16 ? "cutlass::half_t"
                                                               : "float";
  bt.placeholders["CUTLASS_LAYOUT_A"] = la_read == "row" ? "cutlass::layout::RowMajor" : "cutlass::layout::ColumnMajor";
  bt.placeholders["CUTLASS_LAYOUT_B"] = lb == "row" ? "cutlass::layout::RowMajor" : "cutlass::layout::ColumnMajor";
  bt.summary = gemm_summary(g, bt.dtype);
  return bt;
}

}  // namespace khive::tuner::bind_detail
