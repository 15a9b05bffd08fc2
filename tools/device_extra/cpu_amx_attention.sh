#!/usr/bin/env bash
# cpu_amx_attention.sh BIN LOG_DIR — for tools/device_check.sh (TILEGEN_CPU_EXTRA): bf16 GEMM and
# flash_attention with AMX tiles on and off, and bf16 GEMM with a larger K tile, on an AMX CPU.
set -u
BIN=$1 LOG=$2
"$BIN/bench_cpu" --only bf16,attention --sizes 2048 --threads 1,2,16 --block 192,256,256 > "$LOG/extra_amx_on.txt" 2>&1
TILEGEN_CPU_AMX=0 "$BIN/bench_cpu" --only attention --sizes 2048 --threads 1,2,16 > "$LOG/extra_amx_off.txt" 2>&1
"$BIN/bench_cpu" --only attention --sizes 2048 --threads 1,2,16 > "$LOG/extra_amx_on_attention.txt" 2>&1
echo done
