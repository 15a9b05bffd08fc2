#!/usr/bin/env bash
# fa_registers.sh BUILD_DIR LOG_DIR — after tools/device_check.sh's cuda section: flash_attention
# with P in registers (issue 14) under compute-sanitizer (memcheck, racecheck) at the sanitizer
# shape and a causal ragged one, then its tile variants at B8 H16 S4096 D128 (f16, non-causal and
# causal) so the bench default can be chosen from measurements, with nvidia-smi's SM clock
# sampled beside them (LOG_DIR/fa/clocks.csv), and one ncu profile of the default (LOG_DIR/fa/ncu.txt).
set -u
B=$1/bin L=$2/fa
mkdir -p "$L"
SAN=${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer
t() { echo "== $(date +%T) $*"; timeout 120 "$@" 2>&1; echo "== exit $?"; }
{
  for tool in memcheck racecheck; do
    t "$SAN" --tool $tool --error-exitcode 1 "$B/tilegen" run flash_attention --target cuda --set B=1,H=4,HKV=2,S=200,D=64
    t "$SAN" --tool $tool --error-exitcode 1 "$B/tilegen" run flash_attention --target cuda --set B=1,H=2,HKV=1,S=333,D=128,causal=1 --dtype bf16
    # the other kernels issue 14 moved into registers: rows copied in (SIMT layout), a fused row softmax
    t "$SAN" --tool $tool --error-exitcode 1 "$B/tilegen" run softmax --target cuda --set M=100,N=1000
    t "$SAN" --tool $tool --error-exitcode 1 "$B/tilegen" run rmsnorm --target cuda --set M=100,N=1000
    t "$SAN" --tool $tool --error-exitcode 1 "$B/tilegen" run gemm_softmax --target cuda --set M=1000,N=100,K=256
  done
} > "$L/sanitizer.txt"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,utilization.gpu --format=csv -lms 200 > "$L/clocks.csv" 2>&1 &
SMI=$!
S=B=8,H=16,HKV=16,S=4096,D=128
{
  for causal in 0 1; do
    for v in block_M=64,threads=128 block_M=128,threads=128 block_M=128,threads=256 block_M=128,block_N=128,threads=256 \
             block_M=64,threads=128,stages=3 block_M=128,threads=256,stages=3; do
      t "$B/tilegen" bench flash_attention --target cuda --set $S,causal=$causal,$v
    done
  done
} > "$L/variants.txt"
kill $SMI 2>/dev/null
# What bounds the default configuration: one profiled launch (clocks left alone, METHOD.md).
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
{
  t "$NCU" --clock-control none -k regex:flash_attention -c 1 --section SpeedOfLight --section Occupancy \
    --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
    --section ComputeWorkloadAnalysis --section LaunchStats \
    "$B/tilegen" bench flash_attention --target cuda --set $S,causal=0 --runs 1 --warmup 0
} > "$L/ncu.txt"
