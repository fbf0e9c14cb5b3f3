#!/usr/bin/env python3
"""The fp8 baseline of issue 7 measured with torch._scaled_mm (cuBLASLt underneath), e4m3 x e4m3
-> bf16, tn (A row-major M x K, B column-major K x N), per-tensor scales of 1: warm-up, then the
median of CUDA-event timings. Prints one line per problem and writes a JSON list to argv[1].

    python3 bench/fp8_torch_baseline.py OUT.json [M N K ...]
"""
import json
import statistics
import sys

import torch


def measure(m, n, k, iters=20, warmup=5):
    torch.manual_seed(0)
    a = (torch.rand(m, k, device="cuda") * 4 - 2).to(torch.float8_e4m3fn)
    b = (torch.rand(n, k, device="cuda") * 4 - 2).to(torch.float8_e4m3fn).t()  # K x N, column-major
    one = torch.tensor(1.0, device="cuda")
    run = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    for _ in range(warmup):
        run()
    times = []
    for _ in range(iters):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    ms = statistics.median(times)
    return {"m": m, "n": n, "k": k, "dtype": "e4m3", "out": "bf16", "layout": "tn", "ms": ms,
            "tflops": 2.0 * m * n * k / (ms * 1e-3) / 1e12, "baseline": "torch._scaled_mm", "torch": torch.__version__,
            "gpu": torch.cuda.get_device_name()}


def main():
    sizes = [int(x) for x in sys.argv[2:]] or [8192, 8192, 8192, 4096, 4096, 4096]
    results = [measure(*sizes[i:i + 3]) for i in range(0, len(sizes), 3)]
    for r in results:
        print(f"torch._scaled_mm {r['m']}x{r['n']}x{r['k']} e4m3 -> bf16: {r['ms']:.3f} ms {r['tflops']:.1f} TFLOP/s")
    json.dump(results, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
