# Run: python3 tests/emulation/attention_decode_ring.py (about 30 s). kernels/attention/cuda_decode.cu.in, STAGES > 0.
# Lane-level emulation of the cp.async ring in khive_decode_split (kStages > 0): cp.async writes land at an arbitrary
# later time, but no later than the wait_group that covers their group; checks every lane reads, in every iteration,
# exactly the K/V rows (or zero fill) the register path would load, and no in-flight copy targets a slot being read.
import itertools, random
def run(D, LD, U, W, S, Skv, chunk, s):
    Lpr = D // LD; Rpw = 32 // Lpr; WK = Rpw * U; CK = WK * W; vecs = LD // 8
    j_begin = s * chunk; j_end = min(j_begin + chunk, Skv)
    for warp in range(W):
        base0 = j_begin + warp * WK
        n_it = (j_end - base0 + CK - 1) // CK if base0 < j_end else 0
        # slot contents: (stage, tensor, u, vv, lane) -> value; pending groups: list of lists of writes
        smem = {}; groups = []; cur = []
        def issue(it):
            if it < n_it:
                st = it % S; base = base0 + it * CK
                for u in range(U):
                    for lane in range(32):
                        rl, cl = lane // Lpr, lane % Lpr
                        j = base + u * Rpw + rl
                        for vv in range(vecs):
                            val = ('K', j, cl * LD + vv * 8) if j < j_end else 0
                            cur.append(((st, u, vv, lane), val, it))
            groups.append(list(cur)); cur.clear()
        def wait(n):  # all but the newest n groups complete; the others may land at any time (random)
            while len(groups) > n:
                for key, val, it in groups.pop(0): smem[key] = val
            for g in groups:  # some in-flight copies land early
                for w in list(g):
                    if random.random() < 0.5: smem[w[0]] = w[1]; g.remove(w)
        for st in range(S - 1): issue(st)
        seen = 0
        for it in range(n_it):
            issue(it + S - 1); wait(S - 1)
            st = it % S; base = base0 + it * CK
            for g in groups:  # nothing in flight may target the slot read now
                assert all(w[0][0] != st for w in g), ("in-flight write to read slot", it)
            for u in range(U):
                for lane in range(32):
                    rl, cl = lane // Lpr, lane % Lpr
                    j = base + u * Rpw + rl
                    for vv in range(vecs):
                        want = ('K', j, cl * LD + vv * 8) if j < j_end else 0
                        assert smem.get((st, u, vv, lane)) == want, (D, LD, U, W, S, Skv, chunk, s, warp, it, u, lane)
                        if j < j_end: seen += 1
            # same coverage as the register loop: for base in range(base0, j_end, CK)
        assert n_it == len(range(base0, j_end, CK))
    return True
random.seed(1); n = 0
for D, LD, U, W, S in itertools.product([64, 128], [8, 16], [1, 2, 4], [4, 8], [2, 3, 4, 6]):
    CK = (32 // (D // LD)) * U * W
    for Skv in [1, 7, 130, 1000, 4096 + 3]:
        for splits in [1, 3, 8]:
            chunk = -(-Skv // splits); chunk = -(-chunk // CK) * CK; sp = -(-Skv // chunk)
            for s in range(sp): run(D, LD, U, W, S, Skv, chunk, s); n += 1
print("ok", n, "CTA ranges emulated")
