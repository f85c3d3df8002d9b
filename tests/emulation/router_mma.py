# Emulates router.cuda's tensor-core kernel (khive_router_mma<TT, F>) and its host launch lane by lane: cp.async
# staging into rotating slots, ldmatrix.x4 A / x4-or-x2 B fragments, mma.m16n8k16 by its fragment layouts, the
# float2 epilogue into the fused logit tile or the split workspace, then the split sum; checks the logits against
# x @ w^T (integers: exact) for tile shapes, folds, splits and ragged T, E, H.
import itertools, random
def run(T, H, E, MT, NT, WM, BK, S, SPLIT, sms, smem_max=232448):
    WN = 8 // WM; TM, TN = MT // WM, NT // WN; MI, NI = TM // 16, TN // 8; Ld = BK + 8
    x = [[random.randint(-1, 2) for _ in range(H)] for _ in range(T)]
    w = [[random.randint(1, 9) for _ in range(H)] for _ in range(E)]
    fold = WN % 2 == 0 and 2 * MT + NT // 2 <= MT + NT
    F = 2 if fold and E <= NT // 2 else 1
    BM, BN, BWN = F * MT, NT // F, WN // F
    stage_bytes_f = S * (BM + BN) * Ld * 2
    tiles, chunks, kslices = -(-T // BM), -(-E // BN), -(-H // BK)
    splits = 1
    if SPLIT > 1 and tiles < sms: splits = min(sms // tiles, SPLIT)
    if splits > kslices: splits = kslices if kslices > 0 else 1
    per = -(-kslices // splits) if kslices > 0 else 0
    splits = -(-kslices // per) if per > 0 else 1
    logit_bytes = BM * (chunks * BN + 8) * 4
    fused_bytes = max(logit_bytes, stage_bytes_f) if chunks == 1 else stage_bytes_f + logit_bytes
    fused = splits == 1 and fused_bytes <= smem_max
    grid = (tiles, 1, 1) if fused else (tiles, chunks, splits)
    part = {}
    logits = [[None] * E for _ in range(T)]
    for bx, by, bz in itertools.product(*(range(g) for g in grid)):
        ld = chunks * BN + 8
        sL = {}
        t0 = bx * BM
        kc0 = bz * per; kc1 = min(kc0 + per, kslices)
        for chunk in (range(chunks) if fused else [by]):
            n0 = chunk * BN
            sA = [[[0] * Ld for _ in range(BM)] for _ in range(S)]; sB = [[[0] * Ld for _ in range(BN)] for _ in range(S)]
            tag = [None] * S
            def load(slot, kc):
                k0 = kc * BK; per_row = BK // 8
                for tid in range(256):
                    for c in range(tid, BM * per_row, 256):
                        r, col = c // per_row, (c % per_row) * 8
                        for q in range(8):
                            gt, gk = t0 + r, k0 + col + q
                            sA[slot][r][col + q] = x[gt][gk] if gt < T and k0 + col < H else 0   # H % 8 == 0
                    for c in range(tid, BN * per_row, 256):
                        r, col = c // per_row, (c % per_row) * 8
                        for q in range(8):
                            ge, gk = n0 + r, k0 + col + q
                            sB[slot][r][col + q] = w[ge][gk] if ge < E and k0 + col < H else 0
                assert tag[slot] is None or tag[slot] == kc - S, (slot, tag[slot], kc)   # refills the slot read last
                tag[slot] = kc
            acc = {}
            for st in range(S - 1):
                if kc0 + st < kc1: load(st, kc0 + st)
            slot, fill = 0, S - 1
            for kc in range(kc0, kc1):
                nxt = kc + S - 1
                if nxt < kc1: load(fill, nxt)
                fill = 0 if fill + 1 == S else fill + 1
                assert tag[slot] == kc
                a_s, b_s = sA[slot], sB[slot]
                slot = 0 if slot + 1 == S else slot + 1
                for warp in range(8):
                    wm0, wn0 = (warp // BWN) * TM, (warp % BWN) * TN
                    if not (n0 + wn0 < E and t0 + wm0 < T): continue
                    for kk in range(0, BK, 16):
                        def ldm(addr, nmat):   # addr[lane] = (tile, row, col): the lane's row; returns frag[lane][m]
                            return [[(addr[m * 8 + t // 4], 2 * (t % 4)) for m in range(nmat)] for t in range(32)]
                        def rd(tile, rc, off): (r, c) = rc; return (tile[r][c + off], tile[r][c + off + 1])
                        af = {}
                        for i in range(MI):
                            addr = [(wm0 + i * 16 + (l & 15), kk + (l >> 4) * 8) for l in range(32)]
                            fr = ldm(addr, 4)
                            for t in range(32): af[i, t] = [rd(a_s, fr[t][m][0], fr[t][m][1]) for m in range(4)]
                        bf = {}
                        if NI % 2 == 0:
                            for j in range(0, NI, 2):
                                addr = [(wn0 + (j + (l >> 4)) * 8 + (l & 7), kk + ((l >> 3) & 1) * 8) for l in range(32)]
                                fr = ldm(addr, 4)
                                for t in range(32):
                                    r = [rd(b_s, fr[t][m][0], fr[t][m][1]) for m in range(4)]
                                    bf[j, t] = r[0:2]; bf[j + 1, t] = r[2:4]
                        else:
                            for j in range(NI):
                                addr = [(wn0 + j * 8 + (l & 7), kk + ((l >> 3) & 1) * 8) for l in range(32)]
                                fr = ldm(addr, 2)
                                for t in range(32): bf[j, t] = [rd(b_s, fr[t][m][0], fr[t][m][1]) for m in range(2)]
                        for i in range(MI):
                            for j in range(NI):
                                # mma m16n8k16: rebuild A (16x16), B (16 k x 8 n) from the lanes' fragments
                                A = [[None] * 16 for _ in range(16)]; B = [[None] * 8 for _ in range(16)]
                                for t in range(32):
                                    g, tq = t // 4, t % 4
                                    a = af[i, t]
                                    A[g][2*tq], A[g][2*tq+1] = a[0]; A[g+8][2*tq], A[g+8][2*tq+1] = a[1]
                                    A[g][2*tq+8], A[g][2*tq+9] = a[2]; A[g+8][2*tq+8], A[g+8][2*tq+9] = a[3]
                                    b = bf[j, t]
                                    B[2*tq][g], B[2*tq+1][g] = b[0]; B[2*tq+8][g], B[2*tq+9][g] = b[1]
                                for t in range(32):
                                    g, tq = t // 4, t % 4
                                    for q in range(4):
                                        rr, cc = g + (8 if q >= 2 else 0), 2 * tq + (q & 1)
                                        key = (warp, i, j, t, q)
                                        acc[key] = acc.get(key, 0) + sum(A[rr][k] * B[k][cc] for k in range(16))
            # epilogue (float2 pairs)
            for warp in range(8):
                wm0, wn0 = (warp // BWN) * TM, (warp % BWN) * TN
                for i in range(MI):
                    for j in range(NI):
                        for t in range(32):
                            for h in range(2):
                                r = wm0 + i * 16 + (t >> 2) + h * 8
                                col = n0 + wn0 + j * 8 + 2 * (t & 3)
                                v = (acc.get((warp, i, j, t, 2*h), 0), acc.get((warp, i, j, t, 2*h+1), 0))
                                if fused:
                                    assert col + 1 < ld and r < BM
                                    sL[r * ld + col] = v[0]; sL[r * ld + col + 1] = v[1]
                                elif t0 + r < T:
                                    if col < E: part[bz, t0 + r, col] = v[0]
                                    if col + 1 < E: part[bz, t0 + r, col + 1] = v[1]
        if fused:
            for r in range(BM):
                if t0 + r < T:
                    for e in range(E): logits[t0 + r][e] = sL[r * ld + e]
    if not fused:
        for t in range(T):
            for e in range(E): logits[t][e] = sum(part[s, t, e] for s in range(splits))
    want = [[sum(x[t][k] * w[e][k] for k in range(H)) for e in range(E)] for t in range(T)]
    assert logits == want, (T, H, E, MT, NT, WM, BK, S, SPLIT, F, fused, splits)
    return F, fused, splits, chunks

random.seed(3)
cases = [  # T, H, E, MT, NT, WM, BK, S, SPLIT, sms
    (40, 64, 50, 32, 64, 2, 32, 3, 8, 132),    # fold (E <= 32), split
    (40, 64, 50, 32, 64, 2, 32, 3, 8, 1),      # fused (tiles >= sms)
    (70, 48, 100, 32, 64, 2, 32, 3, 1, 1),     # two chunks, fused after stages
    (70, 48, 100, 32, 64, 2, 32, 3, 4, 132),   # two chunks, split
    (33, 128, 24, 16, 64, 1, 64, 4, 2, 132),   # WM 1: kWN 8, x4 B pairs? NI = 1: x2
    (20, 80, 20, 64, 128, 2, 16 * 2, 2, 1, 1), # fold 128 x 64, ragged T
    (130, 64, 256, 128, 256, 2, 64, 4, 1, 1),  # the 128 x 256 tile, fused, 2 token tiles
    (130, 64, 128, 128, 256, 2, 32, 6, 8, 132),# folded to 256 x 128, split
    (30, 40, 7, 16, 64, 1, 32, 2, 8, 132),     # odd E, fold (kWN 8)
]
for c in cases:
    print(c, "-> F, fused, splits, chunks =", run(*c))
print("logits exact for all cases")
