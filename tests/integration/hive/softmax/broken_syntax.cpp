// Planted kernel that does not compile (undeclared identifier): rejected at the build check.
extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {
  for (int64_t i = 0; i < B * D; ++i) y[i] = x[i] * scale_not_declared;
}
