#!/usr/bin/env bash
# tma_check.sh LOG_DIR — issue 15: whether bulk tensor copies (TMA) can become the sm_90 default,
# and which tiles go with them, in one call (at most ~8 minutes; later steps skipped past 460 s):
#   1. builds the tilegen CLI, the cuda plugin and bench_cuda_vs_cublas;
#   2. the whole cuda conformance suite with TILEGEN_CUDA_TMA=1, then ragged runs of gemm and
#      gemm_relu with the wgmma default tiles (block_K=64) with and without TMA;
#   3. bench_cuda_vs_cublas with TMA off, then on (default tiles: block_K=64 on wgmma devices);
#   4. compute-sanitizer memcheck, racecheck, synccheck with TMA on gemm_relu (ragged, 64-wide K
#      steps) and gemm (trans_B);
#   5. a tile sweep of GEMM f16 4096³ with TMA, and the two best at 8192³;
#   6. one ncu profile of the TMA default with the warp stall reasons;
#   warp roles (TILEGEN_CUDA_WARP_ROLES=1 beside TMA): the gemm-like samples' conformance, the
#   ragged runs (after step 2), bench_cuda_vs_cublas (step 3), racecheck and synccheck (step 4)
#   and four tiles of the sweep (after step 5); wgmma with B K-major (TILEGEN_CUDA_WGMMA_TRANS_B=1):
#   gemm's conformance, ragged runs, trans_B 4096³ timed against mma.sync (before step 3).
#   logs.tgz is rewritten after each step.
# Summaries on stdout; text logs in LOG_DIR/logs.tgz (a call returns at most eight files).
set -u
L=$1
LATE_S=460
source tools/device_extra/call_common.sh
pack() { tar -C "$L" -czf "$L/logs.tgz" x; }  # the logs so far, should the call end early
bash tools/device_extra/build_cuda_cli.sh $B "$L/x/build" bench_cuda_vs_cublas || exit 1
TG=$B/bin/tilegen
echo "built at +$(($(date +%s) - START)) s"
t env TILEGEN_CUDA_TMA=1 "$TG" conformance --target cuda --json "$L/conformance_cuda_tma.json" > "$L/x/conf_tma.txt"
tail -2 "$L/x/conf_tma.txt"
pack
for w in 0 1; do
  for run in "gemm --set M=200,N=264,K=136" "gemm --set M=130,N=257,K=200,trans_B=1" \
    "gemm --set M=257,N=136,K=72,trans_A=1" "gemm_relu --set M=200,N=264,K=136" \
    "gemm --dtype bf16 --set M=384,N=392,K=520"; do
    r=$(TILEGEN_CUDA_TMA=$w timeout 60 "$TG" run $run --target cuda 2>&1 | grep -E "PASS|FAIL|rror|max" | tr '\n' ' ')
    echo "tma=$w run $run :: $r"
  done
done
t env TILEGEN_CUDA_TMA=1 TILEGEN_CUDA_WARP_ROLES=1 "$TG" conformance --target cuda \
  --sample gemm,gemm_relu,gemm_softmax,dequant_gemm > "$L/x/conf_roles.txt"
tail -2 "$L/x/conf_roles.txt"
for run in "gemm --set M=200,N=264,K=520" "gemm --set M=130,N=257,K=456,trans_B=1" \
  "gemm --set M=264,N=136,K=392,trans_A=1" "gemm_relu --set M=200,N=264,K=520" \
  "gemm --dtype bf16 --set M=384,N=392,K=520" "gemm_softmax --set M=96,N=128,K=512"; do
  r=$(TILEGEN_CUDA_TMA=1 TILEGEN_CUDA_WARP_ROLES=1 timeout 60 "$TG" run $run --target cuda 2>&1 | grep -E "PASS|FAIL|rror|max" | tr '\n' ' ')
  echo "roles run $run :: $r"
done
# wgmma with B K-major (TILEGEN_CUDA_WGMMA_TRANS_B=1): gemm's conformance with it, ragged trans_B
# runs, and trans_B 4096³ with mma.sync (off), wgmma, wgmma + TMA + warp roles.
t env TILEGEN_CUDA_WGMMA_TRANS_B=1 "$TG" conformance --target cuda --sample gemm > "$L/x/conf_transb.txt"
tail -2 "$L/x/conf_transb.txt"
for env in "TILEGEN_CUDA_WGMMA_TRANS_B=1" "TILEGEN_CUDA_WGMMA_TRANS_B=1 TILEGEN_CUDA_TMA=1 TILEGEN_CUDA_WARP_ROLES=1"; do
  for run in "gemm --set M=200,N=136,K=328,trans_B=1" "gemm --dtype bf16 --set M=384,N=392,K=520,trans_B=1"; do
    r=$(env $env timeout 60 "$TG" run $run --target cuda 2>&1 | grep -E "PASS|FAIL|rror|max" | tr '\n' ' ')
    echo "$env run $run :: $r"
  done
done
for env in "TILEGEN_CUDA_WGMMA_TRANS_B=0" "TILEGEN_CUDA_WGMMA_TRANS_B=1" \
  "TILEGEN_CUDA_WGMMA_TRANS_B=1 TILEGEN_CUDA_TMA=1 TILEGEN_CUDA_WARP_ROLES=1"; do
  r=$(env $env timeout 60 "$TG" bench gemm --target cuda --dtype f16 --set M=4096,N=4096,K=4096,trans_B=1 \
    --csv "$L/x/transb.csv" 2>&1 | grep -E "median|rror" | tr '\n' ' ')
  echo "trans_B 4096 $env :: $r"
done
# gemm_softmax on wgmma (TILEGEN_CUDA_WGMMA_ROWS=1): its conformance, and its bench shape off / on.
t env TILEGEN_CUDA_WGMMA_ROWS=1 "$TG" conformance --target cuda --sample gemm_softmax > "$L/x/conf_rows.txt"
tail -2 "$L/x/conf_rows.txt"
for w in 0 1; do
  r=$(TILEGEN_CUDA_WGMMA_ROWS=$w timeout 60 "$TG" bench gemm_softmax --target cuda --dtype f16 2>&1 | grep -E "median|rror" | tr '\n' ' ')
  echo "gemm_softmax wgmma_rows=$w :: $r"
done
pack
t "$B/bin/bench_cuda_vs_cublas" "$L/bench_cuda_vs_cublas.csv" > "$L/x/cublas0.txt"
cat "$L/bench_cuda_vs_cublas.csv"
t env TILEGEN_CUDA_TMA=1 "$B/bin/bench_cuda_vs_cublas" "$L/bench_cuda_vs_cublas_tma.csv" > "$L/x/cublas1.txt"
cat "$L/bench_cuda_vs_cublas_tma.csv"
t env TILEGEN_CUDA_TMA=1 TILEGEN_CUDA_WARP_ROLES=1 "$B/bin/bench_cuda_vs_cublas" "$L/bench_cuda_vs_cublas_roles.csv" \
  > "$L/x/cublas2.txt"
cat "$L/bench_cuda_vs_cublas_roles.csv"
pack
late || {
  for tool in racecheck synccheck; do
    t env TILEGEN_CUDA_TMA=1 TILEGEN_CUDA_WARP_ROLES=1 compute-sanitizer --tool $tool --error-exitcode 9 "$TG" run gemm \
      --target cuda --dtype f16 --set M=200,N=264,K=520
  done
  for tool in memcheck racecheck synccheck; do
    t env TILEGEN_CUDA_TMA=1 compute-sanitizer --tool $tool --error-exitcode 9 "$TG" run gemm_relu --target cuda \
      --dtype f16 --set M=200,N=264,K=136
    t env TILEGEN_CUDA_TMA=1 compute-sanitizer --tool $tool --error-exitcode 9 "$TG" run gemm --target cuda \
      --dtype f16 --set M=130,N=257,K=200,trans_B=1
  done
} > "$L/x/sanitizer.txt" 2>&1
grep -E "^== exit|ERROR SUMMARY|RACECHECK SUMMARY" "$L/x/sanitizer.txt" | tr '\n' ' '; echo
pack
S=M=4096,N=4096,K=4096
for cfg in block_K=64,stages=4 block_M=128,block_N=256,block_K=64,stages=4,threads=256 \
  block_M=128,block_N=256,block_K=64,stages=3,threads=256 block_K=64,stages=3; do
  late && break
  r=$(TILEGEN_CUDA_TMA=1 TILEGEN_CUDA_WARP_ROLES=1 timeout 60 "$TG" bench gemm --target cuda --dtype f16 --set $S,$cfg \
    --csv "$L/sweep_roles.csv" 2>&1 | grep -E "median|rror" | tr '\n' ' ')
  echo "sweep roles $cfg :: $r"
done
pack
for cfg in block_K=32,stages=4 block_K=64,stages=3 block_K=64,stages=4 block_K=64,stages=5 block_K=128,stages=2 \
  block_K=128,stages=3 block_M=128,block_N=256,block_K=64,stages=3,threads=256 \
  block_M=128,block_N=256,block_K=64,stages=4,threads=256 block_M=256,block_N=128,block_K=64,stages=3,threads=256 \
  block_M=64,block_N=256,block_K=64,stages=4,threads=128 block_M=128,block_N=64,block_K=64,stages=6,threads=128 \
  block_M=256,block_N=128,block_K=64,stages=4,threads=256; do
  late && break
  r=$(TILEGEN_CUDA_TMA=1 timeout 60 "$TG" bench gemm --target cuda --dtype f16 --set $S,$cfg --csv "$L/sweep_tma.csv" 2>&1 | grep -E "median|rror" | tr '\n' ' ')
  echo "sweep tma $cfg :: $r"
done
if ! late; then
  best=$(sort -t, -k8,8g "$L/sweep_tma.csv" 2>/dev/null | grep -v '^date' | head -2 | sed -E 's/.*"(K=[^"]*)".*/\1/')
  for p in $best; do
    q=$(echo "$p" | sed -E 's/K=4096,M=4096,N=4096/K=8192,M=8192,N=8192/')
    for w in 0 1; do
      r=$(TILEGEN_CUDA_TMA=$w timeout 60 "$TG" bench gemm --target cuda --dtype f16 --set $q 2>&1 | grep -E "median|rror" | tr '\n' ' ')
      echo "8192 tma=$w $q :: $r"
    done
  done
fi
if ! late; then
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  t env TILEGEN_CUDA_TMA=1 "$NCU" --clock-control none -k regex:gemm -c 1 --section SpeedOfLight --section Occupancy \
    --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
    --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio \
    "$TG" bench gemm --target cuda --dtype f16 --set $S --runs 1 --warmup 0 > "$L/x/ncu_gemm_tma.txt"
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|No Eligible|Warp Cycles Per Issued" "$L/x/ncu_gemm_tma.txt" | head -12
  grep -E "issue_stalled" "$L/x/ncu_gemm_tma.txt" | sort -k3 -g -r | head -10
fi
TILEGEN_CUDA_TMA=1 TILEGEN_CACHE_DIR=/tmp/tgc "$TG" source gemm --target cuda --arch sm_90a --param tma=1 --dtype f16 \
  --set $S,block_K=64 > "$L/x/gemm_sm90a_tma.cu" 2>&1
tar -C "$L" -czf "$L/logs.tgz" x && rm -rf "$L/x"
echo "done at +$(($(date +%s) - START)) s"
