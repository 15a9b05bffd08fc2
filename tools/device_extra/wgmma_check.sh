#!/usr/bin/env bash
# wgmma_check.sh LOG_DIR — the first GPU run of issue 15's wgmma path (sm_90a, off by default:
# TILEGEN_CUDA_WGMMA=1 turns it on for an sm_90 device). Correctness first, then speed, each
# result as soon as it exists (a call that runs out of time still returns the earlier ones):
#   1. the cuda conformance cases of gemm and gemm_relu with wgmma (every dtype and shape, ragged
#      included), then compute-sanitizer racecheck and synccheck on one gemm;
#   2. GEMM f16 4096³ wgmma on and off, interleaved, and bench_cuda_vs_cublas with wgmma on;
#   3. the whole cuda conformance suite with wgmma on; ptxas -v of the sm_90a gemm.
# The text logs end in LOG_DIR/logs.tgz (a call returns at most eight files).
set -u
L=$1
mkdir -p "$L"
BUILD=${TILEGEN_WG_BUILD:-build-wg}
export PATH=/usr/local/cuda/bin:$PATH
bash tools/device_extra/build_cuda_cli.sh "$BUILD" "$L" bench_cuda_vs_cublas || exit 1
TG=$BUILD/bin/tilegen
t() { echo "== $(date +%T) $*"; timeout 300 "$@" 2>&1; echo "== exit $?"; }
{
  for s in gemm gemm_relu; do
    t env TILEGEN_CUDA_WGMMA=1 "$TG" conformance --target cuda --sample $s --json "$L/conformance_$s.json"
  done
  for tool in racecheck synccheck memcheck; do
    t env TILEGEN_CUDA_WGMMA=1 compute-sanitizer --tool $tool --error-exitcode 9 \
      "$TG" run gemm --target cuda --dtype f16 --set M=256,N=256,K=256
  done
} > "$L/correct.txt" 2>&1
{
  for w in 1 0 1 0; do
    t env TILEGEN_CUDA_WGMMA=$w "$TG" bench gemm --target cuda --dtype f16 --set M=4096,N=4096,K=4096 \
      --csv "$L/bench_gemm.csv"
  done
  t env TILEGEN_CUDA_WGMMA=1 "$BUILD/bin/bench_cuda_vs_cublas" "$L/bench_cuda_vs_cublas_wgmma.csv"
} > "$L/speed.txt" 2>&1
{
  t env TILEGEN_CUDA_WGMMA=1 "$TG" conformance --target cuda --json "$L/conformance_cuda.json"
  "$TG" source gemm --target cuda --arch sm_90a --dtype f16 --set M=4096,N=4096,K=4096 --emit asm > "$L/g.ptx" 2>&1
  t ptxas -arch=sm_90a -v "$L/g.ptx" -o "$L/g.cubin"
  rm -f "$L/g.ptx" "$L/g.cubin"
} > "$L/suite.txt" 2>&1
tar -C "$L" -czf "$L/logs.tgz" correct.txt speed.txt suite.txt configure.txt build.txt &&
  rm -f "$L"/{correct,speed,suite,configure,build}.txt
