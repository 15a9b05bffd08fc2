#!/usr/bin/env python3
"""Peer timing for gemm_relu: torch.relu(a @ b) in f16 or bf16 (cuBLAS's GEMM then an elementwise
kernel, as PyTorch runs it eagerly), A [M,K] and B [K,N] row-major as the sample's, timed like
tilegen's profile() (median of runs after warm-up, CUDA events). Prints one line:
    relu_matmul M=.. N=.. K=.. dtype=.. median_ms=.. tflops=..
Run on the GPU machine beside `tilegen bench gemm_relu` so both come from one run."""
import argparse

import torch

from torch_sdpa_peer import time_ms  # the same timing as the attention peer (bench/)


def main():
    p = argparse.ArgumentParser()
    for name in ("M", "N", "K"):
        p.add_argument("--" + name, type=int, default=4096)
    p.add_argument("--dtype", choices=("f16", "bf16"), default="f16")
    a = p.parse_args()
    torch.manual_seed(0)
    dt = torch.float16 if a.dtype == "f16" else torch.bfloat16
    x = torch.randn(a.M, a.K, device="cuda", dtype=dt)
    w = torch.randn(a.K, a.N, device="cuda", dtype=dt)
    ms = time_ms(lambda: torch.relu(x @ w))
    flops = 2.0 * a.M * a.N * a.K
    print(f"relu_matmul M={a.M} N={a.N} K={a.K} dtype={a.dtype} median_ms={ms:.4f} tflops={flops / ms / 1e9:.1f}")


if __name__ == "__main__":
    main()
