#!/usr/bin/env bash
# cpu_bf16_table.sh BIN LOG_DIR — for tools/device_check.sh (TILEGEN_CPU_EXTRA): bench_cpu's bf16
# and fp32 GEMM tables alone (the sample's tiles for this CPU), 1, 2 and 16 threads.
set -u
BIN=$1 LOG=$2
"$BIN/bench_cpu" --only gemm,bf16 --sizes 1024,2048 --threads 1,2,16 > "$LOG/extra_bf16_table.txt" 2>&1
echo done
