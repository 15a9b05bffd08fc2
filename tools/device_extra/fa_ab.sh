#!/usr/bin/env bash
# fa_ab.sh LOG_DIR BASE_DIR [PART] — flash_attention before and after a change, in one call on one
# GPU (issue 14: ≥ 0.6× SDPA's cuDNN back-end): builds the tilegen CLI and the cuda plugin of this
# tree (build-fa) and of BASE_DIR (a clean snapshot of the commit to compare with, e.g.
# `git archive <commit> | tar x -C BASE_DIR`), then runs `tilegen bench flash_attention` f16/bf16
# non-causal/causal at B8 H16 S4096 D128 as base, new, SDPA (bench/torch_sdpa_peer.py), new,
# base — interleaved, so that clock and thermal drift fall on both sides alike — tile variants
# of the new code and its loop's SASS mix. PART=2 runs what is left for a second call on the warm machine: ncu of the new
# f16 kernel with its stall reasons, the GEMM bench (no regression) and the cuda conformance suite.
set -u
L=$1 BASE=$2 PART=${3:-1}
mkdir -p "$L"
export PATH=/usr/local/cuda/bin:$PATH
TG=build-fa/bin/tilegen TB=$BASE/build-fa/bin/tilegen
t() { echo "== $(date +%T) $*"; timeout 300 "$@" 2>&1; echo "== exit $?"; }
SHAPE=B=8,H=16,HKV=16,S=4096,D=128
if [ "$PART" = 1 ]; then
  bash tools/device_extra/build_cuda_cli.sh build-fa "$L/new" bench_cuda_vs_cublas &
  (cd "$BASE" && bash tools/device_extra/build_cuda_cli.sh build-fa "$L/base") &
  wait
  [ -x "$TG" ] && [ -x "$TB" ] || { echo "build failed"; tail -20 "$L"/*/build.txt; exit 1; }
  {
    for dt in f16 bf16; do
      for causal in 0 1; do
        for who in base new sdpa new base; do
          case $who in
            base) t "$TB" bench flash_attention --target cuda --dtype $dt --set $SHAPE,causal=$causal ;;
            new) t "$TG" bench flash_attention --target cuda --dtype $dt --set $SHAPE,causal=$causal \
                   --csv "$L/bench_flash_attention.csv" ;;
            sdpa) t python3 bench/torch_sdpa_peer.py --B 8 --H 16 --HKV 16 --S 4096 --D 128 --causal $causal \
                    --dtype $dt ;;
          esac
        done
      done
    done
    # Tile and warp variants of the new code, f16 non-causal: 8 warps of 16 rows each (twice the
    # warps to hide latency, twice the K/V reads from shared memory), 8 warps of 32 rows.
    for v in threads=256 block_M=256,threads=256 block_M=128,block_N=32; do
      t "$TG" bench flash_attention --target cuda --dtype f16 --set $SHAPE,$v
    done
    for causal in 0 1; do
      "$TG" source flash_attention --target cuda --dtype f16 --set $SHAPE,causal=$causal,block_M=128 --emit asm \
        > "$L/fa_c$causal.ptx" 2>&1
      t ptxas -arch=sm_90 -v "$L/fa_c$causal.ptx" -o "$L/fa_c$causal.cubin"
      cuobjdump -sass "$L/fa_c$causal.cubin" > "$L/fa_c$causal.sass" 2>&1
      grep -oE '/\*[0-9a-f]{4,}\*/\s+(@!?U?P[T0-9]\s+)?[A-Z0-9_.]+' "$L/fa_c$causal.sass" | awk '{print $NF}' |
        sed 's/\..*//' | sort | uniq -c | sort -rn | head -30 > "$L/fa_c${causal}_sass_mix.txt"
    done
    rm -f "$L"/*.ptx "$L"/*.cubin
  } > "$L/ab.txt" 2>&1
else
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  {
    t "$NCU" --clock-control none -k regex:flash -c 1 --section SpeedOfLight --section WarpStateStats \
      --section SchedulerStats --section Occupancy --print-details all \
      "$TG" bench flash_attention --target cuda --dtype f16 --set $SHAPE,causal=0 --runs 1 --warmup 0
    t build-fa/bin/bench_cuda_vs_cublas "$L/bench_cuda_vs_cublas.csv"
    t "$TG" conformance --target cuda --json "$L/conformance_cuda.json"
  } > "$L/part2.txt" 2>&1
fi
