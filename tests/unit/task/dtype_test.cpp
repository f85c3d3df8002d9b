#include <gtest/gtest.h>

#include "khive/task/dtype.hpp"

namespace khive {
namespace {

const DType kAll[] = {DType::f64,      DType::f32, DType::f16, DType::bf16, DType::f8e4m3, DType::f8e5m2, DType::f4e2m1,
                      DType::f4e2m1x2, DType::i64, DType::i32, DType::i16,  DType::i8,     DType::boolean};

TEST(DType, NameRoundTripsForEveryType) {
  for (DType t : kAll) {
    auto parsed = parse_dtype(dtype_name(t));
    ASSERT_TRUE(parsed.has_value()) << dtype_name(t);
    EXPECT_EQ(*parsed, t) << dtype_name(t);
  }
}

TEST(DType, DefinitionSpellings) {
  EXPECT_EQ(parse_dtype("float64"), DType::f64);
  EXPECT_EQ(parse_dtype("float32"), DType::f32);
  EXPECT_EQ(parse_dtype("float16"), DType::f16);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::bf16);
  EXPECT_EQ(parse_dtype("float8_e4m3fn"), DType::f8e4m3);
  EXPECT_EQ(parse_dtype("float8_e5m2"), DType::f8e5m2);
  EXPECT_EQ(parse_dtype("float4_e2m1"), DType::f4e2m1);
  EXPECT_EQ(parse_dtype("float4_e2m1fn_x2"), DType::f4e2m1x2);
  EXPECT_EQ(parse_dtype("int64"), DType::i64);
  EXPECT_EQ(parse_dtype("int32"), DType::i32);
  EXPECT_EQ(parse_dtype("int16"), DType::i16);
  EXPECT_EQ(parse_dtype("int8"), DType::i8);
  EXPECT_EQ(parse_dtype("bool"), DType::boolean);
}

TEST(DType, UnknownSpellingsAreRejected) {
  for (const char* s : {"", "fp32", "float", "Float32", "float8_e4m3", "uint8", "half", "float32 "})
    EXPECT_FALSE(parse_dtype(s).has_value()) << s;
}

TEST(DType, Sizes) {
  EXPECT_EQ(dtype_size(DType::f64), 8u);
  EXPECT_EQ(dtype_size(DType::f32), 4u);
  EXPECT_EQ(dtype_size(DType::f16), 2u);
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
  EXPECT_EQ(dtype_size(DType::f8e4m3), 1u);
  EXPECT_EQ(dtype_size(DType::f8e5m2), 1u);
  EXPECT_EQ(dtype_size(DType::f4e2m1), 1u);
  EXPECT_EQ(dtype_size(DType::f4e2m1x2), 1u);  // two values packed in one byte
  EXPECT_EQ(dtype_size(DType::i64), 8u);
  EXPECT_EQ(dtype_size(DType::i32), 4u);
  EXPECT_EQ(dtype_size(DType::i16), 2u);
  EXPECT_EQ(dtype_size(DType::i8), 1u);
  EXPECT_EQ(dtype_size(DType::boolean), 1u);
}

TEST(DType, FloatAndIntegerClassesPartitionTheTypes) {
  for (DType t : kAll) EXPECT_NE(dtype_is_float(t), dtype_is_integer(t)) << dtype_name(t);
  EXPECT_TRUE(dtype_is_float(DType::bf16));
  EXPECT_TRUE(dtype_is_float(DType::f4e2m1x2));
  EXPECT_TRUE(dtype_is_integer(DType::i8));
  EXPECT_TRUE(dtype_is_integer(DType::boolean));
}

TEST(DType, CudaTypes) {
  EXPECT_EQ(dtype_c_type(DType::f64, Backend::cuda), "double");
  EXPECT_EQ(dtype_c_type(DType::f32, Backend::cuda), "float");
  EXPECT_EQ(dtype_c_type(DType::f16, Backend::cuda), "__half");
  EXPECT_EQ(dtype_c_type(DType::bf16, Backend::cuda), "__nv_bfloat16");
  EXPECT_EQ(dtype_c_type(DType::f8e4m3, Backend::cuda), "__nv_fp8_e4m3");
  EXPECT_EQ(dtype_c_type(DType::f8e5m2, Backend::cuda), "__nv_fp8_e5m2");
  EXPECT_EQ(dtype_c_type(DType::f4e2m1, Backend::cuda), "__nv_fp4_e2m1");
  EXPECT_EQ(dtype_c_type(DType::f4e2m1x2, Backend::cuda), "__nv_fp4x2_e2m1");
  EXPECT_EQ(dtype_c_type(DType::i64, Backend::cuda), "int64_t");
  EXPECT_EQ(dtype_c_type(DType::i32, Backend::cuda), "int32_t");
  EXPECT_EQ(dtype_c_type(DType::i16, Backend::cuda), "int16_t");
  EXPECT_EQ(dtype_c_type(DType::i8, Backend::cuda), "int8_t");
  EXPECT_EQ(dtype_c_type(DType::boolean, Backend::cuda), "bool");
}

TEST(DType, CpuTypes) {
  EXPECT_EQ(dtype_c_type(DType::f64, Backend::cpu), "double");
  EXPECT_EQ(dtype_c_type(DType::f32, Backend::cpu), "float");
  EXPECT_EQ(dtype_c_type(DType::f16, Backend::cpu), "khive_f16");
  EXPECT_EQ(dtype_c_type(DType::bf16, Backend::cpu), "khive_bf16");
  EXPECT_EQ(dtype_c_type(DType::f8e4m3, Backend::cpu), "khive_fp8_e4m3");
  EXPECT_EQ(dtype_c_type(DType::f8e5m2, Backend::cpu), "khive_fp8_e5m2");
  EXPECT_EQ(dtype_c_type(DType::f4e2m1, Backend::cpu), "khive_fp4_e2m1");
  EXPECT_EQ(dtype_c_type(DType::f4e2m1x2, Backend::cpu), "khive_fp4x2_e2m1");
  EXPECT_EQ(dtype_c_type(DType::i64, Backend::cpu), "int64_t");
  EXPECT_EQ(dtype_c_type(DType::i8, Backend::cpu), "int8_t");
  EXPECT_EQ(dtype_c_type(DType::boolean, Backend::cpu), "bool");
}

TEST(DType, BackendRoundTrip) {
  for (Backend b : {Backend::cpu, Backend::cuda}) EXPECT_EQ(parse_backend(backend_name(b)), b);
  EXPECT_EQ(backend_name(Backend::cpu), "cpu");
  EXPECT_EQ(backend_name(Backend::cuda), "cuda");
  EXPECT_FALSE(parse_backend("gpu").has_value());
  EXPECT_FALSE(parse_backend("CUDA").has_value());
}

}  // namespace
}  // namespace khive
