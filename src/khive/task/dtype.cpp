#include "khive/task/dtype.hpp"

#include <array>

namespace khive {
namespace {

struct DTypeInfo {
  DType t;
  std::string_view name;
  std::size_t size;
  bool is_float;
  std::string_view cuda_type;
  std::string_view cpu_type;
};

// One row per DType, in enum order.
constexpr std::array<DTypeInfo, 13> kTypes{{
    {DType::f64, "float64", 8, true, "double", "double"},
    {DType::f32, "float32", 4, true, "float", "float"},
    {DType::f16, "float16", 2, true, "__half", "khive_f16"},
    {DType::bf16, "bfloat16", 2, true, "__nv_bfloat16", "khive_bf16"},
    {DType::f8e4m3, "float8_e4m3fn", 1, true, "__nv_fp8_e4m3", "khive_fp8_e4m3"},
    {DType::f8e5m2, "float8_e5m2", 1, true, "__nv_fp8_e5m2", "khive_fp8_e5m2"},
    {DType::f4e2m1, "float4_e2m1", 1, true, "__nv_fp4_e2m1", "khive_fp4_e2m1"},
    {DType::f4e2m1x2, "float4_e2m1fn_x2", 1, true, "__nv_fp4x2_e2m1", "khive_fp4x2_e2m1"},
    {DType::i64, "int64", 8, false, "int64_t", "int64_t"},
    {DType::i32, "int32", 4, false, "int32_t", "int32_t"},
    {DType::i16, "int16", 2, false, "int16_t", "int16_t"},
    {DType::i8, "int8", 1, false, "int8_t", "int8_t"},
    {DType::boolean, "bool", 1, false, "bool", "bool"},
}};

const DTypeInfo& info(DType t) { return kTypes[static_cast<std::size_t>(t)]; }

}  // namespace

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& i : kTypes)
    if (i.name == name) return i.t;
  return std::nullopt;
}

std::string_view dtype_name(DType t) { return info(t).name; }
std::size_t dtype_size(DType t) { return info(t).size; }
bool dtype_is_float(DType t) { return info(t).is_float; }
bool dtype_is_integer(DType t) { return !info(t).is_float; }

std::string_view dtype_c_type(DType t, Backend b) { return b == Backend::cuda ? info(t).cuda_type : info(t).cpu_type; }

std::string_view backend_name(Backend b) { return b == Backend::cuda ? "cuda" : "cpu"; }

std::optional<Backend> parse_backend(std::string_view name) {
  if (name == "cpu") return Backend::cpu;
  if (name == "cuda") return Backend::cuda;
  return std::nullopt;
}

}  // namespace khive
