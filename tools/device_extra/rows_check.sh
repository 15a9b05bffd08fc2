#!/usr/bin/env bash
# rows_check.sh LOG_DIR — a short H200 run for the whole-row softmax/rmsnorm kernels (issue 14:
# ≥ 0.8 of a device-to-device copy): builds the CLI, the cuda plugin and bench_cuda_vs_cublas
# alone (no tests: nothing to bring along), runs the cuda conformance cases of softmax, rmsnorm
# and gemm_softmax, compute-sanitizer memcheck and racecheck on both at a ragged whole-row shape
# (rows over several warps meet in shared scratch), then bench_cuda_vs_cublas (GEMM vs cuBLAS,
# softmax/rmsnorm vs the copy) and one ncu profile of each at its best whole-row tiles.
set -u
L=$1
mkdir -p "$L"
BUILD=${TILEGEN_ROWS_BUILD:-build-rows}
export PATH=/usr/local/cuda/bin:$PATH
bash tools/device_extra/build_cuda_cli.sh "$BUILD" "$L" bench_cuda_vs_cublas || exit 1
TG=$BUILD/bin/tilegen
t() { echo "== $(date +%T) $*"; timeout 300 "$@" 2>&1; echo "== exit $?"; }
{
  t "$TG" conformance --target cuda --sample softmax,rmsnorm,gemm_softmax --json "$L/conformance_rows.json"
  for s in softmax rmsnorm; do
    for tool in memcheck racecheck; do
      t compute-sanitizer --tool $tool --error-exitcode 1 "$TG" run $s --target cuda \
        --set M=37,N=1000,block_M=1,block_N=1024,threads=256
    done
  done
  t "$BUILD/bin/bench_cuda_vs_cublas" "$L/bench_cuda_vs_cublas.csv"
} > "$L/rows.txt"
for s in softmax rmsnorm; do
  "$TG" source $s --target cuda --dtype f16 --set M=8192,N=8192,block_M=1,block_N=8192,threads=256 > "$L/${s}_row.cu" 2>&1
  t ncu --clock-control none -k regex:$s -c 1 --section SpeedOfLight --section Occupancy \
    --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats \
    "$TG" bench $s --target cuda --dtype f16 --set M=8192,N=8192,block_M=1,block_N=8192,threads=256 \
    --runs 1 --warmup 0 > "$L/${s}_row_ncu.txt"
done
