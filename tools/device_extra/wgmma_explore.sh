#!/usr/bin/env bash
# wgmma_explore.sh LOG_DIR BASE_DIR — issue 15's sm_90a GEMM against an earlier commit, and what it
# needs next, in one call (at most ~9 minutes; later steps are skipped past 540 s):
#   1. builds the tilegen CLI and cuda plugin of this tree and of BASE_DIR (a clean snapshot of the
#      commit to compare with: `git archive <commit> | tar x -C BASE_DIR`) side by side;
#   2. GEMM f16/bf16 at 4096³ and 8192³, base, new, new, base interleaved (the base with
#      TILEGEN_CUDA_WGMMA=1: wgmma was off by default before 2026-12-06), and bench_cuda_vs_cublas;
#   3. compute-sanitizer memcheck, racecheck, synccheck on gemm and gemm_relu (ragged) with wgmma;
#   4. the whole cuda conformance suite (wgmma on, the default); with TILEGEN_CUDA_TMA=1 (bulk
#      tensor copies on mbarriers, not yet run on a GPU before this) the gemm samples' conformance,
#      compute-sanitizer on one gemm and GEMM f16 4096³ against the default, interleaved;
#   5. a tile sweep of GEMM f16 4096³ (each config says whether its source has wgmma);
#   6. one ncu profile of the default gemm.
# Summaries on stdout; text logs in LOG_DIR/logs.tgz (a call returns at most eight files).
set -u
L=$1 BASE=$2
LATE_S=540
source tools/device_extra/call_common.sh
bash tools/device_extra/build_cuda_cli.sh $B "$L/x/new" bench_cuda_vs_cublas &
(cd "$BASE" && bash tools/device_extra/build_cuda_cli.sh $B "$L/x/base") &
wait
TG=$B/bin/tilegen TB=$BASE/$B/bin/tilegen
[ -x "$TG" ] && [ -x "$TB" ] || { echo "build failed"; tail -20 "$L"/x/*/build.txt; exit 1; }
echo "built at +$(($(date +%s) - START)) s"
for d in f16 bf16; do
  for n in 4096 8192; do
    for who in base new new base; do
      if [ $who = base ]; then X="env TILEGEN_CUDA_WGMMA=1 $TB"; else X=$TG; fi
      r=$($X bench gemm --target cuda --dtype $d --set M=$n,N=$n,K=$n --csv "$L/x/ab_$who.csv" 2>&1 | grep -E "median|TFLOP" | tr '\n' ' ')
      echo "ab $d $n $who :: $r"
    done
  done
done
t "$B/bin/bench_cuda_vs_cublas" "$L/bench_cuda_vs_cublas.csv" > "$L/x/cublas.txt"
cat "$L/bench_cuda_vs_cublas.csv"
{
  for s in gemm gemm_relu; do
    for tool in memcheck racecheck synccheck; do
      t compute-sanitizer --tool $tool --error-exitcode 9 "$TG" run $s --target cuda --dtype f16 --set M=200,N=264,K=136
    done
  done
} > "$L/x/sanitizer.txt" 2>&1
grep -E "^== exit|ERROR SUMMARY|RACECHECK SUMMARY" "$L/x/sanitizer.txt" | tr '\n' ' '; echo
late || { t "$TG" conformance --target cuda --json "$L/conformance_cuda.json" > "$L/x/conf.txt"; tail -2 "$L/x/conf.txt"; }
S=M=4096,N=4096,K=4096
if ! late; then
  for s in gemm gemm_relu gemm_softmax; do
    t env TILEGEN_CUDA_TMA=1 "$TG" conformance --target cuda --sample $s --json "$L/x/conf_tma_$s.json" | tail -2
  done
  for tool in memcheck racecheck synccheck; do
    t env TILEGEN_CUDA_TMA=1 compute-sanitizer --tool $tool --error-exitcode 9 "$TG" run gemm --target cuda \
      --dtype f16 --set M=256,N=264,K=128 > "$L/x/tma_$tool.txt" 2>&1
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL" "$L/x/tma_$tool.txt" | head -3
  done
  for w in 0 1 0 1; do
    r=$(TILEGEN_CUDA_TMA=$w "$TG" bench gemm --target cuda --dtype f16 --set $S 2>&1 | grep -E "median|rror" | tr '\n' ' ')
    echo "tma=$w 4096 f16 :: $r"
  done
fi
for cfg in block_M=128,block_N=128,block_K=32,stages=4,threads=128 \
  block_M=128,block_N=128,block_K=64,stages=3,threads=128 \
  block_M=128,block_N=128,block_K=64,stages=4,threads=128 \
  block_M=128,block_N=256,block_K=32,stages=3,threads=256 \
  block_M=128,block_N=256,block_K=64,stages=3,threads=256 \
  block_M=128,block_N=256,block_K=64,stages=4,threads=256 \
  block_M=256,block_N=128,block_K=64,stages=3,threads=256 \
  block_M=256,block_N=128,block_K=32,stages=4,threads=256 \
  block_M=64,block_N=256,block_K=64,stages=4,threads=128 \
  block_M=128,block_N=192,block_K=64,stages=4,threads=256; do
  late && break
  n=$(TILEGEN_CACHE_DIR=/tmp/tgc "$TG" source gemm --target cuda --arch sm_90a --dtype f16 --set $S,$cfg 2>&1 | grep -c "tg_wgmma_m64")
  r=$(timeout 60 "$TG" bench gemm --target cuda --dtype f16 --set $S,$cfg --csv "$L/sweep.csv" 2>&1 | grep -E "median|TFLOP|rror" | tr '\n' ' ')
  echo "sweep $cfg wgmma_lines=$n :: $r"
done
if ! late; then
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  t "$NCU" --clock-control none -k regex:gemm -c 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section Occupancy --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
    --section LaunchStats --section SourceCounters "$TG" bench gemm --target cuda --dtype f16 --set $S --runs 1 \
    --warmup 0 > "$L/x/ncu_gemm.txt"
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Block Limit" "$L/x/ncu_gemm.txt" | head -24
  grep -iE "stall|est\. speedup" "$L/x/ncu_gemm.txt" | head -16
fi
TILEGEN_CACHE_DIR=/tmp/tgc "$TG" source gemm --target cuda --arch sm_90a --dtype f16 --set $S > "$L/x/gemm_sm90a.cu" 2>&1
tar -C "$L" -czf "$L/logs.tgz" x && rm -rf "$L/x"
echo "done at +$(($(date +%s) - START)) s"
