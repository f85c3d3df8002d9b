# Emulates router.cuda's warp selections lane by lane (xor shuffles as list permutations) and checks that the
# register version (khive_warp_select_regs, C = 8) picks the same ids and weights as the shared-memory version
# (khive_warp_select) and as a plain sort (value descending, index ascending), on rows with many exact ties.
import math, random
INF = float('inf')
def f32(x):
    import struct; return struct.unpack('f', struct.pack('f', x))[0]
def expf(x): return f32(math.exp(x))
def shfl(vals, o): return [vals[l ^ o] for l in range(32)]

def select_smem(row, E, K):
    m = [-INF]*32
    for l in range(32):
        for e in range(l, E, 32): m[l] = max(m[l], row[e])
    for o in (16, 8, 4, 2, 1): sh = shfl(m, o); m = [max(m[l], sh[l]) for l in range(32)]
    s = [0.0]*32
    for l in range(32):
        for e in range(l, E, 32): s[l] = f32(s[l] + expf(row[e] - m[l]))
    for o in (16, 8, 4, 2, 1): sh = shfl(s, o); s = [f32(s[l] + sh[l]) for l in range(32)]
    pv, pi = [0.0]*32, [-1]*32
    ids, ws = [], []
    for j in range(K):
        bv, bi = [-INF]*32, [-1]*32
        for l in range(32):
            for e in range(l, E, 32):
                v = row[e]
                below = j == 0 or v < pv[l] or (v == pv[l] and e > pi[l])
                if below and (bi[l] < 0 or v > bv[l]): bv[l], bi[l] = v, e
        for o in (16, 8, 4, 2, 1):
            ov, oi = shfl(bv, o), shfl(bi, o)
            for l in range(32):
                if oi[l] >= 0 and (bi[l] < 0 or ov[l] > bv[l] or (ov[l] == bv[l] and oi[l] < bi[l])): bv[l], bi[l] = ov[l], oi[l]
        ids.append(bi[0]); ws.append(0.0 if bi[0] < 0 else f32(expf(bv[0] - m[0]) / s[0]))
        pv, pi = bv[:], bi[:]
    return ids, ws

def select_regs(row, E, K, C=8):
    v = [[row[l + 32*c] if l + 32*c < E else -INF for c in range(C)] for l in range(32)]
    left = [sum(1 << c for c in range(C) if l + 32*c < E) for l in range(32)]
    m = [max(v[l]) for l in range(32)]   # fmaxf from -inf, the same as folding
    for o in (16, 8, 4, 2, 1): sh = shfl(m, o); m = [max(m[l], sh[l]) for l in range(32)]
    s = [0.0]*32
    for l in range(32):
        for c in range(C):
            if (left[l] >> c) & 1: s[l] = f32(s[l] + expf(v[l][c] - m[l]))
    for o in (16, 8, 4, 2, 1): sh = shfl(s, o); s = [f32(s[l] + sh[l]) for l in range(32)]
    ids, ws = [], []
    for j in range(K):
        bv, bi = [-INF]*32, [-1]*32
        for l in range(32):
            for c in range(C):
                if (left[l] >> c) & 1 and (bi[l] < 0 or v[l][c] > bv[l]): bv[l], bi[l] = v[l][c], l + 32*c
        for o in (16, 8, 4, 2, 1):
            ov, oi = shfl(bv, o), shfl(bi, o)
            for l in range(32):
                if oi[l] >= 0 and (bi[l] < 0 or ov[l] > bv[l] or (ov[l] == bv[l] and oi[l] < bi[l])): bv[l], bi[l] = ov[l], oi[l]
        for l in range(32):
            if bi[l] >= 0 and (bi[l] & 31) == l: left[l] &= ~(1 << (bi[l] >> 5))
        ids.append(bi[0]); ws.append(0.0 if bi[0] < 0 else f32(expf(bv[0] - m[0]) / s[0]))
    return ids, ws

random.seed(7)
n = 0
for E in (1, 2, 8, 9, 31, 32, 33, 60, 64, 100, 128, 200, 255, 256):
    for trial in range(12):
        levels = random.choice([3, 20, 4096])   # few levels: many exact ties
        row = [f32(random.randint(0, levels) / 4096.0 + 0.5) for _ in range(E)]
        if trial % 4 == 0: row = [f32(0.25)] * E   # all tied
        if trial % 4 == 1 and E > 3: row[E // 2] = -INF   # a real -inf logit stays pickable
        K = min(E, random.choice([1, 8, E]))
        a, b = select_smem(row, E, K), select_regs(row, E, K)
        want = sorted(range(E), key=lambda e: (-row[e], e))[:K]
        assert a[0] == want, (E, K, a[0], want)
        assert b == a, (E, K, a, b)
        n += 1
print(f"{n} rows: register selection == shared-memory selection == sort (value desc, index asc)")
