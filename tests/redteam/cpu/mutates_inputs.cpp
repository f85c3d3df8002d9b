// RED TEAM (vector_add, CPU). Fault/hack: computes the right answer, then scales the input b in place
// (casting away const), leaving the harness's buffer changed; a later call, or a reference that runs
// after the candidate on the same buffers, would see different data.
// Caught by check 3: inputs are hashed after each call -> "input_mutated".
extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  float* bw = const_cast<float*>(b);
  for (int64_t i = 0; i < N; ++i) {
    c[i] = a[i] + b[i];
    bw[i] *= 0.5f;
  }
}
