#!/bin/bash
# Writes router.cuda points for sol/moe_router that the tuner's first proposals do not reach (a 128 x 256 tile needs
# three neighbour steps from the default), by setting the tensor-core constants of the rendered default point.
# Usage: docs/results/2026-11-30-h200/router-h22/points.sh KHIVE_TUNE OUT_DIR
set -euo pipefail
tune=$1; out=$2
tmp=$(mktemp -d)
"$tune" render tasks/sol/moe_router --backend cuda --out "$tmp" --per-strategy 1 > /dev/null
base=$(grep -l '^// point: .*MMA_TILE_T=64 MMA_WARPS_M=2 PATH=auto SPLIT_H=8 STAGES=3 TILE_T=16 VEC=8' "$tmp"/*.cu | head -1)
grep -q 'MMA_BK=32 MMA_MIN_T=128 MMA_SPLIT=8 MMA_TILE_E=128' "$base"   # the default point
mkdir -p "$out"
point() {   # name PATH MT NT WM BK STAGES SPLIT
  local f="$out/$1.cu" simt=false mma=false
  [ "$2" = mma ] && mma=true
  sed -e "s/^constexpr bool kPathSimt = .*/constexpr bool kPathSimt = $simt, kPathMma = $mma;/" \
      -e "s/^constexpr int kMT = .*/constexpr int kMT = $3, kNT = $4, kBK = $6, kStages = $7, kMmaSplit = $8;/" \
      -e "s/^constexpr int kWM = [0-9]*,/constexpr int kWM = $5,/" \
      -e "2s/.*/\/\/ point: PATH=$2 MMA_TILE_T=$3 MMA_TILE_E=$4 MMA_WARPS_M=$5 MMA_BK=$6 STAGES=$7 MMA_SPLIT=$8 (others default)/" \
      "$base" > "$f"
  grep -q "kMT = $3, kNT = $4, kBK = $6, kStages = $7, kMmaSplit = $8;" "$f"
  grep -q "kPathMma = $mma;" "$f"
}
point default      auto  64 128 2 32 3 8
point t128e256bk64s4 auto 128 256 2 64 4 8
point t128e256bk32s4 auto 128 256 2 32 4 8
point t128e256bk32s6 auto 128 256 2 32 6 8
point t128e128bk64s4 auto 128 128 2 64 4 8
point t128e256bk64s4-mma mma 128 256 2 64 4 8   # every workload through the tensor cores: odd T, E, tails
rm -rf "$tmp"
ls "$out"
