#!/usr/bin/env bash
# cpu_issue_commands.sh BIN LOG_DIR — for tools/device_check.sh (TILEGEN_CPU_EXTRA): issue 3's own
# commands (`tilegen bench gemm ... --vs openblas|onednn`, the sample's tiles as tuned for this
# CPU) on 1, 2 and 16 threads, and softmax against oneDNN.
set -u
BIN=$1 LOG=$2
for t in 1 2 16; do
  "$BIN/tilegen" bench gemm --target cpu --set M=2048,N=2048,K=2048 --dtype f32 --vs openblas --threads $t --check
  "$BIN/tilegen" bench gemm --target cpu --set M=2048,N=2048,K=2048 --dtype bf16 --vs onednn --threads $t --check
  "$BIN/tilegen" bench softmax --target cpu --set M=4096,N=4096 --vs onednn --threads $t
done > "$LOG/extra_issue_commands.txt" 2>&1
echo done
