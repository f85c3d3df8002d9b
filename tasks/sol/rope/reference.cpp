// rope, CPU reference: rotate-half form per (token, head, pair), in double, rounded once to bf16.
static void rope_one(const khive_bf16* x, const float* cos, const float* sin, khive_bf16* out, int64_t T, int64_t H,
                     int64_t D) {
  const int64_t h = D / 2;
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < T; ++t)
    for (int64_t hd = 0; hd < H; ++hd) {
      const int64_t base = (t * H + hd) * D;
      for (int64_t i = 0; i < h; ++i) {
        const double x1 = khive_bf16_to_float(x[base + i]), x2 = khive_bf16_to_float(x[base + i + h]);
        const double c = cos[t * h + i], s = sin[t * h + i];
        out[base + i] = khive_float_to_bf16(static_cast<float>(x1 * c - x2 * s));
        out[base + i + h] = khive_float_to_bf16(static_cast<float>(x2 * c + x1 * s));
      }
    }
}

extern "C" void khive_launch(const khive_bf16* q, const khive_bf16* k, const float* cos, const float* sin, khive_bf16* q_out,
                             khive_bf16* k_out, int64_t T, int64_t Hq, int64_t Hkv, int64_t D) {
  rope_one(q, cos, sin, q_out, T, Hq, D);
  rope_one(k, cos, sin, k_out, T, Hkv, D);
}
