#!/usr/bin/env python3
"""Peer timing for flash_attention: PyTorch's scaled_dot_product_attention on the same shape,
with the cuDNN and FlashAttention-2 back-ends, timed like tilegen's profile() (median of runs
after warm-up, CUDA events). Prints one line per back-end:
    sdpa_<backend> B=.. H=.. HKV=.. S=.. D=.. causal=.. median_ms=.. tflops=..
Run on the GPU machine beside `tilegen bench flash_attention` so both come from one run."""
import argparse
import statistics

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel


def time_ms(fn, warmup=10, runs=50):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    for name, default in (("B", 8), ("H", 16), ("HKV", 16), ("S", 4096), ("D", 128), ("causal", 0)):
        p.add_argument("--" + name, type=int, default=default)
    p.add_argument("--dtype", choices=("f16", "bf16"), default="f16")
    a = p.parse_args()
    torch.manual_seed(0)
    dt = torch.float16 if a.dtype == "f16" else torch.bfloat16
    q = torch.randn(a.B, a.H, a.S, a.D, device="cuda", dtype=dt)
    k = torch.randn(a.B, a.HKV, a.S, a.D, device="cuda", dtype=dt)
    v = torch.randn(a.B, a.HKV, a.S, a.D, device="cuda", dtype=dt)
    if a.HKV != a.H:  # grouped-query heads: expand as the sample does (head h reads h // (H/HKV))
        k = k.repeat_interleave(a.H // a.HKV, dim=1)
        v = v.repeat_interleave(a.H // a.HKV, dim=1)
    flops = 4.0 * a.B * a.H * a.S * a.S * a.D * (0.5 if a.causal else 1.0)
    shape = f"B={a.B} H={a.H} HKV={a.HKV} S={a.S} D={a.D} causal={a.causal} dtype={a.dtype}"
    for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
        try:
            with sdpa_kernel(backend):
                ms = time_ms(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=bool(a.causal)))
            print(f"sdpa_{name} {shape} median_ms={ms:.4f} tflops={flops / ms / 1e9:.1f}")
        except RuntimeError as e:
            print(f"sdpa_{name} {shape} unavailable: {str(e).splitlines()[0]}")


if __name__ == "__main__":
    main()
