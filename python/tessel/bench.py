"""Times tessel against what PyTorch users run today, in one process: ``python -m tessel.bench gemm``.

    python -m tessel.bench gemm                          # the default problems, table + JSON
    python -m tessel.bench gemm --problems 4096x4096x4096 8x1024x1024x1024 --dtype fp16 --layout nt
    python -m tessel.bench gemm --json /tmp/r.json --iters 50

Method (the CLI's, docs/PERF.md): inputs uniform(-1, 1) (fp8: uniform(-2, 2) rounded), never
zeros; per problem enough input sets that together they exceed twice the L2, each launch (either
side's) on the next set; warm-up, then tessel and the baseline interleaved A B A B ..., each launch
between its own CUDA events on torch's current stream; the median is reported. The baseline is
torch.matmul(a, b, out=d) (fp8: torch._scaled_mm, which takes "tn" only); fp32 runs with
torch.backends.cuda.matmul.allow_tf32 off, tf32 with it on and tessel's tf32=True.
Verification: both outputs against a float64 reference, as max |D - R| / (|alpha| |A||B| + |beta C|)
per element (NaN where the reference is finite fails), passed when within
tessel/reference/gemm_check.hpp's tolerance.

Layouts name A and B as the CLI does (BLAS transposes): "t" A is M x K row-major (K contiguous),
"n" column-major; "t" B is K x N row-major, "n" column-major (K contiguous). The output is
row-major, torch's default (the CLI's is column-major).

Per-call overhead: host time of back-to-back calls at 1024^3 bf16 while the GPU is held busy (so
no call waits for it), for tessel.gemm from Python and for the same calls made from C++ through
the C ABI with the arguments prepared once (the CLI's path); the difference is what Python adds.

The JSON (DESIGN.md section 6) goes to bench/results/<suite>-<gpu>.json (--out-dir, --json).
"""
import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import time

import tessel

_DTYPES = ("bf16", "fp16", "fp32", "tf32", "e4m3")
_DEFAULT_PROBLEMS = [
    # (problem, dtype, layout)
    ("1024x1024x1024", "bf16", "tn"),
    ("2048x2048x2048", "bf16", "tn"),
    ("4096x4096x4096", "bf16", "tn"),
    ("8192x8192x8192", "bf16", "tn"),
    ("8192x28672x4096", "bf16", "tn"),
    ("16x4096x4096", "bf16", "tn"),
    ("8x1024x1024x1024", "bf16", "tn"),
    ("4096x4096x4096", "bf16", "nn"),
    ("4096x4096x4096", "bf16", "nt"),
    ("4096x4096x4096", "bf16", "tt"),
    ("4096x4096x4096", "fp16", "tn"),
    ("4096x4096x4096", "tf32", "tn"),
    ("4096x4096x4096", "fp32", "tn"),
    ("4096x4096x4096", "e4m3", "tn"),
]
# Dense peak TFLOP/s of H100/H200 SXM (datasheet), for pct_peak.
_HOPPER_SXM_PEAK = {"bf16": 989.4, "fp16": 989.4, "tf32": 494.7, "fp32": 66.9, "e4m3": 1978.9}


def _need_torch():
    try:
        import torch
    except ImportError:
        sys.exit("tessel.bench: needs PyTorch (the baseline is torch.matmul)")
    if not torch.cuda.is_available():
        sys.exit("tessel.bench: no CUDA device")
    return torch


def parse_problem(text):
    """'MxNxK' or 'BxMxNxK' -> (batch, m, n, k)."""
    parts = text.lower().split("x")
    try:
        vals = [int(p) for p in parts]
    except ValueError:
        vals = []
    if len(vals) not in (3, 4) or min(vals) < 1:
        raise argparse.ArgumentTypeError(f"problem '{text}' is not MxNxK or BxMxNxK with positive extents")
    return (1, *vals) if len(vals) == 3 else tuple(vals)


def _gpu_short_name(name):
    words = name.lower().replace("nvidia", "").split()
    return words[0] if words else "gpu"


def _version_text(v):
    return f"{v // 1000}.{(v % 1000) // 10}"


def _commit():
    if os.environ.get("TESSEL_GIT_COMMIT"):
        return os.environ["TESSEL_GIT_COMMIT"]
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        r = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10)
        if r.returncode == 0 and r.stdout.strip():
            return r.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown"


def max_rel_err(torch, d, a, b, alpha=1.0, beta=0.0, c=None):
    """max over elements of |D - R| / (|alpha| sum_k |A B| + |beta C|), R the float64 result;
    inf where R is finite and D is not, or where the scale is 0 and D differs."""
    A, B = a.double(), b.double()
    R = alpha * torch.matmul(A, B)
    S = abs(alpha) * torch.matmul(A.abs(), B.abs())
    if c is not None and beta != 0:
        R = R + beta * c.double()
        S = S + abs(beta) * c.double().abs()
    D = d.double()
    diff = (D - R).abs()
    err = torch.where(S > 0, diff / S, torch.where(diff == 0, torch.zeros_like(diff), torch.full_like(diff, math.inf)))
    err = torch.where(torch.isfinite(R) & ~torch.isfinite(D), torch.full_like(err, math.inf), err)
    return float(err.max()) if err.numel() else 0.0


def tolerance(dtype, out_dtype, k):
    """tessel/reference/gemm_check.hpp's gemm_tolerance."""
    u_acc = 2.0**-24
    u_in = 2.0**-11 if dtype == "tf32" else 0.0
    u_out = {"fp16": 2.0**-11, "bf16": 2.0**-8}.get(out_dtype, 2.0**-24)
    fp8 = 4.0 * u_acc + 2.0**-10 if dtype == "e4m3" else 0.0
    return 8.0 * u_acc * math.sqrt(max(k, 1)) + 2.0 * u_in + 2.0 * u_out + fp8


class _Problem:
    def __init__(self, torch, batch, m, n, k, dtype, layout):
        self.torch = torch
        self.batch, self.m, self.n, self.k, self.dtype, self.layout = batch, m, n, k, dtype, layout
        self.in_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "tf32": torch.float32,
                         "e4m3": getattr(torch, "float8_e4m3fn", None)}[dtype]
        self.out_name = {"bf16": "bf16", "fp16": "fp16", "e4m3": "bf16"}.get(dtype, "fp32")
        self.out_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(self.out_name, torch.float32)

    def text(self):
        s = f"{self.m}x{self.n}x{self.k}"
        return s if self.batch == 1 else f"{self.batch}x{s}"

    def flops(self):
        return 2.0 * self.batch * self.m * self.n * self.k

    def _matrix(self, rows, cols, contiguous_cols, gen):
        """rows x cols, row-major when contiguous_cols else column-major; (batch,) in front."""
        torch = self.torch
        lead = (self.batch,) if self.batch > 1 else ()
        shape = lead + ((rows, cols) if contiguous_cols else (cols, rows))
        scale = 2.0 if self.dtype == "e4m3" else 1.0
        x = (torch.rand(shape, generator=gen, device="cuda") * 2 - 1) * scale
        x = x.to(self.in_dtype)
        return x if contiguous_cols else x.mT

    def make_set(self, seed):
        torch = self.torch
        gen = torch.Generator(device="cuda")
        gen.manual_seed(seed)
        a = self._matrix(self.m, self.k, self.layout[0] == "t", gen)
        b = self._matrix(self.k, self.n, self.layout[1] == "t", gen)
        lead = (self.batch,) if self.batch > 1 else ()
        d = torch.empty(lead + (self.m, self.n), dtype=self.out_dtype, device="cuda")
        return a, b, d

    def set_bytes(self):
        el = self.in_dtype.itemsize if hasattr(self.in_dtype, "itemsize") else 2
        return self.batch * ((self.m * self.k + self.k * self.n) * el + self.m * self.n * self.out_dtype.itemsize)

    def tessel(self, a, b, d):
        tessel.gemm(a, b, out=d, tf32=self.dtype == "tf32")

    def baseline(self):
        """(name, fn(a, b, d) -> result, "") or (name, None, why not)."""
        torch = self.torch
        if self.dtype != "e4m3":
            return "torch.matmul", lambda a, b, d: torch.matmul(a, b, out=d), ""
        if self.layout != "tn" or self.batch != 1 or not hasattr(torch, "_scaled_mm"):
            return "torch._scaled_mm", None, "torch._scaled_mm runs 2-D tn (A row-major, B column-major) only"
        one = torch.ones((), device="cuda", dtype=torch.float32)

        def scaled(a, b, d):  # its result is a new tensor: as users call it
            return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=d.dtype)

        return "torch._scaled_mm", scaled, ""


def _median_ms(torch, events):
    return statistics.median(e0.elapsed_time(e1) for e0, e1 in events)


def run_problem(torch, p, args, l2_bytes):
    """One problem: verification, then the interleaved timing. Returns the JSON row."""
    base_name, base_fn, base_why = p.baseline()
    row = {"op": "gemm", "m": p.m, "n": p.n, "k": p.k, "batch": p.batch, "dtype": p.dtype, "layout": p.layout,
           "out": "row-major", "alpha": 1, "beta": 0, "kernel": None, "ms": None, "tflops": None, "pct_peak": None,
           "baseline": base_name if base_fn else None, "baseline_ms": None, "baseline_tflops": None, "ratio": None,
           "verified": None, "max_rel_err": None, "baseline_max_rel_err": None, "iters": args.iters}
    if base_why:
        row["baseline_note"] = base_why
    torch.backends.cuda.matmul.allow_tf32 = p.dtype == "tf32"
    free, _ = torch.cuda.mem_get_info()
    want = max(2, math.ceil(2 * l2_bytes / max(p.set_bytes(), 1)))
    sets_n = int(min(want, 64, max(1, (free // 2) // max(p.set_bytes(), 1))))
    sets = [p.make_set(1000 + i) for i in range(sets_n)]
    row["input_sets"] = sets_n
    a0, b0, d0 = sets[0]
    row["kernel"] = tessel.gemm_kernel(a0, b0, out=d0, tf32=p.dtype == "tf32")

    if args.verify:
        d0.fill_(float("nan"))
        p.tessel(a0, b0, d0)
        torch.cuda.synchronize()
        err = max_rel_err(torch, d0, a0.float() if p.dtype == "e4m3" else a0, b0.float() if p.dtype == "e4m3" else b0)
        row["max_rel_err"] = err
        row["verified"] = err <= tolerance(p.dtype, p.out_name, p.k)
        if base_fn:
            d0.fill_(float("nan"))
            result = base_fn(a0, b0, d0)
            torch.cuda.synchronize()
            row["baseline_max_rel_err"] = max_rel_err(
                torch, result, a0.float() if p.dtype == "e4m3" else a0, b0.float() if p.dtype == "e4m3" else b0)

    sides = [p.tessel] + ([base_fn] if base_fn else [])
    launch = 0
    for _ in range(args.warmup):
        for fn in sides:
            fn(*sets[launch % sets_n])
            launch += 1
    torch.cuda.synchronize()
    events = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(args.iters)]
              for _ in sides]
    for i in range(args.iters):
        for side, fn in enumerate(sides):
            e0, e1 = events[side][i]
            s = sets[launch % sets_n]
            e0.record()
            fn(*s)
            e1.record()
            launch += 1
    torch.cuda.synchronize()
    row["ms"] = _median_ms(torch, events[0])
    row["tflops"] = p.flops() / (row["ms"] * 1e-3) / 1e12
    if base_fn:
        row["baseline_ms"] = _median_ms(torch, events[1])
        row["baseline_tflops"] = p.flops() / (row["baseline_ms"] * 1e-3) / 1e12
        row["ratio"] = row["tflops"] / row["baseline_tflops"]
    torch.backends.cuda.matmul.allow_tf32 = False
    del sets
    return row


def measure_overhead(torch, clock_mhz, calls=100, reps=7):
    """Host microseconds per call at 1024^3 bf16 tn, the GPU held busy by a sleep kernel."""
    import tessel.torch  # noqa: F401  (torch.ops.tessel.gemm)

    p = _Problem(torch, 1, 1024, 1024, 1024, "bf16", "tn")
    a, b, d = p.make_set(7)
    stream = torch.cuda.current_stream().cuda_stream
    sleep = getattr(torch.cuda, "_sleep", None)
    hold_cycles = int(0.05 * max(clock_mhz, 1000) * 1e6)  # ~50 ms: longer than the slowest side's `calls` calls

    def py_loop(fn):
        def timed():
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            return (time.perf_counter() - t0) / calls

        return timed

    sides = {
        "c_api_from_cpp": lambda: tessel._C._gemm_host_loop(a, b, d, None, 1.0, 0.0, stream, None, False, calls),
        "tessel.gemm": py_loop(lambda: tessel.gemm(a, b, out=d)),
        "tessel.gemm(stream=int)": py_loop(lambda: tessel.gemm(a, b, out=d, stream=stream)),
        "torch.ops.tessel.gemm": py_loop(lambda: torch.ops.tessel.gemm(a, b)),
        "torch.matmul(out=)": py_loop(lambda: torch.matmul(a, b, out=d)),
        "torch.matmul": py_loop(lambda: torch.matmul(a, b)),
    }
    for fn in sides.values():  # warm-up: first-call caches, lazy loading
        fn()
    torch.cuda.synchronize()
    us = {}
    for name, fn in sides.items():
        samples = []
        for _ in range(reps):
            if sleep is not None:
                sleep(hold_cycles)
            samples.append(fn() * 1e6)
            torch.cuda.synchronize()
        us[name] = statistics.median(samples)
    return {
        "problem": "1024x1024x1024 bf16 tn", "calls": calls, "reps": reps,
        "gpu_held_busy": sleep is not None,
        "us_per_call": us,
        "tessel_gemm_over_c_api_us": us["tessel.gemm"] - us["c_api_from_cpp"],
        "target_us": 5.0,
        "note": "host time per call (median of reps), calls enqueued back to back while a sleep kernel keeps the GPU "
                "busy; c_api_from_cpp is tessel_gemm called from C++ with the arguments prepared once",
    }


def _fmt(v, spec):
    return "-" if v is None else format(v, spec)


def gemm_main(argv):
    ap = argparse.ArgumentParser(prog="python -m tessel.bench gemm", description="tessel.gemm against torch.matmul")
    ap.add_argument("--problems", nargs="+", type=parse_problem, metavar="[Bx]MxNxK",
                    help="problems to run with --dtype and --layout (default: the suite in tessel/bench.py)")
    ap.add_argument("--dtype", choices=_DTYPES, default="bf16")
    ap.add_argument("--layout", choices=("tn", "nn", "nt", "tt"), default="tn")
    ap.add_argument("--iters", type=int, default=30, help="timed launches per side (default 30)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed launches per side first (default 5)")
    ap.add_argument("--no-verify", dest="verify", action="store_false", help="skip the float64 check")
    ap.add_argument("--no-overhead", dest="overhead", action="store_false", help="skip the per-call overhead")
    ap.add_argument("--suite", default=None, help="suite name in the JSON and its file name (default python-gemm)")
    ap.add_argument("--json", default=None, help="output file (default <out-dir>/<suite>-<gpu>.json)")
    ap.add_argument("--out-dir", default=os.path.join("bench", "results"), help="where the JSON goes (default bench/results)")
    args = ap.parse_args(argv)
    if args.iters < 1 or args.warmup < 0:
        ap.error("--iters must be >= 1 and --warmup >= 0")

    torch = _need_torch()
    dev = torch.cuda.current_device()
    info = tessel.device_info(dev)
    suite = args.suite or "python-gemm"
    if args.problems:
        problems = [(batch, m, n, k, args.dtype, args.layout) for batch, m, n, k in args.problems]
    else:
        problems = [(*parse_problem(s), dt, lay) for s, dt, lay in _DEFAULT_PROBLEMS]
    hopper_sxm = info["cc"] == (9, 0) and info["sm_count"] == 132
    report = {
        "gpu": info["name"], "sm_count": info["sm_count"], "clock_mhz": info["clock_mhz"],
        "driver": _version_text(info["driver_version"]), "cuda": _version_text(info["runtime_version"]),
        "torch": torch.__version__, "torch_cuda": torch.version.cuda,
        "commit": _commit(), "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "suite": suite,
        "method": "python -m tessel.bench: median of --iters launches per side after --warmup, CUDA events per launch "
                  "on torch's current stream, tessel.gemm and torch.matmul(out=) interleaved, input sets rotated "
                  "through >= 2x L2; fp32 baseline with allow_tf32 off; fp8 baseline torch._scaled_mm (tn only)",
        "results": [],
    }
    print(f"GPU      {info['name']} (sm_{info['cc'][0]}{info['cc'][1]}, {info['sm_count']} SMs, "
          f"L2 {info['l2_bytes'] >> 20} MB), driver {report['driver']}, torch {torch.__version__}")
    print(f"tessel   commit {report['commit']}, {report['date']}")
    head = f"{'problem':<20} {'dtype':<5} {'lay':<3} {'kernel':<30} {'ms':>9} {'TFLOP/s':>8} " \
           f"{'torch ms':>9} {'TFLOP/s':>8} {'ratio':>6}  check"
    print(head)
    failed = False
    for batch, m, n, k, dtype, layout in problems:
        p = _Problem(torch, batch, m, n, k, dtype, layout)
        if p.in_dtype is None:
            print(f"{p.text():<20} {dtype:<5} {layout:<3} skipped: this torch has no {dtype}")
            continue
        try:
            row = run_problem(torch, p, args, info["l2_bytes"])
        except (RuntimeError, ValueError, TypeError) as e:
            failed = True
            print(f"{p.text():<20} {dtype:<5} {layout:<3} error: {e}")
            report["results"].append({"op": "gemm", "m": m, "n": n, "k": k, "batch": batch, "dtype": dtype,
                                      "layout": layout, "error": str(e)})
            continue
        if hopper_sxm and row["tflops"]:
            row["pct_peak"] = 100.0 * row["tflops"] / _HOPPER_SXM_PEAK[dtype]
        report["results"].append(row)
        check = "-" if row["verified"] is None else ("ok" if row["verified"] else "FAILED") + f" {row['max_rel_err']:.2g}"
        failed |= row["verified"] is False
        print(f"{p.text():<20} {dtype:<5} {layout:<3} {str(row['kernel']):<30} {_fmt(row['ms'], '9.4f')} "
              f"{_fmt(row['tflops'], '8.1f')} {_fmt(row['baseline_ms'], '9.4f')} {_fmt(row['baseline_tflops'], '8.1f')} "
              f"{_fmt(row['ratio'], '6.3f')}  {check}")
    if args.overhead:
        o = measure_overhead(torch, info["clock_mhz"])
        report["overhead"] = o
        print(f"\nper-call host time at {o['problem']} ({o['calls']} calls back to back, GPU held busy):")
        for name, v in o["us_per_call"].items():
            print(f"  {name:<26} {v:8.2f} us")
        verdict = "within" if o["tessel_gemm_over_c_api_us"] < o["target_us"] else "OVER"
        print(f"  tessel.gemm - C ABI from C++: {o['tessel_gemm_over_c_api_us']:.2f} us ({verdict} the "
              f"{o['target_us']:.0f} us target)")
    path = args.json or os.path.join(args.out_dir, f"{suite}-{_gpu_short_name(info['name'])}.json")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    print(f"\nwrote {path}")
    return 1 if failed else 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    suites = {"gemm": gemm_main}
    if not argv or argv[0] not in suites:
        print("usage: python -m tessel.bench gemm [options]   (--help after the suite lists them)", file=sys.stderr)
        return 2
    return suites[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
