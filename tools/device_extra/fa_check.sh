#!/usr/bin/env bash
# fa_check.sh LOG_DIR — a short H200 run for flash_attention (issue 14: ≥ 0.6× SDPA's cuDNN
# back-end): builds the CLI, the cuda plugin and bench_cuda_vs_cublas alone (no tests), runs
# `tilegen bench flash_attention` f16/bf16
# non-causal/causal at B8 H16 S4096 D128 each beside PyTorch SDPA (bench/torch_sdpa_peer.py),
# the f16 tile variants, bench_cuda_vs_cublas (GEMM: no regression),
# ptxas's resource use and, last (the figures come back first when a call runs out of time), the
# whole cuda conformance suite.
set -u
L=$1
mkdir -p "$L"
BUILD=${TILEGEN_FA_BUILD:-build-fa}
export PATH=/usr/local/cuda/bin:$PATH
bash tools/device_extra/build_cuda_cli.sh "$BUILD" "$L" bench_cuda_vs_cublas || exit 1
TG=$BUILD/bin/tilegen
t() { echo "== $(date +%T) $*"; timeout 300 "$@" 2>&1; echo "== exit $?"; }
SHAPE=B=8,H=16,HKV=16,S=4096,D=128
{
  for dt in f16 bf16; do
    for causal in 0 1; do
      t "$TG" bench flash_attention --target cuda --dtype $dt --set $SHAPE,causal=$causal --csv "$L/bench_flash_attention.csv"
      t python3 bench/torch_sdpa_peer.py --B 8 --H 16 --HKV 16 --S 4096 --D 128 --causal $causal --dtype $dt
    done
  done
  for v in block_M=64 block_M=128,block_N=32 block_M=64,block_N=128; do
    t "$TG" bench flash_attention --target cuda --dtype f16 --set $SHAPE,$v
  done
  t "$BUILD/bin/bench_cuda_vs_cublas" "$L/bench_cuda_vs_cublas.csv"
  for causal in 0 1; do
    "$TG" source flash_attention --target cuda --dtype f16 --set $SHAPE,causal=$causal,block_M=128 --emit asm > "$L/fa_c$causal.ptx" 2>&1
    t ptxas -arch=sm_90 -v "$L/fa_c$causal.ptx" -o "$L/fa_c$causal.cubin"
    # The main loop's SASS, instruction mix (what issue slots go to besides HMMA).
    cuobjdump -sass "$L/fa_c$causal.cubin" > "$L/fa_c$causal.sass" 2>&1
    grep -oE '/\*[0-9a-f]{4,}\*/\s+(@!?U?P[T0-9]\s+)?[A-Z0-9_.]+' "$L/fa_c$causal.sass" | awk '{print $NF}' | sed 's/\..*//' |
      sort | uniq -c | sort -rn | head -30 > "$L/fa_c${causal}_sass_mix.txt"
  done
  t "$TG" conformance --target cuda --json "$L/conformance_cuda.json"
} > "$L/fa.txt" 2>&1
rm -f "$L"/*.ptx "$L"/*.cubin
