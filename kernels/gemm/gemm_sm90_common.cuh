// Shared by the CUTLASS 3.x Sm90 GEMM templates (`// khive:include gemm_sm90_common.cuh`, after their Gemm and
// GemmKernel types): the epilogue's fused activation, the stream-K settings, and the launch with the static cluster
// shape. Needs ElementD, ElementC, Gemm, GemmKernel and the parameters SPLITS, CLUSTER_M, CLUSTER_N.

// Stream-K / split-K settings exist only on the stream-K scheduler's arguments (overload by SFINAE: C++17).
template <class S>
auto khive_set_decomposition(S& s, int) -> decltype(s.decomposition_mode, void()) {
  using Mode = decltype(s.decomposition_mode);
  s.splits = {{SPLITS}};
  s.decomposition_mode = {{SPLITS}} > 1 ? Mode::SplitK : Mode::StreamK;
}
template <class S>
void khive_set_decomposition(S&, long) {}

void khive_launch(Gemm& gemm, cudaStream_t stream) {
  // Launched here rather than with gemm.run(): CUTLASS's cluster launcher (CUDA >= 12.8) pulls in a diagnostic that
  // prints to std::cout, which the symbol policy refuses. The static cluster shape goes in as a launch attribute.
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = Gemm::get_grid_shape(gemm.params());
  cfg.blockDim = GemmKernel::get_block_shape();
  cfg.dynamicSmemBytes = GemmKernel::SharedStorageSize;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = {{CLUSTER_M}};
  attr[0].val.clusterDim.y = {{CLUSTER_N}};
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  cudaLaunchKernelEx(&cfg, cutlass::device_kernel<GemmKernel>, gemm.params());
}
