#!/usr/bin/env python3
"""The fp8 baseline of issue 7 measured with torch._scaled_mm (cuBLASLt underneath), e4m3 x e4m3
-> bf16, tn (A row-major M x K, B column-major K x N), per-tensor scales of 1: warm-up, then the
median of CUDA-event timings, with cuBLASLt's accurate accumulation (use_fast_accum=False, the
default: promoted to fp32, like tessel's default fp8 kernel) and with fast accumulation (like
tessel's _fastacc kernel). Input sets are rotated past the L2. Prints one line per problem and
mode and writes a JSON list to argv[1].

    python3 bench/fp8_torch_baseline.py OUT.json [M N K ...]
"""
import json
import statistics
import sys

import torch


def measure(m, n, k, fast_accum, iters=20, warmup=5):
    torch.manual_seed(0)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    sets = max(2, -(-2 * l2 // (m * k + n * k + 2 * m * n)))
    ops = []
    for _ in range(sets):
        a = (torch.rand(m, k, device="cuda") * 4 - 2).to(torch.float8_e4m3fn)
        b = (torch.rand(n, k, device="cuda") * 4 - 2).to(torch.float8_e4m3fn).t()  # K x N, column-major
        ops.append((a, b))
    one = torch.tensor(1.0, device="cuda")
    run = lambda i: torch._scaled_mm(ops[i % sets][0], ops[i % sets][1], scale_a=one, scale_b=one,
                                     out_dtype=torch.bfloat16, use_fast_accum=fast_accum)
    for i in range(warmup):
        run(i)
    times = []
    for i in range(iters):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run(i)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    ms = statistics.median(times)
    return {"m": m, "n": n, "k": k, "dtype": "e4m3", "out": "bf16", "layout": "tn", "fast_accum": fast_accum, "ms": ms,
            "tflops": 2.0 * m * n * k / (ms * 1e-3) / 1e12, "baseline": "torch._scaled_mm", "torch": torch.__version__,
            "gpu": torch.cuda.get_device_name()}


def main():
    sizes = [int(x) for x in sys.argv[2:]] or [8192, 8192, 8192, 4096, 4096, 4096]
    results = [measure(*sizes[i:i + 3], fast) for i in range(0, len(sizes), 3) for fast in (False, True)]
    for r in results:
        mode = "fast accumulation" if r["fast_accum"] else "accurate"
        print(f"torch._scaled_mm {r['m']}x{r['n']}x{r['k']} e4m3 -> bf16, {mode}: {r['ms']:.3f} ms {r['tflops']:.1f} TFLOP/s")
    json.dump(results, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
