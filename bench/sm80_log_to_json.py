#!/usr/bin/env python3
"""Rebuild a bench/results JSON (DESIGN.md section 6 schema) from `tessel gemm`'s printed log.

For a run whose JSON file did not come back from the GPU machine but whose log did (the device
returns at most 8 files). Every number comes from the log's rows; the log prints the error with
two significant digits and no clock after the run, so those fields are coarser or null, and the
file says it was transcribed.

    bench/sm80_log_to_json.py LOG SUITE > bench/results/<suite>-<gpu>-<date>.json
"""
import json
import re
import sys


def main(log_path, suite):
    text = open(log_path).read()
    gpu = re.search(r"^GPU\s+(.+?) \(sm_(\d+), (\d+) SMs, L2 (\d+) MB\), SM clock (\d+) MHz max", text, re.M)
    sw = re.search(r"^software\s+driver (\S+), CUDA runtime (\S+), cuBLAS (\d+)", text, re.M)
    tes = re.search(r"^tessel\s+commit (\S+), (\S+)", text, re.M)
    row = re.compile(
        r"^(?:(\d+)x)?(\d+)x(\d+)x(\d+)\s+(\S+)\s+(tn|nn|nt|tt)\s+(\S+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)%\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(.*)$",
        re.M)
    results = []
    for m in row.finditer(text):
        batch, mm, nn, kk, dtype, layout, kernel, ms, tf, pct, bms, btf, ratio, ver = m.groups()
        verified, err, berr = None, None, None
        v = re.match(r"(ok|FAILED) (\S+) \(cuBLAS (ok|FAILED) (\S+)\)", ver)
        if v:
            verified, err, berr = v.group(1) == "ok", float(v.group(2)), float(v.group(4))
        results.append({
            "op": "gemm", "m": int(mm), "n": int(nn), "k": int(kk), "batch": int(batch or 1),
            "dtype": dtype, "layout": layout, "kernel": kernel, "ms": float(ms), "tflops": float(tf),
            "pct_peak": float(pct), "baseline": "cublas", "baseline_ms": float(bms),
            "baseline_tflops": float(btf), "ratio": float(ratio), "verified": verified,
            "max_rel_err": err, "baseline_max_rel_err": berr, "sm_clock_after_mhz": None,
        })
    out = {
        "gpu": gpu.group(1), "sm_count": int(gpu.group(3)), "clock_mhz": int(gpu.group(5)),
        "driver": sw.group(1), "cuda": sw.group(2), "cublas": int(sw.group(3)),
        "commit": tes.group(1), "date": tes.group(2), "suite": suite,
        "method": "median of --iters launches per side after --warmup, CUDA events per launch, tessel and "
                  "cuBLAS interleaved, input sets rotated through >= 2x L2",
        "transcribed_from": "the CLI's printed log of the run (bench/sm80_log_to_json.py); errors to 2 digits",
        "results": results,
    }
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
