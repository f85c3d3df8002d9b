# Emulates ldmatrix (m8n8 .b16): lane l supplies the row address of row l%8 of matrix l//8; lane t receives, per
# matrix, the two 16-bit elements at (row t//4, cols 2*(t%4), +1). Compares the x2-per-tile B fragments with the
# x4-per-tile-pair ones, for the smem tile B[expert][k] (labels (expert, k)).
def ldmatrix(addrs, nmat):
    out = [[None]*nmat for _ in range(32)]
    for m in range(nmat):
        for t in range(32):
            (e, k) = addrs[m*8 + t//4]
            out[t][m] = ((e, k + 2*(t % 4)), (e, k + 2*(t % 4) + 1))
    return out
kNI, wn0, kk = 8, 64, 16
x2 = {}
for j in range(kNI):
    addrs = [(wn0 + j*8 + (l & 7), kk + ((l >> 3) & 1)*8) for l in range(32)]
    r = ldmatrix(addrs, 2)
    for t in range(32): x2[(t, j)] = (r[t][0], r[t][1])
x4 = {}
for j in range(0, kNI, 2):
    addrs = [(wn0 + (j + (l >> 4))*8 + (l & 7), kk + ((l >> 3) & 1)*8) for l in range(32)]
    r = ldmatrix(addrs, 4)
    for t in range(32):
        x4[(t, j)] = (r[t][0], r[t][1]); x4[(t, j+1)] = (r[t][2], r[t][3])
# mma m16n8k16 .col B fragment: b0 = B[k = 2*(t%4) + {0,1}][n = t//4], b1 = same with k + 8
for t in range(32):
    for j in range(kNI):
        n = wn0 + j*8 + t//4
        want = (((n, kk + 2*(t%4)), (n, kk + 2*(t%4) + 1)), ((n, kk + 8 + 2*(t%4)), (n, kk + 8 + 2*(t%4) + 1)))
        assert x2[(t, j)] == want and x4[(t, j)] == want, (t, j, x2[(t, j)], x4[(t, j)], want)
print("B fragments: x4 pairs == x2 == mma layout for all lanes and tiles")
