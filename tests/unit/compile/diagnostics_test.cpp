// Diagnostics parsing on real compiler output (captured once with g++ 12.2 and nvcc 13.0, LC_ALL=C),
// and ptxas's resource report.
#include <gtest/gtest.h>

#include <string>

#include "khive/compile/builder.hpp"

namespace khive {
namespace {

using Sev = Diagnostic::Severity;

// ---- captured outputs ------------------------------------------------------------------------------
// Captured gcc1.txt
const std::string kGccUndeclared = R"LOG(In file included from kernel.cpp:1:
/tmp/kd/kernel.cpp: In function 'void khive_launch(const float*, float*, int64_t)':
/tmp/kd/kernel.cpp:5:26: error: 'z' was not declared in this scope
    5 |     y[i] = x[i] * 2.0f + z;
      |                          ^
/tmp/kd/kernel.cpp:7:3: error: 'undefined_fn' was not declared in this scope
    7 |   undefined_fn(n);
      |   ^~~~~~~~~~~~
/tmp/kd/kernel.cpp:3:7: warning: unused variable 'unused' [-Wunused-variable]
    3 |   int unused = 3;
      |       ^~~~~~
)LOG";

// Captured gcc2.txt
const std::string kGccConflict = R"LOG(In file included from kernel2.cpp:1:
/tmp/kd/kernel2.cpp:2:17: error: conflicting declaration of C function 'void khive_launch(const float*, float*, int)'
    2 | extern "C" void khive_launch(const float* x, float* y, int n) {
      |                 ^~~~~~~~~~~~
unit2.cpp:2:17: note: previous declaration 'void khive_launch(const float*, float*, int64_t)'
    2 | extern "C" void khive_launch(const float* x, float* y, int64_t n);
      |                 ^~~~~~~~~~~~
)LOG";

// Captured gcc3.txt
const std::string kGccUndefinedRef = R"LOG(/usr/bin/ld: /tmp/cceivI2j.o: in function `khive_entry':
unit3.cpp:(.text+0x1f): undefined reference to `khive_launch'
collect2: error: ld returned 1 exit status
)LOG";

// Captured gcc4.txt
const std::string kGccFatal = R"LOG(In file included from kernel4.cpp:1:
/tmp/kd/kernel4.cpp:1:10: fatal error: nonexistent_header.h: No such file or directory
    1 | #include <nonexistent_header.h>
      |          ^~~~~~~~~~~~~~~~~~~~~~
compilation terminated.
)LOG";

// Captured gcc5.txt
const std::string kGccBadFlag = R"LOG(g++: error: unrecognized command-line option '-fbogus-flag'
)LOG";

// Captured gcc6.txt
const std::string kGccTemplate = R"LOG(In file included from unitt.cpp:3:
/tmp/kd/kt.cpp: In instantiation of 'T twice(T) [with T = float]':
/tmp/kd/kt.cpp:4:15:   required from here
/tmp/kd/kt.cpp:2:47: error: request for member 'twice' in 'v', which is of non-class type 'float'
    2 | template <typename T> T twice(T v) { return v.twice(); }
      |                                             ~~^~~~~
)LOG";

// Captured nv1.txt
const std::string kNvccErrors = R"LOG(/tmp/kd/kernel.cu(5): error: identifier "z" is undefined
    if (i < n) y[i] = x[i] * 2.0f + z;
                                    ^

/tmp/kd/kernel.cu(10): error: too many arguments in function call
    g(1, 2);
         ^

/tmp/kd/kernel.cu(10): error: calling a __device__ function("_Z1g1?") from a __host__ function("khive_launch") is not allowed
    g(1, 2);
    ^

3 errors detected in the compilation of "unit.cu".
)LOG";

// Captured nv2.txt
const std::string kNvccWarningsAndHost = R"LOG(In file included from unite.cu:4:
/tmp/kd/kernele.cu:3:2: warning: #warning "host pass" [-Wcpp]
    3 | #warning "host pass"
      |  ^~~~~~~
/tmp/kd/kernele.cu(7): warning #39-D: division by zero
    arr[0] = 1 / 0;
               ^

Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"

/tmp/kd/kernele.cu(7): warning #39-D: division by zero
    arr[0] = 1 / 0;
               ^

Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"

/tmp/kd/kernele.cu(6): warning #550-D: variable "arr" was set but never used
    int arr[2];
        ^

ptxas info    : 0 bytes gmem
/tmp/kd/kernele.cu: In function 'void khive_launch(const float*, float*, int64_t, cudaStream_t)':
/tmp/kd/kernele.cu:7:15: warning: division by zero [-Wdiv-by-zero]
    7 |   arr[0] = 1 / 0;
      |             ~~^~~
)LOG";

// Captured with nvcc 13.0 (kernelw.cu: unused variable, two kernels)
const std::string kPtxasResources =
    R"LOG(/tmp/kd/kernelw.cu(4): warning #177-D: variable "unused" was declared but never referenced
    int unused;
        ^

Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"

ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z3bigILi64EEvPf' for 'sm_90a'
ptxas info    : Function properties for _Z3bigILi64EEvPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 64 registers, used 0 barriers
ptxas info    : Compile time = 8.035 ms
ptxas info    : Compiling entry function '_Z5scalePKfPfl' for 'sm_90a'
ptxas info    : Function properties for _Z5scalePKfPfl
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 1.827 ms
)LOG";

// Captured with nvcc 13.0 (kernels.cu: 240000 bytes of static shared memory)
const std::string kPtxasTooMuchShared =
    R"LOG(ptxas error   : Entry function '_Z1kPf' uses too much shared data (0x3a980 bytes, 0x38c00 max)
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90a'
ptxas info    : Function properties for _Z1kPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 240000 bytes smem
ptxas info    : Compile time = 2.185 ms
)LOG";

// Captured with nvcc 13.0 (kernelsp.cu with -maxrregcount=24)
const std::string kPtxasSpills =
    R"LOG(ptxas info    : Overriding maximum register limit 256 for '_Z5spillPfi' with  24 of maxrregcount option
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z5spillPfi' for 'sm_90a'
ptxas info    : Function properties for _Z5spillPfi
    5976 bytes stack frame, 5968 bytes spill stores, 12168 bytes spill loads
ptxas info    : Used 24 registers, used 0 barriers, 5976 bytes cumulative stack size
ptxas info    : Compile time = 250.027 ms
)LOG";

// Captured with nvcc 13.0 (an unknown option)
const std::string kNvccBadOption = R"LOG(nvcc fatal   : Unknown option '--bogus'
)LOG";

// Captured with nvcc 13.0 (CUTLASS 4.2 sm90 bf16 ping-pong 128x256x64 1x1x1, -DNDEBUG)
const std::string kCutlassPingpongC7511 =
    R"LOG(ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due to insufficient register resources for the wgmma pipeline in the function '_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalIN4cute5tupleIJiiiiEEENS1_10collective13CollectiveMmaINS1_34MainloopSm90TmaGmmaWarpSpecializedILi4ENS5_IJNS4_1CILi1EEESB_SB_EEENS1_32KernelTmaWarpSpecializedPingpongEEENS5_IJNSA_ILi128EEENSA_ILi256EEENSA_ILi64EEEEEENS_10bfloat16_tENS5_IJlSB_lEEESJ_SK_NS4_8TiledMMAINS4_8MMA_AtomIJNS4_4SM904GMMA28MMA_64x256x16_F32BF16BF16_SSILNSO_5MajorE0ELSQ_0ELNSO_7ScaleInE1ELSR_1EEEEEENS4_6LayoutISC_NS5_IJNSA_ILi0EEESV_SV_EEEEENS5_IJNS4_10UnderscoreESY_SY_EEEEENS4_13SM90_TMA_LOADENS4_14ComposedLayoutINS4_7SwizzleILi3ELi4ELi3EEENS4_18smem_ptr_flag_bitsILi16EEENSU_INS5_IJNSA_ILi8EEESH_EEENS5_IJSH_SB_EEEEEEEvNS4_8identityES11_S1B_vS1C_EENS_8epilogue10collective18CollectiveEpilogueINS1E_22Sm90TmaWarpSpecializedILi4ELi2ELi16ELb1ELb0EEEJSI_NS5_IJSH_NSA_ILi32EEEEEESJ_SK_SJ_SK_NS1E_6fusion15FusionCallbacksIS1I_NS1L_17LinearCombinationISJ_fSJ_fLNS_15FloatRoundStyleE2EEESI_S1K_JEEES11_NS12_INS13_ILi2ELi4ELi3EEES16_NSU_INS5_IJS17_S1J_EEENS5_IJS1J_SB_EEEEEEENS4_17SM75_U32x4_LDSM_NENS4_14SM90_TMA_STOREES1V_NS4_17SM90_U32x4_STSM_NENS4_9Copy_AtomIJS1Y_NS_6half_tEEEEvEEEvvEEEEvNT_6ParamsE'
ptxas info    : 11 bytes gmem
ptxas info    : Compiling entry function '_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalIN4cute5tupleIJiiiiEEENS1_10collective13CollectiveMmaINS1_34MainloopSm90TmaGmmaWarpSpecializedILi4ENS5_IJNS4_1CILi1EEESB_SB_EEENS1_32KernelTmaWarpSpecializedPingpongEEENS5_IJNSA_ILi128EEENSA_ILi256EEENSA_ILi64EEEEEENS_10bfloat16_tENS5_IJlSB_lEEESJ_SK_NS4_8TiledMMAINS4_8MMA_AtomIJNS4_4SM904GMMA28MMA_64x256x16_F32BF16BF16_SSILNSO_5MajorE0ELSQ_0ELNSO_7ScaleInE1ELSR_1EEEEEENS4_6LayoutISC_NS5_IJNSA_ILi0EEESV_SV_EEEEENS5_IJNS4_10UnderscoreESY_SY_EEEEENS4_13SM90_TMA_LOADENS4_14ComposedLayoutINS4_7SwizzleILi3ELi4ELi3EEENS4_18smem_ptr_flag_bitsILi16EEENSU_INS5_IJNSA_ILi8EEESH_EEENS5_IJSH_SB_EEEEEEEvNS4_8identityES11_S1B_vS1C_EENS_8epilogue10collective18CollectiveEpilogueINS1E_22Sm90TmaWarpSpecializedILi4ELi2ELi16ELb1ELb0EEEJSI_NS5_IJSH_NSA_ILi32EEEEEESJ_SK_SJ_SK_NS1E_6fusion15FusionCallbacksIS1I_NS1L_17LinearCombinationISJ_fSJ_fLNS_15FloatRoundStyleE2EEESI_S1K_JEEES11_NS12_INS13_ILi2ELi4ELi3EEES16_NSU_INS5_IJS17_S1J_EEENS5_IJS1J_SB_EEEEEEENS4_17SM75_U32x4_LDSM_NENS4_14SM90_TMA_STOREES1V_NS4_17SM90_U32x4_STSM_NENS4_9Copy_AtomIJS1Y_NS_6half_tEEEEvEEEvvEEEEvNT_6ParamsE' for 'sm_90a'
ptxas info    : Function properties for _ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalIN4cute5tupleIJiiiiEEENS1_10collective13CollectiveMmaINS1_34MainloopSm90TmaGmmaWarpSpecializedILi4ENS5_IJNS4_1CILi1EEESB_SB_EEENS1_32KernelTmaWarpSpecializedPingpongEEENS5_IJNSA_ILi128EEENSA_ILi256EEENSA_ILi64EEEEEENS_10bfloat16_tENS5_IJlSB_lEEESJ_SK_NS4_8TiledMMAINS4_8MMA_AtomIJNS4_4SM904GMMA28MMA_64x256x16_F32BF16BF16_SSILNSO_5MajorE0ELSQ_0ELNSO_7ScaleInE1ELSR_1EEEEEENS4_6LayoutISC_NS5_IJNSA_ILi0EEESV_SV_EEEEENS5_IJNS4_10UnderscoreESY_SY_EEEEENS4_13SM90_TMA_LOADENS4_14ComposedLayoutINS4_7SwizzleILi3ELi4ELi3EEENS4_18smem_ptr_flag_bitsILi16EEENSU_INS5_IJNSA_ILi8EEESH_EEENS5_IJSH_SB_EEEEEEEvNS4_8identityES11_S1B_vS1C_EENS_8epilogue10collective18CollectiveEpilogueINS1E_22Sm90TmaWarpSpecializedILi4ELi2ELi16ELb1ELb0EEEJSI_NS5_IJSH_NSA_ILi32EEEEEESJ_SK_SJ_SK_NS1E_6fusion15FusionCallbacksIS1I_NS1L_17LinearCombinationISJ_fSJ_fLNS_15FloatRoundStyleE2EEESI_S1K_JEEES11_NS12_INS13_ILi2ELi4ELi3EEES16_NSU_INS5_IJS17_S1J_EEENS5_IJS1J_SB_EEEEEEENS4_17SM75_U32x4_LDSM_NENS4_14SM90_TMA_STOREES1V_NS4_17SM90_U32x4_STSM_NENS4_9Copy_AtomIJS1Y_NS_6half_tEEEEvEEEvvEEEEvNT_6ParamsE
    1936 bytes stack frame, 4766 bytes spill stores, 4764 bytes spill loads
ptxas info    : Used 168 registers, used 2 barriers, 1936 bytes cumulative stack size
ptxas info    : Compile time = 480.181 ms
)LOG";

// Captured with nvcc 13.0 (the same without -DNDEBUG: device asserts are calls)
const std::string kCutlassPingpongC7510 =
    R"LOG(ptxas info    : (C7510) Potential Performance Loss: wgmma.mma_async instructions are serialized due to wgmma pipeline crossing function boundary at a function call in the function '_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalIN4cute5tupleIJiiiiEEENS1_10collective13CollectiveMmaINS1_34MainloopSm90TmaGmmaWarpSpecializedILi4ENS5_IJNS4_1CILi1EEESB_SB_EEENS1_32KernelTmaWarpSpecializedPingpongEEENS5_IJNSA_ILi128EEENSA_ILi256EEENSA_ILi64EEEEEENS_10bfloat16_tENS5_IJlSB_lEEESJ_SK_NS4_8TiledMMAINS4_8MMA_AtomIJNS4_4SM904GMMA28MMA_64x256x16_F32BF16BF16_SSILNSO_5MajorE0ELSQ_0ELNSO_7ScaleInE1ELSR_1EEEEEENS4_6LayoutISC_NS5_IJNSA_ILi0EEESV_SV_EEEEENS5_IJNS4_10UnderscoreESY_SY_EEEEENS4_13SM90_TMA_LOADENS4_14ComposedLayoutINS4_7SwizzleILi3ELi4ELi3EEENS4_18smem_ptr_flag_bitsILi16EEENSU_INS5_IJNSA_ILi8EEESH_EEENS5_IJSH_SB_EEEEEEEvNS4_8identityES11_S1B_vS1C_EENS_8epilogue10collective18CollectiveEpilogueINS1E_22Sm90TmaWarpSpecializedILi4ELi2ELi16ELb1ELb0EEEJSI_NS5_IJSH_NSA_ILi32EEEEEESJ_SK_SJ_SK_NS1E_6fusion15FusionCallbacksIS1I_NS1L_17LinearCombinationISJ_fSJ_fLNS_15FloatRoundStyleE2EEESI_S1K_JEEES11_NS12_INS13_ILi2ELi4ELi3EEES16_NSU_INS5_IJS17_S1J_EEENS5_IJS1J_SB_EEEEEEENS4_17SM75_U32x4_LDSM_NENS4_14SM90_TMA_STOREES1V_NS4_17SM90_U32x4_STSM_NENS4_9Copy_AtomIJS1Y_NS_6half_tEEEEvEEEvvEEEEvNT_6ParamsE'
ptxas info    : 3567 bytes gmem
ptxas info    : Compiling entry function '_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalIN4cute5tupleIJiiiiEEENS1_10collective13CollectiveMmaINS1_34MainloopSm90TmaGmmaWarpSpecializedILi4ENS5_IJNS4_1CILi1EEESB_SB_EEENS1_32KernelTmaWarpSpecializedPingpongEEENS5_IJNSA_ILi128EEENSA_ILi256EEENSA_ILi64EEEEEENS_10bfloat16_tENS5_IJlSB_lEEESJ_SK_NS4_8TiledMMAINS4_8MMA_AtomIJNS4_4SM904GMMA28MMA_64x256x16_F32BF16BF16_SSILNSO_5MajorE0ELSQ_0ELNSO_7ScaleInE1ELSR_1EEEEEENS4_6LayoutISC_NS5_IJNSA_ILi0EEESV_SV_EEEEENS5_IJNS4_10UnderscoreESY_SY_EEEEENS4_13SM90_TMA_LOADENS4_14ComposedLayoutINS4_7SwizzleILi3ELi4ELi3EEENS4_18smem_ptr_flag_bitsILi16EEENSU_INS5_IJNSA_ILi8EEESH_EEENS5_IJSH_SB_EEEEEEEvNS4_8identityES11_S1B_vS1C_EENS_8epilogue10collective18CollectiveEpilogueINS1E_22Sm90TmaWarpSpecializedILi4ELi2ELi16ELb1ELb0EEEJSI_NS5_IJSH_NSA_ILi32EEEEEESJ_SK_SJ_SK_NS1E_6fusion15FusionCallbacksIS1I_NS1L_17LinearCombinationISJ_fSJ_fLNS_15FloatRoundStyleE2EEESI_S1K_JEEES11_NS12_INS13_ILi2ELi4ELi3EEES16_NSU_INS5_IJS17_S1J_EEENS5_IJS1J_SB_EEEEEEENS4_17SM75_U32x4_LDSM_NENS4_14SM90_TMA_STOREES1V_NS4_17SM90_U32x4_STSM_NENS4_9Copy_AtomIJS1Y_NS_6half_tEEEEvEEEvvEEEEvNT_6ParamsE' for 'sm_90a'
ptxas info    : Function properties for _ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalIN4cute5tupleIJiiiiEEENS1_10collective13CollectiveMmaINS1_34MainloopSm90TmaGmmaWarpSpecializedILi4ENS5_IJNS4_1CILi1EEESB_SB_EEENS1_32KernelTmaWarpSpecializedPingpongEEENS5_IJNSA_ILi128EEENSA_ILi256EEENSA_ILi64EEEEEENS_10bfloat16_tENS5_IJlSB_lEEESJ_SK_NS4_8TiledMMAINS4_8MMA_AtomIJNS4_4SM904GMMA28MMA_64x256x16_F32BF16BF16_SSILNSO_5MajorE0ELSQ_0ELNSO_7ScaleInE1ELSR_1EEEEEENS4_6LayoutISC_NS5_IJNSA_ILi0EEESV_SV_EEEEENS5_IJNS4_10UnderscoreESY_SY_EEEEENS4_13SM90_TMA_LOADENS4_14ComposedLayoutINS4_7SwizzleILi3ELi4ELi3EEENS4_18smem_ptr_flag_bitsILi16EEENSU_INS5_IJNSA_ILi8EEESH_EEENS5_IJSH_SB_EEEEEEEvNS4_8identityES11_S1B_vS1C_EENS_8epilogue10collective18CollectiveEpilogueINS1E_22Sm90TmaWarpSpecializedILi4ELi2ELi16ELb1ELb0EEEJSI_NS5_IJSH_NSA_ILi32EEEEEESJ_SK_SJ_SK_NS1E_6fusion15FusionCallbacksIS1I_NS1L_17LinearCombinationISJ_fSJ_fLNS_15FloatRoundStyleE2EEESI_S1K_JEEES11_NS12_INS13_ILi2ELi4ELi3EEES16_NSU_INS5_IJS17_S1J_EEENS5_IJS1J_SB_EEEEEEENS4_17SM75_U32x4_LDSM_NENS4_14SM90_TMA_STOREES1V_NS4_17SM90_U32x4_STSM_NENS4_9Copy_AtomIJS1Y_NS_6half_tEEEEvEEEvvEEEEvNT_6ParamsE
    1984 bytes stack frame, 4854 bytes spill stores, 4860 bytes spill loads
ptxas info    : Used 168 registers, used 2 barriers, 1984 bytes cumulative stack size
ptxas info    : Compile time = 563.782 ms
)LOG";

// The candidates those outputs came from.
const std::string kKernelCpp = R"SRC(#include <cstdint>
extern "C" void khive_launch(const float* x, float* y, int64_t n) {
  int unused = 3;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = x[i] * 2.0f + z;
  }
  undefined_fn(n);
}
)SRC";
const std::string kKernel2Cpp = R"SRC(#include <cstdint>
extern "C" void khive_launch(const float* x, float* y, int n) {
  y[0] = x[0];
}
)SRC";
const std::string kKtCpp = R"SRC(#include <cstdint>
template <typename T> T twice(T v) { return v.twice(); }
extern "C" void khive_launch(const float* x, float* y, int64_t n) {
  y[0] = twice(x[0]);
}
)SRC";
const std::string kKernelCu = R"SRC(#include <cstdint>
__global__ void scale(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * blockDim.x + threadIdx.x;
  int unused;
  if (i < n) y[i] = x[i] * 2.0f + z;
}
__device__ void g(int);
extern "C" void khive_launch(const float* x, float* y, int64_t n, cudaStream_t stream) {
  scale<<<(n + 255) / 256, 256, 0, stream>>>(x, y, n);
  g(1, 2);
}
)SRC";
const std::string kKerneleCu = R"SRC(#include <cstdint>
#if !defined(__CUDA_ARCH__)
#warning "host pass"
#endif
extern "C" void khive_launch(const float* x, float* y, int64_t n, cudaStream_t stream) {
  int arr[2];
  arr[0] = 1 / 0;
}
)SRC";

// ---- g++ ---------------------------------------------------------------------------------------------

TEST(ParseDiagnostics, GccErrorsAndWarningMapToTheCandidate) {
  auto ds = parse_diagnostics(kGccUndeclared, "/tmp/kd/kernel.cpp", kKernelCpp);
  ASSERT_EQ(ds.size(), 3u);
  EXPECT_EQ(ds[0].severity, Sev::error);
  EXPECT_EQ(ds[0].tool, "g++");
  EXPECT_EQ(ds[0].file, "kernel.cpp");
  EXPECT_EQ(ds[0].line, 5);
  EXPECT_EQ(ds[0].column, 26);
  EXPECT_EQ(ds[0].message, "'z' was not declared in this scope");
  EXPECT_TRUE(ds[0].in_candidate);
  EXPECT_EQ(ds[0].source_line, "    y[i] = x[i] * 2.0f + z;");
  EXPECT_EQ(ds[1].line, 7);
  EXPECT_EQ(ds[1].column, 3);
  EXPECT_EQ(ds[1].message, "'undefined_fn' was not declared in this scope");
  EXPECT_EQ(ds[2].severity, Sev::warning);
  EXPECT_EQ(ds[2].message, "unused variable 'unused'");
  EXPECT_EQ(ds[2].code, "-Wunused-variable");
  EXPECT_EQ(ds[2].source_line, "  int unused = 3;");
}

TEST(ParseDiagnostics, CandidateMatchedByFileNameToo) {
  // After #line or path rewriting the compiler may print only the file name.
  std::string log = "kernel.cpp:5:26: error: 'z' was not declared in this scope\n";
  auto ds = parse_diagnostics(log, "/somewhere/else/kernel.cpp", kKernelCpp);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_TRUE(ds[0].in_candidate);
  EXPECT_EQ(ds[0].source_line, "    y[i] = x[i] * 2.0f + z;");
  // A different file with the same base name elsewhere is not the candidate.
  ds = parse_diagnostics("/usr/include/kernel.cpp:5:26: error: x\n", "/work/kernel.cpp", kKernelCpp);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_FALSE(ds[0].in_candidate);
  EXPECT_EQ(ds[0].file, "/usr/include/kernel.cpp");
  EXPECT_TRUE(ds[0].source_line.empty());
}

TEST(ParseDiagnostics, GccConflictingSignatureWithNoteInTheUnit) {
  auto ds = parse_diagnostics(kGccConflict, "/tmp/kd/kernel2.cpp", kKernel2Cpp);
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds[0].severity, Sev::error);
  EXPECT_TRUE(ds[0].in_candidate);
  EXPECT_EQ(ds[0].line, 2);
  EXPECT_EQ(ds[0].column, 17);
  EXPECT_NE(ds[0].message.find("conflicting declaration of C function"), std::string::npos);
  EXPECT_EQ(ds[1].severity, Sev::note);
  EXPECT_EQ(ds[1].file, "unit2.cpp");
  EXPECT_FALSE(ds[1].in_candidate);
  EXPECT_TRUE(ds[1].source_line.empty());
  // The note travels with its error in the text form.
  std::string text = format_diagnostics(ds);
  EXPECT_NE(text.find("kernel2.cpp:2:17: error: conflicting declaration"), std::string::npos) << text;
  EXPECT_NE(text.find("    2 | extern \"C\" void khive_launch(const float* x, float* y, int n) {"), std::string::npos)
      << text;
  EXPECT_NE(text.find("unit2.cpp:2:17: note: previous declaration 'void khive_launch(const float*, float*, int64_t)'"),
            std::string::npos)
      << text;
}

TEST(ParseDiagnostics, LinkerUndefinedReferenceAndCollect2) {
  auto ds = parse_diagnostics(kGccUndefinedRef, "/tmp/kd/kernel3.cpp", "");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].tool, "ld");
  EXPECT_EQ(ds[0].severity, Sev::error);
  EXPECT_EQ(ds[0].message, "undefined reference to 'khive_launch'");
  // collect2 alone still says that the link failed.
  ds = parse_diagnostics("collect2: error: ld returned 1 exit status\n", "k.cpp", "");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].tool, "ld");
  EXPECT_EQ(ds[0].message, "ld returned 1 exit status");
  ds = parse_diagnostics(
      "/usr/bin/ld: cannot find -lcudnn: No such file or directory\ncollect2: error: ld returned 1 exit status\n",
      "k.cpp", "");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message, "cannot find -lcudnn: No such file or directory");
}

TEST(ParseDiagnostics, GccFatalErrorAndDriverError) {
  auto ds = parse_diagnostics(kGccFatal, "/tmp/kd/kernel4.cpp", "#include <nonexistent_header.h>\n");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].severity, Sev::error);
  EXPECT_EQ(ds[0].message, "nonexistent_header.h: No such file or directory");
  EXPECT_EQ(ds[0].line, 1);
  EXPECT_EQ(ds[0].column, 10);
  EXPECT_TRUE(ds[0].in_candidate);
  ds = parse_diagnostics(kGccBadFlag, "k.cpp", "");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].tool, "g++");
  EXPECT_TRUE(ds[0].file.empty());
  EXPECT_EQ(ds[0].message, "unrecognized command-line option '-fbogus-flag'");
}

TEST(ParseDiagnostics, GccTemplateContextLinesAreNotDiagnostics) {
  auto ds = parse_diagnostics(kGccTemplate, "/tmp/kd/kt.cpp", kKtCpp);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].line, 2);
  EXPECT_EQ(ds[0].column, 47);
  EXPECT_EQ(ds[0].message, "request for member 'twice' in 'v', which is of non-class type 'float'");
}

TEST(ParseDiagnostics, SourceExcerptThatLooksLikeADiagnosticIsSkipped) {
  std::string log =
      "k.cpp:3:5: error: oops\n"
      "    3 |   puts(\"a.cpp:1:2: error: fake\");\n"
      "      |   ^~~~\n";
  auto ds = parse_diagnostics(log, "k.cpp", "");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message, "oops");
}

// ---- nvcc --------------------------------------------------------------------------------------------

TEST(ParseDiagnostics, NvccFrontEndErrorsWithCaretColumns) {
  auto ds = parse_diagnostics(kNvccErrors, "/tmp/kd/kernel.cu", kKernelCu);
  ASSERT_EQ(ds.size(), 3u);
  EXPECT_EQ(ds[0].tool, "nvcc");
  EXPECT_EQ(ds[0].severity, Sev::error);
  EXPECT_EQ(ds[0].file, "kernel.cu");
  EXPECT_EQ(ds[0].line, 5);
  EXPECT_EQ(ds[0].column, 35);  // the caret under 'z'
  EXPECT_EQ(kKernelCu.substr(kKernelCu.find("  if (i < n)") + 34, 1), "z");
  EXPECT_EQ(ds[0].message, "identifier \"z\" is undefined");
  EXPECT_TRUE(ds[0].in_candidate);
  EXPECT_EQ(ds[0].source_line, "  if (i < n) y[i] = x[i] * 2.0f + z;");
  EXPECT_EQ(ds[1].line, 10);
  EXPECT_EQ(ds[1].column, 8);
  EXPECT_EQ(ds[1].message, "too many arguments in function call");
  EXPECT_EQ(ds[2].column, 3);
  EXPECT_NE(ds[2].message.find("from a __host__ function(\"khive_launch\") is not allowed"), std::string::npos);
  // The "3 errors detected" trailer is not a diagnostic.
  std::string text = format_diagnostics(ds, 2);
  EXPECT_NE(text.find("kernel.cu:5:35: error: identifier \"z\" is undefined\n    5 |   if (i < n)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("(and 1 more error)\n"), std::string::npos) << text;
}

TEST(ParseDiagnostics, NvccWarningsWithCodesHostCompilerAndDuplicates) {
  auto ds = parse_diagnostics(kNvccWarningsAndHost, "/tmp/kd/kernele.cu", kKerneleCu);
  // #warning from the host g++, EDG's #39-D (printed twice, once per pass: kept once), #550-D, and g++'s
  // own -Wdiv-by-zero. The "Remark:" lines and ptxas's info line are not diagnostics.
  ASSERT_EQ(ds.size(), 4u);
  for (const auto& d : ds) {
    EXPECT_EQ(d.severity, Sev::warning);
    EXPECT_TRUE(d.in_candidate);
    EXPECT_EQ(d.file, "kernele.cu");
  }
  EXPECT_EQ(ds[0].tool, "g++");
  EXPECT_EQ(ds[0].code, "-Wcpp");
  EXPECT_EQ(ds[0].line, 3);
  EXPECT_EQ(ds[1].tool, "nvcc");
  EXPECT_EQ(ds[1].code, "39-D");
  EXPECT_EQ(ds[1].message, "division by zero");
  EXPECT_EQ(ds[1].line, 7);
  EXPECT_EQ(ds[1].column, 14);
  EXPECT_EQ(ds[1].source_line, "  arr[0] = 1 / 0;");
  EXPECT_EQ(ds[2].code, "550-D");
  EXPECT_EQ(ds[2].message, "variable \"arr\" was set but never used");
  EXPECT_EQ(ds[3].tool, "g++");
  EXPECT_EQ(ds[3].code, "-Wdiv-by-zero");
  EXPECT_EQ(ds[3].column, 15);
  EXPECT_EQ(format_diagnostics(ds), "");  // no errors
}

TEST(ParseDiagnostics, NvccWarning177) {
  auto ds = parse_diagnostics(kPtxasResources, "/tmp/kd/kernelw.cu", "");
  ASSERT_EQ(ds.size(), 1u);  // ptxas info lines are not diagnostics
  EXPECT_EQ(ds[0].severity, Sev::warning);
  EXPECT_EQ(ds[0].code, "177-D");
  EXPECT_EQ(ds[0].message, "variable \"unused\" was declared but never referenced");
  EXPECT_EQ(ds[0].line, 4);
  EXPECT_EQ(ds[0].column, 7);
}

TEST(ParseDiagnostics, PtxasErrorAndNvccFatal) {
  auto ds = parse_diagnostics(kPtxasTooMuchShared, "k.cu", "");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].tool, "ptxas");
  EXPECT_EQ(ds[0].severity, Sev::error);
  EXPECT_EQ(ds[0].message, "Entry function '_Z1kPf' uses too much shared data (0x3a980 bytes, 0x38c00 max)");
  EXPECT_TRUE(ds[0].file.empty());
  ds = parse_diagnostics(kNvccBadOption, "k.cu", "");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].tool, "nvcc");
  EXPECT_EQ(ds[0].severity, Sev::error);
  EXPECT_EQ(ds[0].message, "Unknown option '--bogus'");
  EXPECT_EQ(format_diagnostics(ds), "nvcc: error: Unknown option '--bogus'\n");
}

TEST(ParseDiagnostics, PtxasAdvisoriesAreWarningsWithTheirCode) {
  auto ds = parse_diagnostics(kCutlassPingpongC7511, "g.cu", "");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].tool, "ptxas");
  EXPECT_EQ(ds[0].severity, Sev::warning);
  EXPECT_EQ(ds[0].code, "C7511");
  EXPECT_EQ(ds[0].message.rfind("Potential Performance Loss: wgmma.mma_async instructions are serialized due to "
                                "insufficient register resources",
                                0),
            0u);
  // The form the brief's older ptxas prints: "ptxas warning : ... (C7511)".
  ds = parse_diagnostics("ptxas warning : wgmma.mma_async instructions are serialized (C7511)\n", "g.cu", "");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].code, "C7511");
  EXPECT_EQ(ds[0].message, "wgmma.mma_async instructions are serialized");
  ds = parse_diagnostics("ptxas /tmp/x.ptx, line 12; error   : Unknown symbol 'foo'\n", "g.cu", "");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].severity, Sev::error);
  EXPECT_EQ(ds[0].message, "Unknown symbol 'foo'");
}

TEST(FormatDiagnostics, ExampleFromTheHeader) {
  Diagnostic d;
  d.file = "kernel.cu";
  d.line = 12;
  d.column = 5;
  d.message = "'x' was not declared in this scope";
  d.source_line = "    x = 1;";
  std::vector<Diagnostic> ds(7, d);
  Diagnostic w = d;
  w.severity = Sev::warning;
  ds.insert(ds.begin(), w);
  std::string text = format_diagnostics(ds, 1);
  EXPECT_EQ(text,
            "kernel.cu:12:5: error: 'x' was not declared in this scope\n   12 |     x = 1;\n(and 6 more errors)\n");
}

// ---- ptxas resources ---------------------------------------------------------------------------------

TEST(PtxasResources, TwoKernels) {
  auto rs = parse_ptxas_resources(kPtxasResources);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].kernel, "_Z3bigILi64EEvPf");
  EXPECT_EQ(rs[0].arch, "sm_90a");
  EXPECT_EQ(rs[0].registers, 64);
  EXPECT_EQ(rs[0].barriers, 0);
  EXPECT_EQ(rs[0].shared_bytes, 0);
  EXPECT_EQ(rs[1].kernel, "_Z5scalePKfPfl");
  EXPECT_EQ(rs[1].registers, 10);
  EXPECT_EQ(rs[1].barriers, 1);
  EXPECT_EQ(rs[1].shared_bytes, 1024);
  EXPECT_FALSE(rs[1].wgmma_serialized);
}

TEST(PtxasResources, SpillsAndStack) {
  auto rs = parse_ptxas_resources(kPtxasSpills);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].kernel, "_Z5spillPfi");
  EXPECT_EQ(rs[0].registers, 24);
  EXPECT_EQ(rs[0].stack_bytes, 5976);
  EXPECT_EQ(rs[0].spill_stores, 5968);
  EXPECT_EQ(rs[0].spill_loads, 12168);
  auto big = parse_ptxas_resources(kPtxasTooMuchShared);
  ASSERT_EQ(big.size(), 1u);
  EXPECT_EQ(big[0].shared_bytes, 240000);
}

TEST(PtxasResources, CutlassPingpongC7511) {
  auto rs = parse_ptxas_resources(kCutlassPingpongC7511);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].kernel.rfind("_ZN7cutlass13device_kernelI", 0), 0u);
  EXPECT_NE(rs[0].kernel.find("KernelTmaWarpSpecializedPingpong"), std::string::npos);
  EXPECT_EQ(rs[0].arch, "sm_90a");
  EXPECT_EQ(rs[0].registers, 168);
  EXPECT_EQ(rs[0].barriers, 2);
  EXPECT_EQ(rs[0].stack_bytes, 1936);
  EXPECT_EQ(rs[0].spill_stores, 4766);
  EXPECT_EQ(rs[0].spill_loads, 4764);
  EXPECT_EQ(rs[0].advisories, std::vector<std::string>{"C7511"});
  EXPECT_TRUE(rs[0].wgmma_serialized);

  auto r10 = parse_ptxas_resources(kCutlassPingpongC7510);
  ASSERT_EQ(r10.size(), 1u);
  EXPECT_EQ(r10[0].advisories, std::vector<std::string>{"C7510"});
  EXPECT_TRUE(r10[0].wgmma_serialized);
}

TEST(PtxasResources, AdvisoryWithoutResourceLinesStillReported) {
  auto rs = parse_ptxas_resources(
      "ptxas warning : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due to "
      "insufficient register resources for the wgmma pipeline in the function '_Z1kv'\n");
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].kernel, "_Z1kv");
  EXPECT_TRUE(rs[0].wgmma_serialized);
  EXPECT_EQ(rs[0].registers, 0);
}

}  // namespace
}  // namespace khive
