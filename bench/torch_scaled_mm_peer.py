#!/usr/bin/env python3
"""Peer timing for fp8_gemm: PyTorch's torch._scaled_mm (cuBLASLt's fp8 GEMM) on the same shape
and contract — A [M,K] and B [N,K] in e4m3 (or e5m2 A with e4m3 B, as cuBLAS takes no e5m2·e5m2),
per-tensor f32 scales, bf16 (or f16) out — timed like tilegen's profile() (median of runs after
warm-up, CUDA events); bf16 A·Bᵀ by torch.matmul beside it. Prints one line per peer:
    scaled_mm M=.. N=.. K=.. dtype=.. out=.. median_ms=.. tflops=..
Run on the GPU machine beside `tilegen bench fp8_gemm` so both come from one run."""
import argparse

import torch

from torch_sdpa_peer import time_ms  # the same timing as the attention peer (bench/)


def main():
    p = argparse.ArgumentParser()
    for name, default in (("M", 8192), ("N", 8192), ("K", 8192)):
        p.add_argument("--" + name, type=int, default=default)
    p.add_argument("--dtype", choices=("e4m3", "e5m2"), default="e4m3")
    p.add_argument("--out", choices=("bf16", "f16"), default="bf16")
    a = p.parse_args()
    torch.manual_seed(0)
    out = torch.bfloat16 if a.out == "bf16" else torch.float16
    fa = torch.float8_e4m3fn if a.dtype == "e4m3" else torch.float8_e5m2
    x = (torch.rand(a.M, a.K, device="cuda") * 8 - 4).to(fa)
    w = (torch.rand(a.N, a.K, device="cuda") * 8 - 4).to(torch.float8_e4m3fn)
    sa = torch.tensor(0.5, device="cuda")
    sb = torch.tensor(1.5, device="cuda")
    flops = 2.0 * a.M * a.N * a.K
    shape = f"M={a.M} N={a.N} K={a.K} dtype={a.dtype} out={a.out}"
    try:  # B column-major (w.t() of a row-major N×K tensor), as _scaled_mm requires
        ms = time_ms(lambda: torch._scaled_mm(x, w.t(), scale_a=sa, scale_b=sb, out_dtype=out))
        print(f"scaled_mm {shape} median_ms={ms:.4f} tflops={flops / ms / 1e9:.1f}")
    except RuntimeError as e:
        print(f"scaled_mm {shape} unavailable: {str(e).splitlines()[0]}")
    xb, wb = x.to(torch.bfloat16), w.to(torch.bfloat16)
    ms = time_ms(lambda: torch.matmul(xb, wb.t()))
    print(f"matmul_bf16 M={a.M} N={a.N} K={a.K} median_ms={ms:.4f} tflops={flops / ms / 1e9:.1f}")


if __name__ == "__main__":
    main()
