// Shared by the CUTLASS 3.x Sm90 GEMM templates (`// khive:include gemm_sm90_fusion.cuh`, once ElementD and
// ElementC are known): the epilogue as CUTLASS's fusion for activation kAct (KHIVE_ACT_*), a plain linear
// combination (alpha acc + beta C) without one.
template <template <class> class Act>
using FusionAct = cutlass::epilogue::fusion::LinCombEltAct<Act, ElementD, float, ElementC, float>;
template <int kAct>
using KhiveFusion = std::conditional_t<
    kAct == KHIVE_ACT_RELU, FusionAct<cutlass::epilogue::thread::ReLu>,
    std::conditional_t<kAct == KHIVE_ACT_GELU, FusionAct<cutlass::epilogue::thread::GELU>,
                       std::conditional_t<kAct == KHIVE_ACT_GELU_TANH, FusionAct<cutlass::epilogue::thread::GELU_taylor>,
                                          std::conditional_t<kAct == KHIVE_ACT_SILU, FusionAct<cutlass::epilogue::thread::SiLu>,
                                                             cutlass::epilogue::fusion::LinearCombination<ElementD, float, ElementC, float>>>>>;
