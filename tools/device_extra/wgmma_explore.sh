#!/usr/bin/env bash
# wgmma_explore.sh LOG_DIR — after wgmma_check.sh passed (issue 15): what the sm_90a gemm needs
# next. compute-sanitizer (memcheck, racecheck, synccheck) on gemm and gemm_relu with wgmma on; the
# whole cuda conformance suite with wgmma off (today's default); a tile sweep of GEMM f16 4096³
# with wgmma on (each config says whether its source has wgmma); 8192³ f16/bf16; one ncu profile
# of the default wgmma gemm. Summaries on stdout; the logs as LOG_DIR/logs.tgz (a call returns
# few files).
set -u
L=$1
mkdir -p "$L/x"
BUILD=${TILEGEN_WG_BUILD:-build-wg}
export PATH=/usr/local/cuda/bin:$PATH
bash tools/device_extra/build_cuda_cli.sh "$BUILD" "$L/x" bench_cuda_vs_cublas || exit 1
TG=$BUILD/bin/tilegen
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
t() { echo "== $(date +%T) $*"; timeout 240 "$@" 2>&1; echo "== exit $?"; }
{
  for s in gemm gemm_relu; do
    for tool in memcheck racecheck synccheck; do
      t env TILEGEN_CUDA_WGMMA=1 compute-sanitizer --tool $tool --error-exitcode 9 \
        "$TG" run $s --target cuda --dtype f16 --set M=200,N=264,K=136
    done
  done
} > "$L/x/sanitizer.txt" 2>&1
grep -E "^== (exit|[0-9])|ERROR SUMMARY|RACECHECK SUMMARY" "$L/x/sanitizer.txt" | paste - - - | head -20
t "$TG" conformance --target cuda --json "$L/conformance_cuda_default.json" > "$L/x/conf_default.txt"
tail -3 "$L/x/conf_default.txt"
S=M=4096,N=4096,K=4096
for cfg in block_M=128,block_N=128,block_K=32,stages=3,threads=128 \
  block_M=128,block_N=128,block_K=32,stages=4,threads=128 \
  block_M=128,block_N=128,block_K=64,stages=3,threads=128 \
  block_M=128,block_N=128,block_K=64,stages=4,threads=128 \
  block_M=128,block_N=256,block_K=32,stages=3,threads=256 \
  block_M=128,block_N=256,block_K=64,stages=3,threads=256 \
  block_M=128,block_N=256,block_K=64,stages=4,threads=256 \
  block_M=256,block_N=128,block_K=64,stages=3,threads=256 \
  block_M=256,block_N=128,block_K=32,stages=4,threads=256 \
  block_M=64,block_N=256,block_K=64,stages=4,threads=128 \
  block_M=128,block_N=192,block_K=64,stages=4,threads=256; do
  n=$(TILEGEN_CACHE_DIR=/tmp/tgc "$TG" source gemm --target cuda --arch sm_90a --dtype f16 --set $S,$cfg 2>&1 | grep -c "tg_wgmma_m64")
  r=$(TILEGEN_CUDA_WGMMA=1 timeout 120 "$TG" bench gemm --target cuda --dtype f16 --set $S,$cfg --csv "$L/sweep.csv" 2>&1 | tail -1)
  echo "sweep $cfg wgmma_calls=$n :: $r"
done
for d in f16 bf16; do
  for w in 1 0; do
    r=$(TILEGEN_CUDA_WGMMA=$w timeout 120 "$TG" bench gemm --target cuda --dtype $d --set M=8192,N=8192,K=8192 --csv "$L/sweep.csv" 2>&1 | tail -1)
    echo "8192 $d wgmma=$w :: $r"
  done
done
t env TILEGEN_CUDA_WGMMA=1 "$NCU" --clock-control none -k regex:gemm -c 1 --section SpeedOfLight \
  --section ComputeWorkloadAnalysis --section Occupancy --section WarpStateStats --section SchedulerStats \
  --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section LaunchStats \
  --section SourceCounters "$TG" bench gemm --target cuda --dtype f16 --set $S --runs 1 --warmup 0 > "$L/x/ncu_gemm.txt"
grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Shared Memory Configuration|Dynamic Shared|Bank" "$L/x/ncu_gemm.txt" | head -30
grep -iE "stall|est\. speedup" "$L/x/ncu_gemm.txt" | head -30
TILEGEN_CACHE_DIR=/tmp/tgc "$TG" source gemm --target cuda --arch sm_90a --dtype f16 --set $S > "$L/x/gemm_sm90a.cu" 2>&1
tar -C "$L" -czf "$L/logs.tgz" x && rm -rf "$L/x"
