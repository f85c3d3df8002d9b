// The generated translation unit: prelude, the task's khive_launch declaration, the candidate (by
// #include, so the compiler reports the candidate's own file and lines), and the khive_entry shim.
#include <set>
#include <string>

#include <fmt/format.h>

#include "khive/compile/builder.hpp"

namespace khive {
namespace {

// CPU storage types and conversions, emitted only for the dtypes a task uses. Conversions round to
// nearest even. Overflow: f16 -> inf (IEEE, like __half(float)); fp8 and fp4 saturate to the largest
// finite value (like the CUDA constructors, which use __NV_SATFINITE). bf16 keeps inf.
constexpr const char* kCpuMinifloat = R"(#include <cmath>
#include <cstring>
#include <limits>
// khive: generic minifloat <-> float (sign, exponent, mbits mantissa bits, bias). specials: 0 none,
// 1 IEEE (all-ones exponent = inf/nan), 2 "fn" (only all-ones exponent and mantissa = nan).
inline float khive_minifloat_to_float(uint32_t bits, int total_bits, int mbits, int bias, int specials) {
  const int ebits = total_bits - 1 - mbits;
  const uint32_t emax = (1u << ebits) - 1, mmax = (1u << mbits) - 1;
  const uint32_t e = (bits >> mbits) & emax, m = bits & mmax;
  const bool neg = (bits >> (total_bits - 1)) & 1u;
  double v;
  if (specials == 1 && e == emax) v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (specials == 2 && e == emax && m == mmax) v = std::numeric_limits<double>::quiet_NaN();
  else if (e == 0) v = std::ldexp(static_cast<double>(m), 1 - bias - mbits);
  else v = std::ldexp(static_cast<double>(m | (1u << mbits)), static_cast<int>(e) - bias - mbits);
  return static_cast<float>(neg ? -v : v);
}
inline uint32_t khive_float_to_minifloat(float f, int total_bits, int mbits, int bias, uint32_t max_finite,
                                         uint32_t overflow_bits, uint32_t nan_bits) {
  const uint32_t sign = std::signbit(f) ? (1u << (total_bits - 1)) : 0u;
  if (std::isnan(f)) return sign | nan_bits;
  if (std::isinf(f)) return sign | overflow_bits;
  const double a = std::fabs(static_cast<double>(f));
  const int emin = 1 - bias;
  uint64_t mag;
  if (a < std::ldexp(1.0, emin)) {
    mag = static_cast<uint64_t>(std::nearbyint(std::ldexp(a, mbits - emin)));   // subnormal (may round up to the smallest normal)
  } else {
    int e;
    std::frexp(a, &e);
    e -= 1;   // a in [2^e, 2^(e+1))
    uint64_t m = static_cast<uint64_t>(std::nearbyint(std::ldexp(a, mbits - e)));
    if (m == (uint64_t{1} << (mbits + 1))) { m >>= 1; ++e; }
    mag = (static_cast<uint64_t>(e + bias) << mbits) | (m - (uint64_t{1} << mbits));
  }
  return mag > max_finite ? (sign | overflow_bits) : (sign | static_cast<uint32_t>(mag));
}
)";

constexpr const char* kCpuBf16 = R"(struct khive_bf16 { uint16_t bits; };
inline float khive_bf16_to_float(khive_bf16 v) { uint32_t u = static_cast<uint32_t>(v.bits) << 16; float f; std::memcpy(&f, &u, 4); return f; }
inline khive_bf16 khive_float_to_bf16(float f) {
  uint32_t u; std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return khive_bf16{static_cast<uint16_t>((u >> 16) | 0x0040u)};   // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);   // round to nearest even
  return khive_bf16{static_cast<uint16_t>(u >> 16)};
}
)";

constexpr const char* kCpuF16 = R"(struct khive_f16 { uint16_t bits; };
inline float khive_f16_to_float(khive_f16 v) { return khive_minifloat_to_float(v.bits, 16, 10, 15, 1); }
inline khive_f16 khive_float_to_f16(float f) { return khive_f16{static_cast<uint16_t>(khive_float_to_minifloat(f, 16, 10, 15, 0x7bffu, 0x7c00u, 0x7e00u))}; }
)";

constexpr const char* kCpuE4m3 =
    R"(struct khive_fp8_e4m3 { uint8_t bits; };   // float8_e4m3fn: no inf, nan = 0x7f, max 448
inline float khive_fp8_e4m3_to_float(khive_fp8_e4m3 v) { return khive_minifloat_to_float(v.bits, 8, 3, 7, 2); }
inline khive_fp8_e4m3 khive_float_to_fp8_e4m3(float f) { return khive_fp8_e4m3{static_cast<uint8_t>(khive_float_to_minifloat(f, 8, 3, 7, 0x7eu, 0x7eu, 0x7fu))}; }
)";

constexpr const char* kCpuE5m2 = R"(struct khive_fp8_e5m2 { uint8_t bits; };   // float8_e5m2: IEEE-like, max 57344
inline float khive_fp8_e5m2_to_float(khive_fp8_e5m2 v) { return khive_minifloat_to_float(v.bits, 8, 2, 15, 1); }
inline khive_fp8_e5m2 khive_float_to_fp8_e5m2(float f) { return khive_fp8_e5m2{static_cast<uint8_t>(khive_float_to_minifloat(f, 8, 2, 15, 0x7bu, 0x7bu, 0x7fu))}; }
)";

constexpr const char* kCpuE2m1 =
    R"(struct khive_fp4_e2m1 { uint8_t bits; };   // low 4 bits: float4_e2m1fn, max 6, no inf/nan
inline float khive_fp4_e2m1_to_float(khive_fp4_e2m1 v) { return khive_minifloat_to_float(v.bits & 0xfu, 4, 1, 1, 0); }
inline khive_fp4_e2m1 khive_float_to_fp4_e2m1(float f) { return khive_fp4_e2m1{static_cast<uint8_t>(khive_float_to_minifloat(f, 4, 1, 1, 0x7u, 0x7u, 0x7u))}; }
)";

constexpr const char* kCpuE2m1x2 =
    R"(struct khive_fp4x2_e2m1 { uint8_t bits; };   // two float4_e2m1fn values: element 2i in the low nibble
)";

std::set<DType> used_dtypes(const Task& t) {
  std::set<DType> s;
  for (const auto& x : t.inputs) s.insert(x.dtype);
  for (const auto& x : t.outputs) s.insert(x.dtype);
  return s;
}

// A string literal body for #include "..." / #line: no quote, backslash or newline may appear.
std::string quoted_path(const std::string& p) {
  std::string out;
  for (char c : p) {
    if (c == '"' || c == '\\' || c == '\n' || c == '\r')
      throw std::invalid_argument("candidate path contains a character that cannot be #included: " + p);
    out += c;
  }
  return out;
}

}  // namespace

std::string generate_prelude(const Task& t, Backend b) {
  const std::set<DType> used = used_dtypes(t);
  auto uses = [&](DType d) { return used.count(d) > 0; };
  std::string u;
  u += "#include <cstdint>\n#include <cstddef>\n";
  if (b == Backend::cuda) {
    u += "#include <cuda_runtime.h>\n";
    if (uses(DType::f16)) u += "#include <cuda_fp16.h>\n";
    if (uses(DType::bf16)) u += "#include <cuda_bf16.h>\n";
    if (uses(DType::f8e4m3) || uses(DType::f8e5m2)) u += "#include <cuda_fp8.h>\n";
    if (uses(DType::f4e2m1) || uses(DType::f4e2m1x2)) u += "#include <cuda_fp4.h>\n";
  } else {
    const bool minifloat = uses(DType::f16) || uses(DType::f8e4m3) || uses(DType::f8e5m2) || uses(DType::f4e2m1);
    if (minifloat || uses(DType::bf16)) {
      u += "// khive storage types for the CPU backend: raw bits; convert with khive_<type>_to_float /\n"
           "// khive_float_to_<type> (round to nearest even).\n";
      if (minifloat)
        u += kCpuMinifloat;
      else
        u += "#include <cstring>\n";
      if (uses(DType::bf16)) u += kCpuBf16;
      if (uses(DType::f16)) u += kCpuF16;
      if (uses(DType::f8e4m3)) u += kCpuE4m3;
      if (uses(DType::f8e5m2)) u += kCpuE5m2;
      if (uses(DType::f4e2m1)) u += kCpuE2m1;
    }
    if (uses(DType::f4e2m1x2)) u += kCpuE2m1x2;
  }
  u += "\n// The task's entry point: the candidate must define exactly this function.\n";
  u += launch_signature(t, b) + ";\n";
  return u;
}

std::string generate_unit(const Task& t, Backend b, const std::filesystem::path& candidate_source) {
  const std::filesystem::path abs = std::filesystem::absolute(candidate_source).lexically_normal();
  std::string u;
  u += fmt::format(
      "// Generated by khive for task '{}' ({} backend). Do not edit: the candidate is the included file.\n", t.name,
      backend_name(b));
  u += generate_prelude(t, b) + "\n";
  u += fmt::format("// ---- candidate: {} ----\n", quoted_path(abs.filename().string()));
  u += fmt::format("#include \"{}\"\n", quoted_path(abs.string()));
  u += "// ---- khive shim ----\n";
  u += "extern \"C\" __attribute__((visibility(\"default\"))) const char khive_abi[] = \"khive-entry-v1\";\n";
  u += "extern \"C\" __attribute__((visibility(\"default\"))) void khive_entry(void* const* args, void* stream) {\n";
  if (b == Backend::cpu) u += "  (void)stream;\n";
  std::vector<std::string> a;
  std::size_t i = 0;
  for (const auto& in : t.inputs) {
    std::string type(dtype_c_type(in.dtype, b));
    if (in.scalar)
      a.push_back(fmt::format("*static_cast<const {}*>(args[{}])  /* {} (scalar, host value) */", type, i++, in.name));
    else
      a.push_back(fmt::format("static_cast<const {}*>(args[{}])  /* {} */", type, i++, in.name));
  }
  for (const auto& out : t.outputs)
    a.push_back(fmt::format("static_cast<{}*>(args[{}])  /* {} */", dtype_c_type(out.dtype, b), i++, out.name));
  for (const auto& ax : t.var_axes())
    a.push_back(fmt::format("*static_cast<const int64_t*>(args[{}])  /* {} */", i++, ax));
  if (b == Backend::cuda) a.push_back("static_cast<cudaStream_t>(stream)");
  u += "  khive_launch(";
  for (std::size_t k = 0; k < a.size(); ++k) u += (k ? ",\n      " : "\n      ") + a[k];
  u += ");\n}\n";
  return u;
}

}  // namespace khive
