// Build and run: g++ -O2 -std=c++17 -o emu emu.cpp && ./emu   (exit status 1 on any mismatch; mutating first_masked or the -inf guard makes it fail)
// CPU emulation of khive_flash_fwd's control flow and softmax (row level, lane mapping of the mask included):
#include <cstring>
// item -> (row block, head) decode, n_tiles, first_masked split, masks, folded-scale exp2, rescale vote per warp.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <random>
#include <algorithm>
static float bf(float x) { unsigned u; memcpy(&u, &x, 4); u += 0x7fff + ((u >> 16) & 1); u &= 0xffff0000u; float y; memcpy(&y, &u, 4); return y; }
#include <cstring>
int fails = 0;
void run(int BM, int BN, int W, int B, int Sq, int Skv, int Hq, int Hkv, int D, bool causal) {
  std::mt19937 rng(Sq * 131 + Skv * 7 + Hq + D + causal);
  std::normal_distribution<float> nd(0.5f, 1.0f);
  std::vector<float> q(size_t(B) * Sq * Hq * D), k(size_t(B) * Skv * Hkv * D), v(k.size()), o(q.size(), NAN), ref(q.size());
  for (auto* t : {&q, &k, &v}) for (auto& x : *t) x = bf(nd(rng));
  const float scale_log2 = 1.4426950408889634f / sqrtf(float(D));
  const int group = Hq / Hkv, off = Skv - Sq;
  // reference
  for (int b = 0; b < B; ++b) for (int i = 0; i < Sq; ++i) for (int h = 0; h < Hq; ++h) {
    int n = causal ? std::min(i + off + 1, Skv) : Skv; double m = -INFINITY; std::vector<double> sc(std::max(n, 0));
    for (int j = 0; j < n; ++j) { double d = 0; for (int e = 0; e < D; ++e) d += q[((size_t(b) * Sq + i) * Hq + h) * D + e] * k[((size_t(b) * Skv + j) * Hkv + h / group) * D + e]; sc[j] = d / sqrt(double(D)); m = std::max(m, sc[j]); }
    double l = 0; std::vector<double> acc(D, 0);
    for (int j = 0; j < n; ++j) { double p = exp(sc[j] - m); l += p; for (int e = 0; e < D; ++e) acc[e] += p * v[((size_t(b) * Skv + j) * Hkv + h / group) * D + e]; }
    for (int e = 0; e < D; ++e) ref[((size_t(b) * Sq + i) * Hq + h) * D + e] = l > 0 ? acc[e] / l : 0;
  }
  const int m_blocks = (Sq + BM - 1) / BM, bh_count = B * Hq, items = m_blocks * bh_count, WR = BM / W;
  std::vector<int> seen(items, 0);
  for (int item = 0; item < items; ++item) {
    const int mb = causal ? m_blocks - 1 - item / bh_count : item % m_blocks;
    const int bh = causal ? item % bh_count : item / m_blocks;
    seen[mb * bh_count + bh]++;
    const int m0 = mb * BM, b = bh / Hq, h = bh % Hq, hk = h / group;
    const int kv_end = causal ? (m0 + BM + off < Skv ? m0 + BM + off : Skv) : Skv;
    const int n_tiles = kv_end > 0 ? (kv_end + BN - 1) / BN : 0;
    int first_masked = Skv / BN;
    if (causal && m0 + off + 1 < Skv) { int d = (m0 + off + 1) / BN; if (d < first_masked) first_masked = d; }
    const int unmasked = std::min(first_masked, n_tiles);
    std::vector<float> acc(size_t(BM) * D, 0.f), mr(BM, -INFINITY), lr(BM * 4, 0.f);
    for (int t = 0; t < n_tiles; ++t) {
      const bool masked = t >= unmasked;
      const int kv0 = t * BN;
      std::vector<float> s(size_t(BM) * BN);
      for (int r = 0; r < BM; ++r) for (int c = 0; c < BN; ++c) {
        const int i = m0 + r, j = kv0 + c; float d = 0;
        for (int e = 0; e < D; ++e) {
          float qv = i < Sq ? q[((size_t(b) * Sq + i) * Hq + h) * D + e] : 0.f;   // zero-filled rows
          float kv = j < Skv ? k[((size_t(b) * Skv + j) * Hkv + hk) * D + e] : 0.f;
          d += qv * kv;
        }
        s[r * BN + c] = d;
      }
      if (masked) for (int r = 0; r < BM; ++r) {
        const int row = m0 + r, limit = causal ? std::min(row + off + 1, Skv) : Skv;
        for (int t4 = 0; t4 < 4; ++t4) { const int lim = limit - kv0 - 2 * t4;
          for (int nt = 0; nt < BN / 8; ++nt) for (int e = 0; e < 2; ++e) if (nt * 8 + e >= lim) s[r * BN + nt * 8 + 2 * t4 + e] = -INFINITY; }
      } else {   // an unmasked tile must not contain an invisible key of a row that is stored
        for (int r = 0; r < BM && m0 + r < Sq; ++r) { const int limit = causal ? std::min(m0 + r + off + 1, Skv) : Skv;
          if (kv0 + BN > limit) { printf("UNMASKED TILE HAS HIDDEN KEYS row %d tile %d\n", m0 + r, t); fails++; } }
      }
      for (int w = 0; w < W; ++w) {
        bool rescale = false; std::vector<float> alpha(WR);
        for (int rr = 0; rr < WR; ++rr) { const int r = w * WR + rr;
          float mx = mr[r]; for (int c = 0; c < BN; ++c) mx = fmaxf(mx, s[r * BN + c]);
          const float base = mx == -INFINITY ? 0.f : mx * scale_log2;
          alpha[rr] = exp2f(fmaf(mr[r], scale_log2, -base)); rescale |= mx != mr[r]; mr[r] = mx;
          for (int t4 = 0; t4 < 4; ++t4) { float sum = 0;
            for (int nt = 0; nt < BN / 8; ++nt) for (int e = 0; e < 2; ++e) { float& x = s[r * BN + nt * 8 + 2 * t4 + e]; x = exp2f(fmaf(x, scale_log2, -base)); sum += x; }
            lr[r * 4 + t4] = lr[r * 4 + t4] * alpha[rr] + sum; }
          if (std::isnan(alpha[rr])) { printf("NaN alpha\n"); fails++; } }
        if (rescale) for (int rr = 0; rr < WR; ++rr) for (int e = 0; e < D; ++e) acc[(w * WR + rr) * D + e] *= alpha[rr];
      }
      for (int r = 0; r < BM; ++r) for (int c = 0; c < BN; ++c) { const float p = bf(s[r * BN + c]); const int j = kv0 + c;
        for (int e = 0; e < D; ++e) acc[r * D + e] += p * (j < Skv ? v[((size_t(b) * Skv + j) * Hkv + hk) * D + e] : 0.f); }
    }
    for (int r = 0; r < BM; ++r) { const int i = m0 + r; if (i >= Sq) continue;
      float l = lr[r * 4] + lr[r * 4 + 1] + lr[r * 4 + 2] + lr[r * 4 + 3]; const float inv = l > 0 ? 1.f / l : 0.f;
      for (int e = 0; e < D; ++e) o[((size_t(b) * Sq + i) * Hq + h) * D + e] = bf(acc[r * D + e] * inv); }
  }
  for (int x : seen) if (x != 1) { printf("item coverage wrong\n"); fails++; break; }
  double worst = 0; for (size_t x = 0; x < o.size(); ++x) { double err = fabs(o[x] - ref[x]) - (1e-2 + 1e-2 * fabs(ref[x])); if (!(err <= worst)) worst = std::isnan(o[x]) ? INFINITY : err; }
  printf("BM%d BN%d W%d B%d Sq%d Skv%d Hq%d Hkv%d D%d causal%d: %s (worst excess %.3g)\n", BM, BN, W, B, Sq, Skv, Hq, Hkv, D, causal, worst <= 0 ? "ok" : "FAIL", worst);
  if (worst > 0) fails++;
}
int main() {
  struct S { int B, Sq, Skv, Hq, Hkv, D; } shapes[] = {{1,1,1,1,1,64},{1,7,7,2,1,64},{2,33,33,4,2,128},{1,130,130,8,2,128},{3,65,65,6,3,64},{1,300,300,4,2,64},{1,5,40,2,1,64},{1,40,5,2,1,64},{1,257,257,2,2,128}};
  int cfg[][3] = {{128,64,8},{128,128,8},{64,64,4},{128,64,4},{128,32,4},{64,128,4}};
  for (auto& c : cfg) for (auto& s : shapes) for (int causal = 0; causal < 2; ++causal) run(c[0], c[1], c[2], s.B, s.Sq, s.Skv, s.Hq, s.Hkv, s.D, causal);
  printf("%d failures\n", fails);
  return fails != 0;
}
