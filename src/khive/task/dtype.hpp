// Element types of task tensors, as named in FlashInfer-Bench / SOL-ExecBench definitions.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace khive {

enum class DType {
  // f4e2m1 / f4e2m1x2 parse (so SOL-ExecBench definitions load) but are refused by the judge for now.
  f64,
  f32,
  f16,
  bf16,
  f8e4m3,
  f8e5m2,
  f4e2m1,
  f4e2m1x2,
  i64,
  i32,
  i16,
  i8,
  boolean,
};

// "float32", "bfloat16", "float8_e4m3fn", ... (the definition.json spelling) -> DType.
std::optional<DType> parse_dtype(std::string_view name);
std::string_view dtype_name(DType t);  // the definition.json spelling
std::size_t dtype_size(DType t);       // bytes per stored element (f4e2m1x2 packs two values in one byte)
bool dtype_is_float(DType t);
bool dtype_is_integer(DType t);  // integers and bool
// The C++ type a candidate sees for this dtype. CUDA uses the toolkit's types (__nv_bfloat16, __half,
// __nv_fp8_e4m3, ...); the CPU backend uses the storage types from the generated prelude (khive_bf16, ...).
enum class Backend { cpu, cuda };
std::string_view dtype_c_type(DType t, Backend b);
std::string_view backend_name(Backend b);
std::optional<Backend> parse_backend(std::string_view name);

}  // namespace khive
