"""Times tessel against what PyTorch users run today, in one process: ``python -m tessel.bench gemm``,
``python -m tessel.bench grouped``, ``python -m tessel.bench attention`` and ``python -m tessel.bench conv``.

    python -m tessel.bench gemm                          # the default problems, table + JSON
    python -m tessel.bench gemm --problems 4096x4096x4096 8x1024x1024x1024 --dtype fp16 --layout nt
    python -m tessel.bench gemm --json /tmp/r.json --iters 50
    python -m tessel.bench linear                        # torch.ops.tessel.linear against act(F.linear(x, w, b))
    python -m tessel.bench grouped                       # tessel.grouped_mm against torch._grouped_mm and a matmul loop
    python -m tessel.bench grouped --problems g8-t8192-n14336-k4096-skew1-empty1 g64-t4096-n2048-k7168-kn
    python -m tessel.bench attention                     # tessel.attention against SDPA (cuDNN, flash)
    python -m tessel.bench attention --problems b2-h16-kv4-s8192-d128-causal --dtype fp16
    python -m tessel.bench attention --backward [--deterministic]   # the backward against SDPA's backward
    python -m tessel.bench conv                          # tessel.conv / conv_dgrad / conv_wgrad against cuDNN via torch
    python -m tessel.bench conv --problems n128-h56-w56-c64-k64-r3-s3-pad1 --ops fprop wgrad
    torchrun --nproc_per_node 2 -m tessel.bench dist     # tensor-parallel GEMMs over NCCL (tessel/bench_dist.py)
    python -m tessel.bench train                         # a decoder trained with SDPA and with tessel (bench_train.py)

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
the C ABI with the arguments prepared once (the CLI's path); the difference is what Python adds,
taken round by round (every side timed once per round, the order rotated) and its median kept.

Attention (``attention``): tessel.attention against F.scaled_dot_product_attention with its cuDNN
backend and with its flash backend (torch.nn.attention.sdpa_kernel), the three interleaved launch
by launch on the same rotated input sets. Every side reads the same memory: q, k, v stored
[B, S, H, D] (tessel's and FlashAttention's layout), handed to SDPA as transposed [B, H, S, D]
views (SDPA takes non-contiguous inputs; its flash backend works in [B, S, H, D] internally, so
these views are its native layout, and cuDNN takes them as strided "bshd" tensors). tessel writes
into a preallocated out; SDPA allocates its result, as users call it. causal uses top-left
alignment on every side (torch's is_causal; the same as bottom-right when S_q == S_k); GQA passes
enable_gqa=True. FLOPs = 2 B H pairs (D + D_v), pairs the (query, key) pairs the mask keeps
(S_q S_k, half that for causal square problems, FlashAttention's convention). Verification, once
per problem before timing: out against a float32 reference (math SDPA in float32, chunked over
heads), passed when max |out - ref| <= 2 max |sdpa - ref| + one ulp of the dtype at max |ref|
(FlashAttention-3's rule, SDPA's cuDNN output, else its flash output, as the low-precision
reference). A backend that refuses a problem is reported with its error and left out of the timing.
The forward's suite also records the per-call host time at B16 H16 S1024 D128 (the GEMM's method:
back-to-back calls, the GPU held busy, rotated rounds) of tessel.attention -- the library's kernel,
the sm_80 kernel by name, torch.ops.tessel.attention -- and of SDPA's cuDNN and flash backends,
against a target of cuDNN's figure: a call that costs the host more than the GPU needs shows up
nowhere else (the interleaved timing keeps the queue full).

Attention backward (``attention --backward``): dq, dk, dv through autograd on every side, the
same inputs in the same process: torch.ops.tessel.attention (whose backward runs
tessel.attention_backward's kernels; --deterministic their bitwise-repeatable mode) and
F.scaled_dot_product_attention under sdpa_kernel(CUDNN_ATTENTION) and (FLASH_ATTENTION). Each
side's forward runs once per input set, untimed, and keeps its graph; a timed launch is that side's
backward alone, torch.autograd.grad(out, (q, k, v), dout, retain_graph=True) -- the engine call a
training step makes, gradient allocation included on every side. FLOPs 2.5 x the forward's
(FlashAttention's convention). Verification, once per problem: each gradient against float32
autograd of math SDPA (chunked over heads), passed when max |g - ref| <= 2 max |SDPA's g - ref| + one
ulp of the dtype at max |ref| (cuDNN's, else flash's gradients as the low-precision reference).

Convolution (``conv``): tessel.conv, conv_dgrad and conv_wgrad against what torch runs for
F.conv2d / F.conv3d and their backward: F.conv2d (F.conv3d) for fprop,
torch.nn.grad.conv2d_input (conv3d_input) for dgrad and torch.nn.grad.conv2d_weight
(conv3d_weight) for wgrad -- the aten.convolution_backward that autograd calls, one gradient at a
time -- with torch.backends.cudnn.benchmark on (cuDNN's fastest algorithm per shape, picked during
the warm-up). Both sides read the same channels_last tensors: torch gets them as they are
([N, C, H, W] in channels_last memory format, weights [K, C/groups, R, S] likewise), tessel the
[N, H, W, C] / [K, R, S, C/groups] views of the same memory (no copies). tessel writes into a
preallocated output; torch allocates its result, as users call it. The layers are bench/conv.txt's
(the CLI's suite: ResNet-50's 3x3 and 1x1 layers at batch 128 and its 7x7 stride-2 stem, C = 33 /
K = 65, a U-Net 3x3 C320, a 3-D 3x3x3 C64, depthwise 3x3 C256..1024); FLOPs 2 N Z P Q K T R S C /
groups for every pass. Verification, once per problem before timing: both results against a
float32 reference (the same torch op on float32 copies, TF32 off), passed when max |tessel - ref|
<= 2 max |torch - ref| + one ulp of the dtype at max |ref| (the attention suite's rule). The suite
also records each pass's per-call host time at n8 56x56 c64 k64 3x3 (the GEMM's method), against
torch's for the same pass.

Grouped GEMM (``grouped``): tessel.grouped_mm against torch._grouped_mm (where this torch has it;
it allocates its result, as users call it) and a loop of torch.matmul(a[rows of g], b[g], out=)
over the non-empty groups, the three interleaved launch by launch on the same rotated input sets:
a [tokens, K], b [G, K, N] -- by default the transposed view of [G, N, K] weights (a Linear
layer's, what torch._grouped_mm is handed in a MoE layer), with ``kn`` a [G, K, N] array -- and
int32 offsets on the GPU. The problems are bench/grouped.txt's (Mixtral- and DeepSeek-like; rows
per expert skewed as 1/(rank+1)^skew with some experts empty, the CLI's rule, placed by Python's
shuffle). FLOPs 2 tokens N K. Verification per group against float64, the gemm suite's rule; the
16384-token Mixtral lines skip it, as in the CLI's suite. A torch._grouped_mm that refuses a
problem (a layout or dtype its kernel lacks) is reported in the row and left out of the timing.

The JSON (DESIGN.md section 6) goes to bench/results/<suite>-<gpu>.json (--out-dir, --json); the
suites are python-gemm, python-grouped, python-attention, python-attention-backward and python-conv.
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
import warnings

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


def _need_torch(baseline):
    try:
        import torch
    except ImportError:
        sys.exit(f"tessel.bench: needs PyTorch (the baseline is {baseline})")
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


def _input_sets(torch, p, l2_bytes):
    """Input sets of problem p (p.make_set(seed), p.set_bytes()): enough that together they exceed
    twice the L2, at most 64 and at most half the free device memory (at least one)."""
    free, _ = torch.cuda.mem_get_info()
    want = max(2, math.ceil(2 * l2_bytes / max(p.set_bytes(), 1)))
    n = int(min(want, 64, max(1, (free // 2) // max(p.set_bytes(), 1))))
    return [p.make_set(1000 + i) for i in range(n)]


def _round_order(n, r):
    """The order of n sides in timing round r: rotated by r // 2, reversed in odd rounds, so that
    over 2n rounds every side runs twice in each place and no side always follows the same one."""
    order = [(i + r // 2) % n for i in range(n)]
    return order[::-1] if r % 2 else order


def _interleaved_ms(torch, sides, sets, warmup, iters, rounds=1):
    """Median milliseconds of each fn in `sides` over `rounds` rounds of `iters` launches each, the
    sides interleaved A B A B ... in a round (in _round_order's order), each launch on the next
    input set and between its own CUDA events, after `warmup` untimed rounds."""
    launch = 0
    for _ in range(warmup):
        for fn in sides:
            fn(*sets[launch % len(sets)])
            launch += 1
    torch.cuda.synchronize()
    events = [[] for _ in sides]
    for r in range(rounds):
        order = _round_order(len(sides), r)
        pairs = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
                 for _ in order]
        for i in range(iters):
            for j, side in enumerate(order):
                e0, e1 = pairs[j][i]
                s = sets[launch % len(sets)]
                e0.record()
                sides[side](*s)
                e1.record()
                launch += 1
        torch.cuda.synchronize()
        for j, side in enumerate(order):
            events[side].extend(pairs[j])
    return [_median_ms(torch, e) for e in events]


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
    sets = _input_sets(torch, p, l2_bytes)
    row["input_sets"] = len(sets)
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

    ms = _interleaved_ms(torch, [p.tessel] + ([base_fn] if base_fn else []), sets, args.warmup, args.iters)
    row["ms"] = ms[0]
    row["tflops"] = p.flops() / (row["ms"] * 1e-3) / 1e12
    if base_fn:
        row["baseline_ms"] = ms[1]
        row["baseline_tflops"] = p.flops() / (row["baseline_ms"] * 1e-3) / 1e12
        row["ratio"] = row["tflops"] / row["baseline_tflops"]
    torch.backends.cuda.matmul.allow_tf32 = False
    del sets
    return row


def _host_us_per_call(torch, sides, clock_mhz, calls, rounds):
    """Median host microseconds per call of each side (name -> fn() that makes `calls` calls and
    returns seconds per call) over `rounds` rounds, every side timed once per round in an order
    rotated from round to round, each behind a sleep kernel that keeps the GPU busy (so the queue
    never drains and a call's time is the host's). Returns (medians, per-round samples)."""
    sleep = getattr(torch.cuda, "_sleep", None)
    hold_cycles = int(0.02 * max(clock_mhz, 1000) * 1e6)  # ~20 ms: longer than the slowest side's `calls` calls
    for fn in sides.values():  # warm-up: first-call caches, lazy loading
        fn()
    torch.cuda.synchronize()
    samples = {name: [] for name in sides}
    names = list(sides)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            if sleep is not None:
                sleep(hold_cycles)
            samples[name].append(sides[name]() * 1e6)
            torch.cuda.synchronize()
    return {name: statistics.median(v) for name, v in samples.items()}, samples


def _py_loop(fn, calls):
    """fn() called `calls` times back to back, as a side of _host_us_per_call."""
    def timed():
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - t0) / calls

    return timed


def measure_overhead(torch, clock_mhz, calls=100, rounds=31):
    """Host microseconds per call at 1024^3 bf16 tn, the GPU held busy by a sleep kernel.

    Each round times every side once (`calls` calls back to back), in an order rotated from round
    to round; a side's figure is its median over the rounds, and what Python adds is the median
    of each round's difference between tessel.gemm and the same call made from C++ (paired within
    a round, so a slow stretch of the host moves both)."""
    import tessel.torch  # noqa: F401  (torch.ops.tessel.gemm)

    p = _Problem(torch, 1, 1024, 1024, 1024, "bf16", "tn")
    a, b, d = p.make_set(7)
    stream = torch.cuda.current_stream().cuda_stream
    sides = {
        "c_api_from_cpp": lambda: tessel._C._gemm_host_loop(a, b, d, None, 1.0, 0.0, stream, None, False, calls),
        "c_api_checks_only": lambda: tessel._C._gemm_host_loop(a, b, d, None, 1.0, 0.0, stream, None, False, calls,
                                                               False),
        "tessel.gemm": _py_loop(lambda: tessel.gemm(a, b, out=d), calls),
        "tessel.gemm(stream=int)": _py_loop(lambda: tessel.gemm(a, b, out=d, stream=stream), calls),
        "torch.ops.tessel.gemm": _py_loop(lambda: torch.ops.tessel.gemm(a, b), calls),
        "torch.matmul(out=)": _py_loop(lambda: torch.matmul(a, b, out=d), calls),
        "torch.matmul": _py_loop(lambda: torch.matmul(a, b), calls),
    }
    us, samples = _host_us_per_call(torch, sides, clock_mhz, calls, rounds)
    added = statistics.median(x - y for x, y in zip(samples["tessel.gemm"], samples["c_api_from_cpp"]))
    return {
        "problem": "1024x1024x1024 bf16 tn", "calls": calls, "rounds": rounds,
        "gpu_held_busy": getattr(torch.cuda, "_sleep", None) is not None,
        "us_per_call": us,
        "tessel_gemm_over_c_api_us": added,
        "target_us": 5.0,
        "note": "host time per call (median over rounds), calls enqueued back to back while a sleep kernel keeps the "
                "GPU busy; c_api_from_cpp is tessel_gemm called from C++ with the arguments prepared once, "
                "c_api_checks_only tessel_gemm_can_implement (the rules and the kernel choice, no launch); "
                "tessel_gemm_over_c_api_us is the median of the rounds' paired differences",
    }


# The attention problem whose host cost the attention suite records: the suite's shortest line.
_ATTN_OVERHEAD_PROBLEM = "b16-h16-s1024-d128"


def measure_attention_overhead(torch, clock_mhz, calls=50, rounds=21):
    """Host microseconds per call of tessel.attention (the library's kernel, the sm_80 kernel by
    name, torch.ops.tessel.attention) and of SDPA's cuDNN and flash backends at
    _ATTN_OVERHEAD_PROBLEM, the GPU held busy (_host_us_per_call). The target: tessel.attention
    costs the host no more than SDPA's cuDNN backend does."""
    import tessel.torch  # noqa: F401  (torch.ops.tessel.attention)
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    p = _AttnProblem(torch, parse_attention_problem(_ATTN_OVERHEAD_PROBLEM), "bf16")
    q, k, v, out = p.make_set(11)
    qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    sm80 = f"sm80_attention_bf16_d{p.p['head_dim']}"

    def sdpa_loop(backend):
        loop = _py_loop(lambda: sdpa(qt, kt, vt), calls)

        def timed():
            with sdpa_kernel(backend):
                return loop()

        return timed

    sides = {
        "tessel.attention": _py_loop(lambda: tessel.attention(q, k, v, out=out), calls),
        "tessel.attention(" + sm80 + ")": _py_loop(lambda: tessel.attention(q, k, v, out=out, kernel=sm80), calls),
        "torch.ops.tessel.attention": _py_loop(lambda: tessel.torch.attention(q, k, v), calls),
        "sdpa cudnn": sdpa_loop(SDPBackend.CUDNN_ATTENTION),
        "sdpa flash": sdpa_loop(SDPBackend.FLASH_ATTENTION),
    }
    us, _ = _host_us_per_call(torch, sides, clock_mhz, calls, rounds)
    return {
        "problem": attention_text(p.p) + " bf16", "calls": calls, "rounds": rounds,
        "gpu_held_busy": getattr(torch.cuda, "_sleep", None) is not None,
        "us_per_call": us,
        "target_us": us["sdpa cudnn"],
        "note": "host time per call (median over rounds), calls enqueued back to back while a sleep kernel keeps the "
                "GPU busy; q, k, v [B, S, H, D], out= given to tessel.attention, SDPA on transposed views; the "
                "target is SDPA's cuDNN backend's figure",
    }


# The convolution problem whose host cost the conv suite records: a small ResNet 3x3 layer.
_CONV_OVERHEAD_PROBLEM = "n8-h56-w56-c64-k64-r3-s3-pad1"


def measure_conv_overhead(torch, clock_mhz, calls=50, rounds=21):
    """Host microseconds per call of tessel.conv, conv_dgrad and conv_wgrad and of torch's passes
    (F.conv2d, torch.nn.grad.conv2d_input, conv2d_weight: cuDNN) at _CONV_OVERHEAD_PROBLEM, bf16,
    channels_last, the GPU held busy (_host_us_per_call). The target: each of tessel's passes costs
    the host no more than torch's."""
    spec = parse_conv_problem(_CONV_OVERHEAD_PROBLEM)
    sides = {}
    for op in _CONV_OPS:
        cp = _ConvProblem(torch, spec, "bf16", op)
        operands = cp.make_set(13)
        sides[f"tessel {op}"] = _py_loop(lambda cp=cp, s=operands: cp.tessel(*s), calls)
        sides[f"torch {op}"] = _py_loop(lambda cp=cp, s=operands: cp.torch_side(*s), calls)
    us, _ = _host_us_per_call(torch, sides, clock_mhz, calls, rounds)
    return {
        "problem": conv_text(spec) + " bf16", "calls": calls, "rounds": rounds,
        "gpu_held_busy": getattr(torch.cuda, "_sleep", None) is not None,
        "us_per_call": us,
        "target_us": {op: us[f"torch {op}"] for op in _CONV_OPS},
        "note": "host time per call (median over rounds), calls enqueued back to back while a sleep kernel keeps the "
                "GPU busy; tessel writes into out=, torch allocates its result; each pass's target is torch's figure",
    }


def _fmt(v, spec):
    return "-" if v is None else format(v, spec)


def _hopper_sxm(info):
    """An H100/H200 SXM (132 SMs at sm_90): the GPU whose datasheet peaks pct_peak uses."""
    return info["cc"] == (9, 0) and info["sm_count"] == 132


def _report(torch, info, suite, method):
    """The JSON's header (DESIGN.md section 6), printed as two lines; results to be appended."""
    report = {
        "gpu": info["name"], "sm_count": info["sm_count"], "clock_mhz": info["clock_mhz"],
        "driver": _version_text(info["driver_version"]), "cuda": _version_text(info["runtime_version"]),
        "torch": torch.__version__, "torch_cuda": torch.version.cuda,
        "commit": _commit(), "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "suite": suite, "method": method, "results": [],
    }
    print(f"GPU      {info['name']} (sm_{info['cc'][0]}{info['cc'][1]}, {info['sm_count']} SMs, "
          f"L2 {info['l2_bytes'] >> 20} MB), driver {report['driver']}, torch {torch.__version__}")
    print(f"tessel   commit {report['commit']}, {report['date']}")
    return report


def _write(report, args, info):
    """Writes the JSON to --json, else <out-dir>/<suite>-<gpu>.json."""
    path = args.json or os.path.join(args.out_dir, f"{report['suite']}-{_gpu_short_name(info['name'])}.json")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    print(f"\nwrote {path}")


def _parse(ap, argv):
    args = ap.parse_args(argv)
    if args.iters < 1 or args.warmup < 0:
        ap.error("--iters must be >= 1 and --warmup >= 0")
    return args


def _torch_and_device(baseline):
    """torch (or exit, naming the baseline that needs it) and tessel.device_info of torch's current
    device."""
    torch = _need_torch(baseline)
    return torch, tessel.device_info(torch.cuda.current_device())


def _common_options(ap, suite):
    ap.add_argument("--iters", type=int, default=30, help="timed launches per side (default 30)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed launches per side first (default 5)")
    ap.add_argument("--suite", default=None, help=f"suite name in the JSON and its file name (default {suite})")
    ap.add_argument("--json", default=None, help="output file (default <out-dir>/<suite>-<gpu>.json)")
    ap.add_argument("--out-dir", default=os.path.join("bench", "results"), help="where the JSON goes (default bench/results)")


def gemm_main(argv):
    ap = argparse.ArgumentParser(prog="python -m tessel.bench gemm", description="tessel.gemm against torch.matmul")
    ap.add_argument("--problems", nargs="+", type=parse_problem, metavar="[Bx]MxNxK",
                    help="problems to run with --dtype and --layout (default: the suite in tessel/bench.py)")
    ap.add_argument("--dtype", choices=_DTYPES, default="bf16")
    ap.add_argument("--layout", choices=("tn", "nn", "nt", "tt"), default="tn")
    ap.add_argument("--no-verify", dest="verify", action="store_false", help="skip the float64 check")
    ap.add_argument("--no-overhead", dest="overhead", action="store_false", help="skip the per-call overhead")
    _common_options(ap, "python-gemm")
    args = _parse(ap, argv)
    torch, info = _torch_and_device("torch.matmul")
    suite = args.suite or "python-gemm"
    if args.problems:
        problems = [(batch, m, n, k, args.dtype, args.layout) for batch, m, n, k in args.problems]
    else:
        problems = [(*parse_problem(s), dt, lay) for s, dt, lay in _DEFAULT_PROBLEMS]
    hopper_sxm = _hopper_sxm(info)
    report = _report(torch, info, suite,
                     "python -m tessel.bench: median of --iters launches per side after --warmup, CUDA events per "
                     "launch on torch's current stream, tessel.gemm and torch.matmul(out=) interleaved, input sets "
                     "rotated through >= 2x L2; fp32 baseline with allow_tf32 off; fp8 baseline torch._scaled_mm "
                     "(tn only)")
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
    _write(report, args, info)
    return 1 if failed else 0


# ---- attention -------------------------------------------------------------------------------------

_ATTN_DTYPES = ("bf16", "fp16")
# (problem, dtype): B4 H32 S4096 at each head dim with and without causal masking, a long sequence,
# GQA, and many short sequences.
_DEFAULT_ATTENTION = [
    ("b4-h32-s4096-d64", "bf16"),
    ("b4-h32-s4096-d64-causal", "bf16"),
    ("b4-h32-s4096-d128", "bf16"),
    ("b4-h32-s4096-d128-causal", "bf16"),
    ("b4-h32-s4096-d256", "bf16"),
    ("b4-h32-s4096-d256-causal", "bf16"),
    ("b1-h32-s16384-d128", "bf16"),
    ("b4-h32-kv8-s4096-d128", "bf16"),
    ("b16-h16-s1024-d128", "bf16"),
]
_ATTN_FIELDS = {"b": "batch", "h": "heads", "kv": "kv_heads", "s": "seqlen", "sq": "seqlen_q", "sk": "seqlen_k",
                "d": "head_dim", "dv": "head_dim_v"}
# Half an ulp of 1.0 in each storage type: one unit in the last place at magnitude m is about 2 m u.
_UNIT_ROUNDOFF = {"bf16": 2.0**-8, "fp16": 2.0**-11}


def parse_attention_problem(text):
    """'b4-h32-s4096-d128[-kv8][-sq1024][-sk2048][-dv128][-causal]' -> dict of batch, heads,
    kv_heads, seqlen_q, seqlen_k, head_dim, head_dim_v, causal (s sets both lengths)."""
    p = {"causal": False}
    for token in text.lower().split("-"):
        if token == "causal":
            p["causal"] = True
            continue
        key = token.rstrip("0123456789")
        digits = token[len(key):]
        if key not in _ATTN_FIELDS or not digits or int(digits) < 1 or _ATTN_FIELDS[key] in p:
            raise argparse.ArgumentTypeError(
                f"attention problem '{text}': '{token}' is not one of b<B> h<H> kv<H_kv> s<S> sq<S_q> sk<S_k> d<D> "
                "dv<D_v> causal (positive, each once)")
        p[_ATTN_FIELDS[key]] = int(digits)
    seqlen = p.pop("seqlen", None)
    p.setdefault("seqlen_q", seqlen)
    p.setdefault("seqlen_k", seqlen)
    for need in ("batch", "heads", "seqlen_q", "seqlen_k", "head_dim"):
        if p.get(need) is None:
            raise argparse.ArgumentTypeError(f"attention problem '{text}': no {need} (b<B> h<H> s<S> d<D> are needed)")
    p.setdefault("kv_heads", p["heads"])
    p.setdefault("head_dim_v", p["head_dim"])
    if p["heads"] % p["kv_heads"]:
        raise argparse.ArgumentTypeError(f"attention problem '{text}': h{p['heads']} is not a multiple of "
                                         f"kv{p['kv_heads']}")
    return p


def attention_pairs(seqlen_q, seqlen_k, causal):
    """The (query, key) pairs a top-left causal mask keeps (all of them without causal); a square
    causal problem counts S^2 / 2, FlashAttention's convention."""
    if not causal:
        return seqlen_q * seqlen_k
    if seqlen_q == seqlen_k:
        return seqlen_q * seqlen_k / 2
    # query i sees keys 0..min(i, S_k - 1)
    full = max(0, seqlen_q - seqlen_k)  # rows that see every key
    tri = min(seqlen_q, seqlen_k)
    return tri * (tri + 1) / 2 + full * seqlen_k


def attention_flops(p):
    """2 B H pairs (D + D_v): the two products of every kept (query, key) pair."""
    pairs = attention_pairs(p["seqlen_q"], p["seqlen_k"], p["causal"])
    return 2.0 * p["batch"] * p["heads"] * pairs * (p["head_dim"] + p["head_dim_v"])


def attention_text(p):
    heads = f"h{p['heads']}" + (f"/{p['kv_heads']}" if p["kv_heads"] != p["heads"] else "")
    seq = f"s{p['seqlen_q']}" if p["seqlen_q"] == p["seqlen_k"] else f"s{p['seqlen_q']}x{p['seqlen_k']}"
    dims = f"d{p['head_dim']}" + (f"/{p['head_dim_v']}" if p["head_dim_v"] != p["head_dim"] else "")
    return f"b{p['batch']} {heads} {seq} {dims}" + (" causal" if p["causal"] else "")


class _AttnProblem:
    def __init__(self, torch, spec, dtype):
        self.torch, self.p, self.dtype = torch, spec, dtype
        self.t_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]

    def make_set(self, seed):
        """q, k, v and out stored [B, S, H, D], uniform(-1, 1) (never zeros)."""
        torch, p = self.torch, self.p
        gen = torch.Generator(device="cuda")
        gen.manual_seed(seed)

        def rand(*shape):
            return ((torch.rand(shape, generator=gen, device="cuda") * 2 - 1)).to(self.t_dtype)

        q = rand(p["batch"], p["seqlen_q"], p["heads"], p["head_dim"])
        k = rand(p["batch"], p["seqlen_k"], p["kv_heads"], p["head_dim"])
        v = rand(p["batch"], p["seqlen_k"], p["kv_heads"], p["head_dim_v"])
        out = torch.empty(p["batch"], p["seqlen_q"], p["heads"], p["head_dim_v"], dtype=self.t_dtype, device="cuda")
        return q, k, v, out

    def set_bytes(self):
        p = self.p
        return 2 * p["batch"] * (p["seqlen_q"] * p["heads"] * (p["head_dim"] + p["head_dim_v"]) +
                                 p["seqlen_k"] * p["kv_heads"] * (p["head_dim"] + p["head_dim_v"]))

    def tessel(self, q, k, v, out):
        return tessel.attention(q, k, v, out=out, causal=self.p["causal"], align="top-left")

    def tessel_named(self, kernel):
        """fn(q, k, v, out): tessel.attention running `kernel` (a name from tessel.attention_kernels())."""
        def run(q, k, v, out):
            return tessel.attention(q, k, v, out=out, causal=self.p["causal"], align="top-left", kernel=kernel)

        return run

    def sdpa(self, backend):
        """F.scaled_dot_product_attention on transposed [B, H, S, D] views, under sdpa_kernel(backend)."""
        from torch.nn.attention import sdpa_kernel
        from torch.nn.functional import scaled_dot_product_attention as sdpa

        kwargs = {"is_causal": self.p["causal"]}
        if self.p["kv_heads"] != self.p["heads"]:
            kwargs["enable_gqa"] = True

        def run(q, k, v, out):
            with sdpa_kernel(backend):
                return sdpa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), **kwargs).transpose(1, 2)

        return run


def attention_reference(torch, q, k, v, causal):
    """float32 out [B, S_q, H, D_v] of q, k, v stored [B, S, H, D] (top-left causal), from math
    SDPA in float32, a few heads at a time so that the score matrices stay within ~2 GiB."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    b, s_q, h, _ = q.shape
    s_k, h_kv, d_v = k.shape[1], k.shape[2], v.shape[3]
    group = h // h_kv
    out = torch.empty(b, s_q, h, d_v, dtype=torch.float32, device=q.device)
    step = max(1, min(h, (2 << 30) // max(1, 4 * b * s_q * s_k)))
    with sdpa_kernel(SDPBackend.MATH):
        for h0 in range(0, h, step):
            heads = torch.arange(h0, min(h, h0 + step), device=q.device)
            qh = q[:, :, h0:h0 + len(heads)].float().transpose(1, 2)
            kh = k.index_select(2, heads // group).float().transpose(1, 2)
            vh = v.index_select(2, heads // group).float().transpose(1, 2)
            out[:, :, h0:h0 + len(heads)] = sdpa(qh, kh, vh, is_causal=causal).transpose(1, 2)
    return out


def run_attention(torch, ap_, args, l2_bytes):
    """One attention problem: each side once (verification), then the interleaved timing."""
    from torch.nn.attention import SDPBackend

    p = ap_.p
    flops = attention_flops(p)
    row = {"op": "attn", "m": p["seqlen_q"], "n": p["seqlen_k"], "k": p["head_dim"], **p,
           "dtype": ap_.dtype, "layout": "bshd", "kernel": None, "ms": None, "tflops": None, "pct_peak": None,
           "baseline": "cudnn", "baseline_ms": None, "baseline_tflops": None, "ratio": None,
           "flash_ms": None, "flash_tflops": None, "ratio_flash": None, "baselines": {},
           "verified": None, "max_abs_err": None, "max_rel_err": None, "bound": None, "iters": args.iters}
    sets = _input_sets(torch, ap_, l2_bytes)
    row["input_sets"] = len(sets)
    q, k, v, out = sets[0]

    # Each side once: the outputs verification compares, and which baselines run this problem.
    # With --kernels, one tessel side per named kernel (row["kernels"]), the first in the row's own fields.
    kernels = args.kernels or []
    sides = [ap_.tessel_named(name) for name in kernels] or [ap_.tessel]
    outs = [out] + [torch.empty_like(out) for _ in sides[1:]]
    for fn, o in zip(sides, outs):
        o.fill_(float("nan"))
        fn(q, k, v, o)
    if kernels:
        row["kernel"] = kernels[0]
        row["kernels"] = {name: {} for name in kernels}
    baseline_out = {}
    for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
        fn = ap_.sdpa(backend)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                baseline_out[name] = fn(q, k, v, None)
            torch.cuda.synchronize()
        except RuntimeError as e:
            row["baselines"][name] = {"error": str(e).strip().splitlines()[0] if str(e).strip() else repr(e)}
            continue
        row["baselines"][name] = {}
        sides.append(fn)
    torch.cuda.synchronize()

    if args.verify:
        ref = attention_reference(torch, q, k, v, p["causal"])
        scale = float(ref.abs().max()) if ref.numel() else 0.0
        errs = [float((o.float() - ref).abs().max()) if ref.numel() else 0.0 for o in outs]
        errs = [e if bool(torch.isfinite(o).all()) else math.inf for e, o in zip(errs, outs)]
        for name, e in zip(kernels, errs):
            row["kernels"][name]["max_abs_err"] = e
        err = max(errs)
        for name, o in baseline_out.items():
            row["baselines"][name]["max_abs_err"] = float((o.float() - ref).abs().max()) if ref.numel() else 0.0
        low = next((row["baselines"][n]["max_abs_err"] for n in ("cudnn", "flash") if n in baseline_out), None)
        row["max_abs_err"] = err
        row["max_rel_err"] = err / scale if scale > 0 else err
        if low is not None:
            row["bound"] = 2.0 * low + 2.0 * _UNIT_ROUNDOFF[ap_.dtype] * scale
            row["verified"] = err <= row["bound"]
        del ref
    del baseline_out, outs

    _time_attention_sides(torch, row, sides, sets, flops, args, kernels)
    del sets
    return row


def _time_attention_sides(torch, row, sides, sets, flops, args, kernels=()):
    """tessel (sides[0], or one side per name in `kernels`, the first the row's own) and the SDPA
    backends that ran (the rest, cuDNN before flash) timed interleaved; fills the row's ms, TFLOP/s
    and ratios, and each named kernel's in row["kernels"]."""
    ms = _interleaved_ms(torch, sides, sets, args.warmup, args.iters, args.rounds)
    mine = max(1, len(kernels))
    row["ms"] = ms[0]
    row["tflops"] = flops / (ms[0] * 1e-3) / 1e12
    names = [n for n in ("cudnn", "flash") if "error" not in row["baselines"][n]]
    for name, t in zip(names, ms[mine:]):
        b = row["baselines"][name]
        b["ms"] = t
        b["tflops"] = flops / (t * 1e-3) / 1e12
        b["ratio"] = row["tflops"] / b["tflops"]
    if "ms" in row["baselines"]["cudnn"]:
        row["baseline_ms"], row["baseline_tflops"] = row["baselines"]["cudnn"]["ms"], row["baselines"]["cudnn"]["tflops"]
        row["ratio"] = row["baselines"]["cudnn"]["ratio"]
    if "ms" in row["baselines"]["flash"]:
        row["flash_ms"], row["flash_tflops"] = row["baselines"]["flash"]["ms"], row["baselines"]["flash"]["tflops"]
        row["ratio_flash"] = row["baselines"]["flash"]["ratio"]
    for name, t in zip(kernels, ms):
        kr = row["kernels"][name]
        kr["ms"], kr["tflops"] = t, flops / (t * 1e-3) / 1e12
        kr["ratio"] = kr["tflops"] / row["baseline_tflops"] if row["baseline_tflops"] else None
        kr["vs_first"] = ms[0] / t


# The backward's FLOPs over the forward's: FlashAttention's convention (S = Q K^T, dP = dO V^T,
# dV = P^T dO, dK = dS^T Q, dQ = dS K against S and O = P V: 5 GEMMs to 2).
BACKWARD_FLOP_RATIO = 2.5


class _AttnBackwardProblem(_AttnProblem):
    """The backward of an attention problem. An input set is q, k, v (leaves, stored [B, S, H, D]),
    dout, and each side's forward output on them (graphs: side name -> out), made once per set
    untimed, so that a timed launch is that side's backward alone: torch.autograd.grad(out,
    (q, k, v), dout, retain_graph=True), the engine call a training step makes."""

    def __init__(self, torch, spec, dtype, deterministic):
        super().__init__(torch, spec, dtype)
        self.deterministic = deterministic

    def make_set(self, seed):
        q, k, v, out = super().make_set(seed)
        gen = self.torch.Generator(device="cuda")
        gen.manual_seed(seed + 7919)
        dout = (self.torch.rand(out.shape, generator=gen, device="cuda") * 2 - 1).to(self.t_dtype)
        return [q.requires_grad_(), k.requires_grad_(), v.requires_grad_(), dout, {}]

    def set_bytes(self):
        # q, k, v, dout; per side the forward's out (and lse) kept for the backward, and dq, dk, dv
        return 4 * super().set_bytes()

    def forward(self, name, backend=None):
        """fn(q, k, v, dout, graphs): the side's forward on the set, kept in graphs[name]."""
        import tessel.torch  # noqa: F401  (torch.ops.tessel.attention and its autograd)

        sdpa = None if backend is None else self.sdpa(backend)

        def run(q, k, v, dout, graphs):
            if sdpa is None:
                graphs[name] = tessel.torch.attention(q, k, v, causal=self.p["causal"], align="top-left",
                                                      deterministic=self.deterministic)
            else:
                graphs[name] = sdpa(q, k, v, None)

        return run

    def backward(self, name):
        """fn(q, k, v, dout, graphs): the side's backward through the graph its forward left."""
        def run(q, k, v, dout, graphs):
            return self.torch.autograd.grad(graphs[name], (q, k, v), dout, retain_graph=True)

        return run


def attention_backward_reference(torch, q, k, v, dout, causal):
    """float32 (dq, dk, dv) of sum(out * dout) for q, k, v stored [B, S, H, D] (top-left causal), by
    autograd through math SDPA in float32, a few query heads at a time (dk, dv summed over the query
    heads of each key/value head)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    b, s_q, h, _ = q.shape
    s_k, h_kv = k.shape[1], k.shape[2]
    group = h // h_kv
    dq = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    dk = torch.zeros(k.shape, dtype=torch.float32, device=q.device)
    dv = torch.zeros(v.shape, dtype=torch.float32, device=q.device)
    step = max(1, min(h, (512 << 20) // max(1, 4 * b * s_q * s_k)))
    with sdpa_kernel(SDPBackend.MATH), torch.enable_grad():
        for h0 in range(0, h, step):
            heads = torch.arange(h0, min(h, h0 + step), device=q.device)
            n, kv = len(heads), heads // group
            qh = q.detach()[:, :, h0:h0 + n].float().transpose(1, 2).requires_grad_()
            kh = k.detach().index_select(2, kv).float().transpose(1, 2).requires_grad_()
            vh = v.detach().index_select(2, kv).float().transpose(1, 2).requires_grad_()
            out = sdpa(qh, kh, vh, is_causal=causal)
            gq, gk, gv = torch.autograd.grad(out, (qh, kh, vh), dout[:, :, h0:h0 + n].float().transpose(1, 2))
            dq[:, :, h0:h0 + n] = gq.transpose(1, 2)
            dk.index_add_(2, kv, gk.transpose(1, 2))
            dv.index_add_(2, kv, gv.transpose(1, 2))
    return dq, dk, dv


def run_attention_backward(torch, ap_, args, l2_bytes):
    """One attention problem's backward: each side's forward on every input set (untimed), each side's
    gradients once (verification), then the backwards interleaved."""
    from torch.nn.attention import SDPBackend

    p = ap_.p
    flops = BACKWARD_FLOP_RATIO * attention_flops(p)
    row = {"op": "attn_bwd", "pass": "backward", "deterministic": ap_.deterministic, "m": p["seqlen_q"],
           "n": p["seqlen_k"], "k": p["head_dim"], **p, "dtype": ap_.dtype, "layout": "bshd", "kernel": None,
           "flops": flops, "ms": None, "tflops": None, "pct_peak": None, "baseline": "cudnn", "baseline_ms": None,
           "baseline_tflops": None, "ratio": None, "flash_ms": None, "flash_tflops": None, "ratio_flash": None,
           "baselines": {}, "verified": None, "max_abs_err": None, "max_rel_err": None, "bound": None, "errors": {},
           "iters": args.iters}
    sets = _input_sets(torch, ap_, l2_bytes)
    row["input_sets"] = len(sets)

    # Every side's forward on every set (a backend that refuses the problem is left out).
    for s in sets:
        ap_.forward("tessel")(*s)
    sides = [ap_.backward("tessel")]
    for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for s in sets:
                    ap_.forward(name, backend)(*s)
                ap_.backward(name)(*sets[0])  # the backward too may refuse
            torch.cuda.synchronize()
        except RuntimeError as e:
            row["baselines"][name] = {"error": str(e).strip().splitlines()[0] if str(e).strip() else repr(e)}
            for s in sets:
                s[4].pop(name, None)
            continue
        row["baselines"][name] = {}
        sides.append(ap_.backward(name))
    q, k, v, dout, graphs = sets[0]

    if args.verify:
        ref = attention_backward_reference(torch, q, k, v, dout, p["causal"])
        grads = {name: ap_.backward(name)(q, k, v, dout, graphs) for name in ["tessel", *row["baselines"]]
                 if name == "tessel" or "error" not in row["baselines"][name]}
        torch.cuda.synchronize()
        verified, worst, worst_rel = True, 0.0, 0.0
        for i, g in enumerate(("dq", "dk", "dv")):
            scale = float(ref[i].abs().max()) if ref[i].numel() else 0.0
            errs = {}
            for name, got in grads.items():
                e = float((got[i].float() - ref[i]).abs().max()) if ref[i].numel() else 0.0
                errs[name] = e if bool(torch.isfinite(got[i]).all()) else math.inf
            low = next((errs[n] for n in ("cudnn", "flash") if n in errs), None)
            entry = {"tessel": errs["tessel"], "scale": scale}
            for name in ("cudnn", "flash"):
                if name in errs:
                    entry[name] = errs[name]
            if low is not None:
                entry["bound"] = 2.0 * low + 2.0 * _UNIT_ROUNDOFF[ap_.dtype] * scale
                verified = verified and errs["tessel"] <= entry["bound"]
            row["errors"][g] = entry
            worst = max(worst, errs["tessel"])
            worst_rel = max(worst_rel, errs["tessel"] / scale if scale > 0 else errs["tessel"])
        row["max_abs_err"], row["max_rel_err"] = worst, worst_rel
        if all("bound" in e for e in row["errors"].values()):
            row["verified"] = verified
        del ref, grads

    _time_attention_sides(torch, row, sides, sets, flops, args)
    del sets
    return row


def _attention_parser():
    ap = argparse.ArgumentParser(prog="python -m tessel.bench attention",
                                 description="tessel.attention (or, with --backward, its backward) against "
                                             "F.scaled_dot_product_attention (cuDNN, flash)")
    ap.add_argument("--problems", nargs="+", type=parse_attention_problem, metavar="b4-h32-s4096-d128[-causal]",
                    help="problems to run with --dtype (default: the suite in tessel/bench.py); also kv<H_kv>, "
                         "sq<S_q>, sk<S_k>, dv<D_v>")
    ap.add_argument("--dtype", choices=_ATTN_DTYPES, default="bf16")
    ap.add_argument("--backward", action="store_true",
                    help="time the backward (dq, dk, dv through autograd) instead of the forward; suite "
                         "python-attention-backward")
    ap.add_argument("--deterministic", action="store_true",
                    help="with --backward: tessel's bitwise-repeatable backward")
    ap.add_argument("--kernels", type=_kernel_list, default=None, metavar="NAME[,NAME...]",
                    help="the forward: time these kernels by name (tessel.attention_kernels()) side by side instead "
                         "of the library's choice, each verified; suite python-attention-kernels")
    ap.add_argument("--rounds", type=int, default=1,
                    help="timing rounds of --iters launches per side, the sides' order rotated between rounds "
                         "(default 1)")
    ap.add_argument("--no-verify", dest="verify", action="store_false", help="skip the float32 check")
    ap.add_argument("--no-overhead", dest="overhead", action="store_false",
                    help="skip the per-call host time (measured for the forward's suite, not with --backward or "
                         "--kernels)")
    _common_options(ap, "python-attention, python-attention-backward with --backward, python-attention-kernels "
                        "with --kernels")
    return ap


def _kernel_list(text):
    names = text.split(",")
    if not all(names) or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"'{text}' is not a list of distinct kernel names separated by commas")
    return names


def attention_args(argv):
    """The parsed options of `python -m tessel.bench attention` (usage errors exit 2), with `suite`
    set: --suite, else python-attention or python-attention-backward."""
    ap = _attention_parser()
    args = _parse(ap, argv)
    if args.deterministic and not args.backward:
        ap.error("--deterministic: applies to the backward; add --backward (the forward is deterministic already)")
    if args.kernels and args.backward:
        ap.error("--kernels: names forward kernels; drop --backward")
    if args.rounds < 1:
        ap.error("--rounds must be >= 1")
    if args.suite is None:
        args.suite = ("python-attention-backward" if args.backward else
                      "python-attention-kernels" if args.kernels else "python-attention")
    return args


_ATTN_METHOD = ("median of --iters launches per side after --warmup, CUDA events per launch on torch's current "
                "stream, input sets rotated through >= 2x L2; q, k, v stored [B, S, H, D], SDPA given transposed "
                "views; ")


def attention_main(argv):
    args = attention_args(argv)
    torch, info = _torch_and_device("F.scaled_dot_product_attention")
    if args.problems:
        problems = [(p, args.dtype) for p in args.problems]
    else:
        problems = [(parse_attention_problem(t), dt) for t, dt in _DEFAULT_ATTENTION]
    if args.backward:
        method = ("python -m tessel.bench attention --backward: " + _ATTN_METHOD +
                  "each side's forward made once per set (untimed), then its backward timed alone as "
                  "torch.autograd.grad(out, (q, k, v), dout, retain_graph=True): torch.ops.tessel.attention's "
                  "autograd (tessel.attention_backward's kernels" + (", deterministic" if args.deterministic else "") +
                  ") and F.scaled_dot_product_attention's under sdpa_kernel(CUDNN_ATTENTION) and (FLASH_ATTENTION), "
                  "interleaved; FLOPs 2.5 x the forward's 2 B H pairs (D + D_v); dq, dk, dv verified against float32 "
                  "autograd of math SDPA (max err <= 2 x SDPA's + one ulp)")
    else:
        method = ("python -m tessel.bench attention: " + _ATTN_METHOD +
                  ("tessel.attention(out=, kernel=NAME) for each of --kernels " + ",".join(args.kernels) if args.kernels
                   else "tessel.attention(out=)") +
                  " and F.scaled_dot_product_attention under sdpa_kernel(CUDNN_ATTENTION) and "
                  "(FLASH_ATTENTION) interleaved; FLOPs 2 B H pairs (D + D_v), causal square problems S^2/2 pairs")
    if args.rounds > 1:
        method += f"; {args.rounds} rounds of --iters, the sides' order rotated and reversed between rounds"
    report = _report(torch, info, args.suite, method)
    what = "max |dq, dk, dv - ref|" if args.backward else "max |out - ref|"
    print(f"{'problem':<30} {'dtype':<5} {'ms':>8} {'TFLOP/s':>8} {'cuDNN':>8} {'ratio':>6} {'flash':>8} "
          f"{'ratio':>6}  check ({what})")
    failed = False
    for spec, dtype in problems:
        text = attention_text(spec)
        try:
            if args.backward:
                row = run_attention_backward(torch, _AttnBackwardProblem(torch, spec, dtype, args.deterministic), args,
                                             info["l2_bytes"])
            else:
                row = run_attention(torch, _AttnProblem(torch, spec, dtype), args, info["l2_bytes"])
        except (RuntimeError, ValueError, TypeError) as e:
            failed = True
            print(f"{text:<30} {dtype:<5} error: {e}")
            report["results"].append({"op": "attn_bwd" if args.backward else "attn", **spec, "dtype": dtype,
                                      "error": str(e)})
            continue
        if _hopper_sxm(info) and row["tflops"]:
            row["pct_peak"] = 100.0 * row["tflops"] / _HOPPER_SXM_PEAK[dtype]
        report["results"].append(row)
        failed |= row["verified"] is False
        if row["verified"] is None:
            check = "-" if row["max_abs_err"] is None else f"{row['max_abs_err']:.2g} (no SDPA output to bound it)"
        elif args.backward:
            check = ("ok" if row["verified"] else "FAILED") + "".join(
                f" {g} {e['tessel']:.2g}{'<=' if e['tessel'] <= e['bound'] else '>'}{e['bound']:.2g}"
                for g, e in row["errors"].items())
        elif row["verified"]:
            check = f"ok {row['max_abs_err']:.2g} <= {row['bound']:.2g}"
        else:
            check = f"FAILED {row['max_abs_err']:.2g} > {row['bound']:.2g}"
        print(f"{text:<30} {dtype:<5} {_fmt(row['ms'], '8.3f')} {_fmt(row['tflops'], '8.1f')} "
              f"{_fmt(row['baseline_tflops'], '8.1f')} {_fmt(row['ratio'], '6.3f')} {_fmt(row['flash_tflops'], '8.1f')} "
              f"{_fmt(row['ratio_flash'], '6.3f')}  {check}" + (f"  {row['kernel']}" if "kernels" in row else ""))
        for name, kr in list(row.get("kernels", {}).items())[1:]:
            print(f"{'':<36} {_fmt(kr.get('ms'), '8.3f')} {_fmt(kr.get('tflops'), '8.1f')} {'':>8} "
                  f"{_fmt(kr.get('ratio'), '6.3f')}  {name}: {_fmt(kr.get('vs_first'), '.3f')}x {row['kernel']}")
        for name, b in row["baselines"].items():
            if "error" in b:
                print(f"{'':<36} {name}: {b['error']}")
    if args.overhead and not args.backward and not args.kernels:
        o = measure_attention_overhead(torch, info["clock_mhz"])
        report["overhead"] = o
        print(f"\nper-call host time at {o['problem']} ({o['calls']} calls back to back, GPU held busy):")
        for name, v in o["us_per_call"].items():
            print(f"  {name:<40} {v:8.2f} us")
        mine = o["us_per_call"]["tessel.attention"]
        print(f"  tessel.attention: {mine:.2f} us ({'within' if mine <= o['target_us'] else 'OVER'} the "
              f"{o['target_us']:.2f} us of SDPA's cuDNN backend)")
    _write(report, args, info)
    return 1 if failed else 0


# ---- grouped GEMM (mixture-of-experts) ----------------------------------------------------------------

# bench/grouped.txt's lines, the CLI's grouped suite: Mixtral-8x7B-like (8 experts; up/gate N 14336
# K 4096, down N 4096 K 14336), DeepSeek-V3-like routed experts (64 per GPU; N 2048 K 7168 and
# N 7168 K 2048), 256 small experts, and B stored [G, K, N]. (problem, verify)
_DEFAULT_GROUPED = [
    ("g8-t4096-n14336-k4096-skew0.5", True),
    ("g8-t8192-n14336-k4096-skew1-empty1", True),
    ("g8-t16384-n14336-k4096-skew1-empty1", False),
    ("g8-t4096-n4096-k14336-skew0.5", True),
    ("g8-t8192-n4096-k14336-skew1-empty1", True),
    ("g8-t16384-n4096-k14336-skew1-empty1", False),
    ("g64-t4096-n2048-k7168-skew1-empty8", True),
    ("g64-t16384-n2048-k7168-skew1-empty8", True),
    ("g64-t4096-n7168-k2048-skew1-empty8", True),
    ("g64-t16384-n7168-k2048-skew1-empty8", True),
    ("g256-t8192-n2048-k7168-skew1.2-empty64", True),
    ("g8-t8192-n14336-k4096-skew1-empty1-kn", True),
]
_GROUPED_DTYPES = ("bf16", "fp16")


def parse_grouped_problem(text):
    """'g8-t4096-n14336-k4096[-skew0.5][-empty1][-kn|-nk]' -> dict of groups, tokens, n, k, skew,
    empty, layout ("nk": b is the transposed view of [G, N, K] weights; "kn": a [G, K, N] array)."""
    p = {"skew": 0.0, "empty": 0, "layout": "nk"}
    seen = set()
    for token in text.lower().split("-"):
        if token in ("nk", "kn"):
            p["layout"] = token
            continue
        key = token.rstrip("0123456789.")
        value = token[len(key):]
        fields = {"g": "groups", "t": "tokens", "n": "n", "k": "k", "skew": "skew", "empty": "empty"}
        try:
            number = float(value) if key == "skew" else int(value)
        except ValueError:
            number = None
        if key not in fields or number is None or key in seen or number < 0 or (key in ("g", "n", "k") and number < 1):
            raise argparse.ArgumentTypeError(
                f"grouped problem '{text}': '{token}' is not one of g<G> t<tokens> n<N> k<K> skew<S> empty<E> nk kn "
                "(each once; G, N, K positive)")
        seen.add(key)
        p[fields[key]] = number
    missing = [f for f in ("g", "t", "n", "k") if f not in seen]
    if missing:
        raise argparse.ArgumentTypeError(f"grouped problem '{text}': needs {', '.join(missing)}")
    if p["empty"] >= p["groups"]:
        raise argparse.ArgumentTypeError(f"grouped problem '{text}': empty {p['empty']} leaves no group with rows")
    return p


def grouped_text(p):
    s = f"g{p['groups']} t{p['tokens']} n{p['n']} k{p['k']}"
    return s + (f" skew{p['skew']:g}" if p["skew"] else "") + (f" empty{p['empty']}" if p["empty"] else "") + \
        (" kn" if p["layout"] == "kn" else "")


def split_tokens(groups, tokens, skew, empty, seed=1):
    """Rows per group, the CLI's rule (apps/tessel/cmd_grouped.cpp): weights 1 / (rank + 1)^skew over
    the groups that get rows, ranks and the `empty` groups placed by a seeded shuffle, the tokens
    left by rounding given to the heaviest groups first. (Python's shuffle, so the placement differs
    from the CLI's for one seed; the sizes are the same multiset.)"""
    import random

    order = list(range(groups))
    random.Random(seed * 7919 + 11).shuffle(order)
    live = groups - empty
    w = [0.0] * groups
    for r in range(live):
        w[order[r]] = (r + 1) ** -skew
    total = sum(w)
    rows = [int(math.floor(tokens * w[g] / total)) for g in range(groups)]
    given, r = sum(rows), 0
    while given < tokens:
        rows[order[r]] += 1
        given += 1
        r = (r + 1) % live
    return rows


class _GroupedProblem:
    def __init__(self, torch, spec, dtype, seed):
        self.torch, self.spec, self.dtype = torch, spec, dtype
        self.t = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
        self.sizes = split_tokens(spec["groups"], spec["tokens"], spec["skew"], spec["empty"], seed)
        self.bounds, start = [], 0
        for rows in self.sizes:
            self.bounds.append((start, start + rows))
            start += rows

    def flops(self):
        return 2.0 * self.spec["tokens"] * self.spec["n"] * self.spec["k"]

    def set_bytes(self):
        s = self.spec
        return 2 * (s["tokens"] * s["k"] + s["groups"] * s["n"] * s["k"] + s["tokens"] * s["n"])

    def make_set(self, seed):
        torch, s = self.torch, self.spec
        gen = torch.Generator(device="cuda")
        gen.manual_seed(seed)

        def rand(*shape):
            return (torch.rand(shape, generator=gen, device="cuda") * 2 - 1).to(self.t)

        a = rand(s["tokens"], s["k"])
        b = rand(s["groups"], s["n"], s["k"]).transpose(1, 2) if s["layout"] == "nk" else rand(s["groups"], s["k"], s["n"])
        ends = [e for _, e in self.bounds]
        offs = torch.tensor(ends, dtype=torch.int32, device="cuda")
        d = torch.empty(s["tokens"], s["n"], dtype=self.t, device="cuda")
        return a, b, offs, d

    def tessel(self, a, b, offs, d):
        tessel.grouped_mm(a, b, offs, out=d)

    def loop(self, a, b, offs, d):
        for g, (start, end) in enumerate(self.bounds):
            if end > start:
                self.torch.matmul(a[start:end], b[g], out=d[start:end])

    def grouped_baseline(self):
        """(fn, "") or (None, why not): torch._grouped_mm, allocating its result as users call it."""
        torch = self.torch
        if not hasattr(torch, "_grouped_mm"):
            return None, f"torch {torch.__version__} has no torch._grouped_mm"
        return (lambda a, b, offs, d: torch._grouped_mm(a, b, offs)), ""

    def max_err(self, d, a, b):
        """max_rel_err over the groups (float64 reference per group)."""
        err = 0.0
        for g, (start, end) in enumerate(self.bounds):
            if end > start:
                err = max(err, max_rel_err(self.torch, d[start:end], a[start:end], b[g]))
        return err


def run_grouped(torch, p, args, l2_bytes, verify):
    s = p.spec
    row = {"op": "grouped_gemm", "m": s["tokens"], "n": s["n"], "k": s["k"], "batch": s["groups"],
           "groups": s["groups"], "tokens": s["tokens"], "skew": s["skew"], "empty": s["empty"], "rows": p.sizes,
           "dtype": p.dtype, "layout": s["layout"], "kernel": "sm90_grouped", "ms": None, "tflops": None,
           "pct_peak": None, "baseline": None, "baseline_ms": None, "baseline_tflops": None, "ratio": None,
           "loop_ms": None, "loop_tflops": None, "ratio_loop": None, "verified": None, "max_rel_err": None,
           "baseline_max_rel_err": None, "loop_max_rel_err": None, "iters": args.iters}
    grouped_fn, why = p.grouped_baseline()
    sets = _input_sets(torch, p, l2_bytes)
    row["input_sets"] = len(sets)
    a0, b0, offs0, d0 = sets[0]
    if grouped_fn is not None:  # a refusal (a layout or dtype this torch's kernel lacks) leaves it out
        try:
            grouped_fn(a0, b0, offs0, d0)
            torch.cuda.synchronize()
            row["baseline"] = "torch._grouped_mm"
        except (RuntimeError, ValueError, TypeError) as e:
            grouped_fn, why = None, f"torch._grouped_mm refused it: {str(e).splitlines()[0]}"
    if why:
        row["baseline_note"] = why
    if verify:
        d0.fill_(float("nan"))
        p.tessel(a0, b0, offs0, d0)
        torch.cuda.synchronize()
        row["max_rel_err"] = p.max_err(d0, a0, b0)
        row["verified"] = row["max_rel_err"] <= tolerance(p.dtype, p.dtype, s["k"])
        if grouped_fn is not None:
            row["baseline_max_rel_err"] = p.max_err(grouped_fn(a0, b0, offs0, d0), a0, b0)
        d0.fill_(float("nan"))
        p.loop(a0, b0, offs0, d0)
        row["loop_max_rel_err"] = p.max_err(d0, a0, b0)
    sides = [p.tessel, p.loop] + ([grouped_fn] if grouped_fn is not None else [])
    ms = _interleaved_ms(torch, sides, sets, args.warmup, args.iters)
    flops = p.flops()
    row["ms"], row["loop_ms"] = ms[0], ms[1]
    row["tflops"] = flops / (ms[0] * 1e-3) / 1e12
    row["loop_tflops"] = flops / (ms[1] * 1e-3) / 1e12
    row["ratio_loop"] = row["tflops"] / row["loop_tflops"]
    if grouped_fn is not None:
        row["baseline_ms"] = ms[2]
        row["baseline_tflops"] = flops / (ms[2] * 1e-3) / 1e12
        row["ratio"] = row["tflops"] / row["baseline_tflops"]
    del sets
    return row


def grouped_main(argv):
    ap = argparse.ArgumentParser(prog="python -m tessel.bench grouped",
                                 description="tessel.grouped_mm against torch._grouped_mm and a loop of torch.matmul")
    ap.add_argument("--problems", nargs="+", type=parse_grouped_problem, metavar="g8-t4096-n14336-k4096-skew0.5",
                    help="problems to run with --dtype (default: bench/grouped.txt's lines); also empty<E>, and kn "
                         "for b stored [G, K, N] (default nk: the transposed view of [G, N, K] weights)")
    ap.add_argument("--dtype", choices=_GROUPED_DTYPES, default="bf16")
    ap.add_argument("--seed", type=int, default=1, help="places the group sizes (default 1)")
    ap.add_argument("--no-verify", dest="verify", action="store_false", help="skip the float64 check")
    _common_options(ap, "python-grouped")
    args = _parse(ap, argv)
    torch, info = _torch_and_device("torch._grouped_mm")
    torch.backends.cuda.matmul.allow_tf32 = False
    if args.problems:
        problems = [(p, args.verify) for p in args.problems]
    else:
        problems = [(parse_grouped_problem(t), v and args.verify) for t, v in _DEFAULT_GROUPED]
    report = _report(torch, info, args.suite or "python-grouped",
                     "python -m tessel.bench grouped: median of --iters launches per side after --warmup, CUDA "
                     "events per launch on torch's current stream, tessel.grouped_mm (out=), a loop of "
                     "torch.matmul(out=) over the non-empty groups and torch._grouped_mm (allocating) interleaved, "
                     "input sets rotated through >= 2x L2; rows per group by the CLI's skew rule (Python's shuffle); "
                     "FLOPs 2 tokens N K; verified per group against float64 (the gemm suite's rule)")
    print(f"{'problem':<42} {'ms':>8} {'TFLOP/s':>8} {'_grouped':>8} {'ratio':>6} {'loop':>8} {'ratio':>6}  check")
    failed = False
    for spec, verify in problems:
        text = grouped_text(spec)
        p = _GroupedProblem(torch, spec, args.dtype, args.seed)
        try:
            row = run_grouped(torch, p, args, info["l2_bytes"], verify)
        except (RuntimeError, ValueError, TypeError) as e:
            failed = True
            print(f"{text:<42} error: {e}")
            report["results"].append({"op": "grouped_gemm", **spec, "dtype": args.dtype, "error": str(e)})
            continue
        if _hopper_sxm(info) and row["tflops"]:
            row["pct_peak"] = 100.0 * row["tflops"] / _HOPPER_SXM_PEAK[args.dtype]
        report["results"].append(row)
        failed |= row["verified"] is False
        check = "-" if row["verified"] is None else ("ok" if row["verified"] else "FAILED") + f" {row['max_rel_err']:.2g}"
        note = f"  ({row['baseline_note']})" if row.get("baseline_note") else ""
        print(f"{text:<42} {_fmt(row['ms'], '8.3f')} {_fmt(row['tflops'], '8.1f')} "
              f"{_fmt(row['baseline_tflops'], '8.1f')} {_fmt(row['ratio'], '6.3f')} {_fmt(row['loop_tflops'], '8.1f')} "
              f"{_fmt(row['ratio_loop'], '6.3f')}  {check}{note}")
    _write(report, args, info)
    return 1 if failed else 0


# ---- convolution ------------------------------------------------------------------------------------

_CONV_DTYPES = ("bf16", "fp16")
_CONV_OPS = ("fprop", "dgrad", "wgrad")
# (problem, dtype, passes): bench/conv.txt's layers, the CLI's convolution suite.
_DEFAULT_CONV = [
    ("n128-h224-w224-c3-k64-r7-s7-stride2-pad3", "bf16", _CONV_OPS),  # ResNet-50's stem
    ("n128-h224-w224-c3-k64-r7-s7-stride2-pad3", "fp16", ("fprop",)),
    ("n128-h56-w56-c64-k64-r3-s3-pad1", "bf16", _CONV_OPS),  # ResNet-50 3x3 layers
    ("n128-h28-w28-c128-k128-r3-s3-pad1", "bf16", _CONV_OPS),
    ("n128-h14-w14-c256-k256-r3-s3-pad1", "bf16", _CONV_OPS),
    ("n128-h7-w7-c512-k512-r3-s3-pad1", "bf16", _CONV_OPS),
    ("n128-h56-w56-c256-k64-r1-s1", "bf16", _CONV_OPS),  # ResNet-50 1x1 layers
    ("n128-h14-w14-c1024-k256-r1-s1", "bf16", _CONV_OPS),
    ("n128-h28-w28-c512-k1024-r1-s1-stride2", "bf16", _CONV_OPS),
    ("n64-h57-w57-c33-k65-r3-s3-pad1", "bf16", _CONV_OPS),  # odd channel counts
    ("n8-h64-w64-c320-k320-r3-s3-pad1", "bf16", _CONV_OPS),  # U-Net
    ("n4-d16-h56-w56-c64-k64-t3-r3-s3-pad1", "bf16", _CONV_OPS),  # 3-D
    ("n128-h28-w28-c256-k256-r3-s3-pad1-g256", "bf16", _CONV_OPS),  # depthwise
    ("n128-h14-w14-c512-k512-r3-s3-pad1-g512", "bf16", _CONV_OPS),
    ("n128-h14-w14-c1024-k1024-r3-s3-pad1-g1024", "bf16", _CONV_OPS),
]
_CONV_FIELDS = {"n": "n", "d": "d", "h": "h", "w": "w", "c": "c", "k": "k", "t": "t", "r": "r", "s": "s",
                "pad": "pad", "stride": "stride", "dil": "dilation", "g": "groups"}


def parse_conv_problem(text):
    """'n128-h56-w56-c64-k64-r3-s3[-pad1][-stride2][-dil2][-g4][-d16-t3]' -> dict of n, d, h, w,
    c, k, t, r, s, pad, stride, dilation, groups and dims (3 with d or t, else 2); pad, stride and
    dilation apply to every spatial dimension."""
    p = {}
    for token in text.lower().split("-"):
        key = token.rstrip("0123456789")
        digits = token[len(key):]
        if key not in _CONV_FIELDS or not digits or _CONV_FIELDS[key] in p:
            raise argparse.ArgumentTypeError(
                f"conv problem '{text}': '{token}' is not one of n<N> d<D> h<H> w<W> c<C> k<K> t<T> r<R> s<S> pad<P> "
                "stride<S> dil<D> g<G> (each once)")
        p[_CONV_FIELDS[key]] = int(digits)
    for need in ("n", "h", "w", "c", "k", "r", "s"):
        if need not in p:
            raise argparse.ArgumentTypeError(f"conv problem '{text}': no {need} (n h w c k r s are needed)")
    p["dims"] = 3 if "d" in p or "t" in p else 2
    for key, default in (("d", 1), ("t", 1), ("pad", 0), ("stride", 1), ("dilation", 1), ("groups", 1)):
        p.setdefault(key, default)
    for key in ("n", "d", "h", "w", "c", "k", "t", "r", "s", "stride", "dilation", "groups"):
        if p[key] < 1:
            raise argparse.ArgumentTypeError(f"conv problem '{text}': {key} must be >= 1")
    if p["c"] % p["groups"] or p["k"] % p["groups"]:
        raise argparse.ArgumentTypeError(f"conv problem '{text}': groups {p['groups']} does not divide c and k")
    if min(conv_out_extents(p)) < 1:
        raise argparse.ArgumentTypeError(f"conv problem '{text}': the output is empty")
    return p


def conv_out_extents(p):
    """(z, p, q): each spatial output extent, floor((in + 2 pad - dil (f - 1) - 1) / stride) + 1."""
    def extent(i, f, pad):
        return (i + 2 * pad - p["dilation"] * (f - 1) - 1) // p["stride"] + 1
    z = extent(p["d"], p["t"], p["pad"]) if p["dims"] == 3 else 1
    return z, extent(p["h"], p["r"], p["pad"]), extent(p["w"], p["s"], p["pad"])


def conv_flops(p):
    """2 N Z P Q K T R S C / groups, every pass (tessel/conv/conv_arguments.hpp's conv_flops)."""
    z, pp, q = conv_out_extents(p)
    return 2.0 * p["n"] * z * pp * q * p["k"] * p["t"] * p["r"] * p["s"] * (p["c"] // p["groups"])


def conv_group_gemm(p, op):
    """(m, n, k) of one group's implicit GEMM (conv_arguments.hpp's conv_group_gemm)."""
    z, pp, q = conv_out_extents(p)
    cg, kg, taps = p["c"] // p["groups"], p["k"] // p["groups"], p["t"] * p["r"] * p["s"]
    if op == "fprop":
        return p["n"] * z * pp * q, kg, taps * cg
    if op == "dgrad":
        return p["n"] * p["d"] * p["h"] * p["w"], cg, kg * taps
    return kg, taps * cg, p["n"] * z * pp * q


def conv_text(p):
    spatial = "x".join(str(v) for v in ((p["d"],) if p["dims"] == 3 else ()) + (p["h"], p["w"]))
    taps = "x".join(str(v) for v in ((p["t"],) if p["dims"] == 3 else ()) + (p["r"], p["s"]))
    s = f"n{p['n']} {spatial} c{p['c']} k{p['k']} {taps}"
    for key, name in (("stride", "stride"), ("pad", "pad"), ("dilation", "dil"), ("groups", "g")):
        if p[key] != (0 if key == "pad" else 1):
            s += f" {name}{p[key]}"
    return s


class _ConvProblem:
    def __init__(self, torch, spec, dtype, op):
        self.torch, self.p, self.dtype, self.op = torch, spec, dtype, op
        self.t_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
        dims = spec["dims"]
        self.fmt = torch.channels_last_3d if dims == 3 else torch.channels_last
        self.steps = {"stride": spec["stride"], "padding": spec["pad"], "dilation": spec["dilation"],
                      "groups": spec["groups"]}
        sp = ((spec["d"],) if dims == 3 else ()) + (spec["h"], spec["w"])
        taps = ((spec["t"],) if dims == 3 else ()) + (spec["r"], spec["s"])
        z, pp, q = conv_out_extents(spec)
        out_sp = ((z,) if dims == 3 else ()) + (pp, q)
        self.x_shape = (spec["n"], spec["c"]) + sp
        self.w_shape = (spec["k"], spec["c"] // spec["groups"]) + taps
        self.y_shape = (spec["n"], spec["k"]) + out_sp
        self.out_shape = {"fprop": self.y_shape, "dgrad": self.x_shape, "wgrad": self.w_shape}[op]

    def _rand(self, shape, gen, dtype=None):
        torch = self.torch
        t = torch.rand(shape, generator=gen, device="cuda") * 2 - 1
        return t.to(dtype or self.t_dtype).contiguous(memory_format=self.fmt)

    def make_set(self, seed):
        """x, w, dy channels_last uniform(-1, 1) (never zeros), tessel's output, and the channels-last
        views tessel reads: (x, w, dy, out, xv, wv, dyv, outv)."""
        torch = self.torch
        gen = torch.Generator(device="cuda")
        gen.manual_seed(seed)
        x, w, dy = self._rand(self.x_shape, gen), self._rand(self.w_shape, gen), self._rand(self.y_shape, gen)
        out = torch.empty(self.out_shape, dtype=self.t_dtype, device="cuda", memory_format=self.fmt)
        return (x, w, dy, out) + tuple(t.movedim(1, -1) for t in (x, w, dy, out))

    def set_bytes(self):
        el = 2
        numel = sum(math.prod(s) for s in (self.x_shape, self.w_shape, self.y_shape, self.out_shape))
        return el * numel

    def tessel(self, x, w, dy, out, xv, wv, dyv, outv):
        if self.op == "fprop":
            return tessel.conv(xv, wv, out=outv, **self.steps)
        if self.op == "dgrad":
            return tessel.conv_dgrad(dyv, wv, out=outv, **self.steps)
        return tessel.conv_wgrad(xv, dyv, out=outv, **self.steps)

    def kernel(self, x, w, dy, out, xv, wv, dyv, outv):
        a, b = {"fprop": (xv, wv), "dgrad": (dyv, wv), "wgrad": (xv, dyv)}[self.op]
        return tessel.conv_kernel(self.op, a, b, out=outv, **self.steps)

    def baseline_name(self):
        d = self.p["dims"]
        return {"fprop": f"F.conv{d}d", "dgrad": f"torch.nn.grad.conv{d}d_input",
                "wgrad": f"torch.nn.grad.conv{d}d_weight"}[self.op]

    def run_torch(self, x, w, dy):
        """torch's result for this pass on these (channels_last) tensors: F.conv / torch.nn.grad."""
        torch, d, st = self.torch, self.p["dims"], self.steps
        F, grad = torch.nn.functional, torch.nn.grad
        args = {"stride": st["stride"], "padding": st["padding"], "dilation": st["dilation"], "groups": st["groups"]}
        if self.op == "fprop":
            return (F.conv3d if d == 3 else F.conv2d)(x, w, None, **args)
        if self.op == "dgrad":
            return (grad.conv3d_input if d == 3 else grad.conv2d_input)(x.shape, w, dy, **args)
        return (grad.conv3d_weight if d == 3 else grad.conv2d_weight)(x, w.shape, dy, **args)

    def torch_side(self, x, w, dy, out, xv, wv, dyv, outv):
        return self.run_torch(x, w, dy)


def run_conv(torch, cp, args, l2_bytes):
    """One convolution pass: each side once (verification), then the interleaved timing."""
    p = cp.p
    z, pp, q = conv_out_extents(p)
    gm, gn, gk = conv_group_gemm(p, cp.op)
    flops = conv_flops(p)
    row = {"op": "conv", "pass": cp.op, "n": p["n"], "d": p["d"], "h": p["h"], "w": p["w"], "c": p["c"], "k": p["k"],
           "t": p["t"], "r": p["r"], "s": p["s"], "z": z, "p": pp, "q": q, "pad": str(p["pad"]),
           "stride": str(p["stride"]), "dilation": str(p["dilation"]), "groups": p["groups"], "gemm_m": gm,
           "gemm_n": gn, "gemm_k": gk, "dtype": cp.dtype, "layout": "channels_last", "epilogue": "-",
           "kernel": None, "flops": flops, "ms": None, "tflops": None, "pct_peak": None, "baseline": "cudnn",
           "baseline_call": cp.baseline_name() + " (cudnn.benchmark)", "baseline_ms": None, "baseline_tflops": None,
           "ratio": None, "verified": None, "max_abs_err": None, "max_rel_err": None, "baseline_max_rel_err": None,
           "bound": None, "iters": args.iters}
    sets = _input_sets(torch, cp, l2_bytes)
    row["input_sets"] = len(sets)
    s0 = sets[0]
    x, w, dy, out = s0[:4]
    row["kernel"] = cp.kernel(*s0)
    out.fill_(float("nan"))
    cp.tessel(*s0)
    theirs = cp.torch_side(*s0)
    torch.cuda.synchronize()
    if args.verify:
        allow = torch.backends.cudnn.allow_tf32
        torch.backends.cudnn.allow_tf32 = False
        try:
            ref = cp.run_torch(x.float(), w.float(), dy.float())
        finally:
            torch.backends.cudnn.allow_tf32 = allow
        scale = float(ref.abs().max()) if ref.numel() else 0.0
        err = float((out.float() - ref).abs().max()) if ref.numel() else 0.0
        if not bool(torch.isfinite(out).all()):
            err = math.inf
        low = float((theirs.float() - ref).abs().max()) if ref.numel() else 0.0
        row["max_abs_err"] = err
        row["max_rel_err"] = err / scale if scale > 0 else err
        row["baseline_max_rel_err"] = low / scale if scale > 0 else low
        row["bound"] = 2.0 * low + 2.0 * _UNIT_ROUNDOFF[cp.dtype] * scale
        row["verified"] = err <= row["bound"]
        del ref
    del theirs

    ms = _interleaved_ms(torch, [cp.tessel, cp.torch_side], sets, args.warmup, args.iters)
    row["ms"], row["baseline_ms"] = ms
    row["tflops"] = flops / (ms[0] * 1e-3) / 1e12
    row["baseline_tflops"] = flops / (ms[1] * 1e-3) / 1e12
    row["ratio"] = row["tflops"] / row["baseline_tflops"]
    del sets
    return row


def conv_main(argv):
    ap = argparse.ArgumentParser(prog="python -m tessel.bench conv",
                                 description="tessel.conv / conv_dgrad / conv_wgrad against F.conv2d / F.conv3d and "
                                             "their backward (cuDNN through torch, channels_last)")
    ap.add_argument("--problems", nargs="+", type=parse_conv_problem, metavar="n128-h56-w56-c64-k64-r3-s3-pad1",
                    help="problems to run with --dtype and --ops (default: bench/conv.txt's layers); also d<D> t<T> "
                         "(3-D), stride<S>, dil<D>, g<groups>")
    ap.add_argument("--dtype", choices=_CONV_DTYPES, default="bf16")
    ap.add_argument("--ops", nargs="+", choices=_CONV_OPS, default=None,
                    help="passes to run (default: all three; with the default problems, the suite's)")
    ap.add_argument("--no-verify", dest="verify", action="store_false", help="skip the float32 check")
    ap.add_argument("--no-overhead", dest="overhead", action="store_false", help="skip the per-call host time")
    _common_options(ap, "python-conv")
    args = _parse(ap, argv)
    torch, info = _torch_and_device("F.conv2d")
    torch.backends.cudnn.benchmark = True
    if args.problems:
        problems = [(p, args.dtype, tuple(args.ops or _CONV_OPS)) for p in args.problems]
    else:
        problems = [(parse_conv_problem(t), dt, tuple(o for o in ops if not args.ops or o in args.ops))
                    for t, dt, ops in _DEFAULT_CONV]
    report = _report(torch, info, args.suite or "python-conv",
                     "python -m tessel.bench conv: median of --iters launches per side after --warmup, CUDA events "
                     "per launch on torch's current stream, tessel.conv / conv_dgrad / conv_wgrad (out=) and "
                     "F.conv2d/3d / torch.nn.grad.conv*_input / conv*_weight interleaved with cudnn.benchmark on, "
                     "input sets rotated through >= 2x L2; both sides read the same channels_last tensors (tessel "
                     "their channels-last views); FLOPs 2 N Z P Q K T R S C/groups for every pass; verified "
                     "against a float32 torch reference (max err <= 2 x torch's + one ulp)")
    print(f"{'problem':<40} {'pass':<5} {'dtype':<5} {'kernel':<40} {'ms':>8} {'TFLOP/s':>8} {'torch':>8} "
          f"{'ratio':>6}  check (max |out - ref|)")
    failed = False
    for spec, dtype, ops in problems:
        text = conv_text(spec)
        for op in ops:
            try:
                row = run_conv(torch, _ConvProblem(torch, spec, dtype, op), args, info["l2_bytes"])
            except (RuntimeError, ValueError, TypeError) as e:
                failed = True
                print(f"{text:<40} {op:<5} {dtype:<5} error: {e}")
                report["results"].append({"op": "conv", "pass": op, **spec, "dtype": dtype, "error": str(e)})
                continue
            if _hopper_sxm(info) and row["tflops"]:
                row["pct_peak"] = 100.0 * row["tflops"] / _HOPPER_SXM_PEAK[dtype]
            report["results"].append(row)
            failed |= row["verified"] is False
            if row["verified"] is None:
                check = "-"
            elif row["verified"]:
                check = f"ok {row['max_abs_err']:.2g} <= {row['bound']:.2g}"
            else:
                check = f"FAILED {row['max_abs_err']:.2g} > {row['bound']:.2g}"
            print(f"{text:<40} {op:<5} {dtype:<5} {str(row['kernel']):<40} {_fmt(row['ms'], '8.3f')} "
                  f"{_fmt(row['tflops'], '8.1f')} {_fmt(row['baseline_tflops'], '8.1f')} {_fmt(row['ratio'], '6.3f')}  "
                  f"{check}")
    if args.overhead:
        o = measure_conv_overhead(torch, info["clock_mhz"])
        report["overhead"] = o
        print(f"\nper-call host time at {o['problem']} ({o['calls']} calls back to back, GPU held busy):")
        for op in _CONV_OPS:
            mine, theirs = o["us_per_call"][f"tessel {op}"], o["target_us"][op]
            print(f"  {op:<6} tessel {mine:8.2f} us, torch {theirs:8.2f} us  "
                  f"({'within' if mine <= theirs else 'OVER'} the target)")
    _write(report, args, info)
    return 1 if failed else 0


# ---- linear: a Linear layer with its bias and activation -------------------------------------------

# (tokens, in_features, out_features, activation): an MLP's up and down projections (Llama-like 4096
# -> 14336 with silu, GPT-like 4096 -> 16384 with gelu_tanh, the way back with bias alone), bf16.
_DEFAULT_LINEAR = [
    (8192, 4096, 14336, "silu"),
    (8192, 4096, 16384, "gelu_tanh"),
    (8192, 4096, 16384, "gelu"),
    (8192, 4096, 14336, "relu"),
    (8192, 16384, 4096, None),
]


class _Linear:
    """One Linear problem: x [tokens, in], weight [out, in], bias [out], bf16."""

    def __init__(self, torch, tokens, fin, fout, act):
        self.torch, self.tokens, self.fin, self.fout, self.act = torch, tokens, fin, fout, act

    def text(self):
        return f"{self.tokens}x{self.fin}->{self.fout} {self.act or 'bias'}"

    def flops(self):
        return 2.0 * self.tokens * self.fin * self.fout

    def make_set(self, seed):
        torch = self.torch
        gen = torch.Generator(device="cuda")
        gen.manual_seed(seed)
        u = lambda *shape: (torch.rand(shape, generator=gen, device="cuda") * 2 - 1).to(torch.bfloat16)
        return u(self.tokens, self.fin), u(self.fout, self.fin), u(self.fout)

    def set_bytes(self):
        return 2 * (self.tokens * self.fin + self.fout * self.fin + self.fout + self.tokens * self.fout)

    def torch_eager(self, x, w, b):
        F = self.torch.nn.functional
        y = F.linear(x, w, b)
        if self.act is None:
            return y
        return {"relu": F.relu, "silu": F.silu, "gelu": F.gelu,
                "gelu_tanh": lambda z: F.gelu(z, approximate="tanh")}[self.act](y)

    def tessel(self, x, w, b):
        return self.torch.ops.tessel.linear(x, w, b, self.act)


def linear_main(argv):
    ap = argparse.ArgumentParser(prog="python -m tessel.bench linear",
                                 description="torch.ops.tessel.linear (bias and activation in the GEMM's epilogue) "
                                             "against act(F.linear(x, w, b)) in eager torch")
    _common_options(ap, "python-linear")
    args = _parse(ap, argv)
    torch, info = _torch_and_device("F.linear")
    import tessel.torch  # noqa: F401  (torch.ops.tessel.linear)

    report = _report(torch, info, args.suite or "python-linear",
                     "python -m tessel.bench linear: torch.ops.tessel.linear(x, w, b, act) against act(F.linear(x, w, "
                     "b)) as eager torch runs it (cuBLASLt with its bias epilogue, then the activation's own kernel), "
                     "bf16, both allocating their output; median of --iters launches per side after --warmup, CUDA "
                     "events per launch, interleaved, input sets rotated through >= 2x L2; verified once per problem "
                     "against float64: max |y - R| / (|x||w|^T + |b|) within 1.2x tessel.gemm's tolerance")
    print(f"{'problem':<32} {'ms':>8} {'TFLOP/s':>8} {'torch ms':>9} {'TFLOP/s':>8} {'ratio':>6}  check")
    failed = False
    for tokens, fin, fout, act in _DEFAULT_LINEAR:
        p = _Linear(torch, tokens, fin, fout, act)
        sets = _input_sets(torch, p, info["l2_bytes"])
        x, w, b = sets[0]
        ref = p.torch_eager(x.double(), w.double(), b.double())
        scale = x.double().abs() @ w.double().abs().t() + b.double().abs()
        bound = 1.2 * tolerance("bf16", "bf16", fin)
        errs = []
        for y in (p.tessel(x, w, b), p.torch_eager(x, w, b)):
            bad = torch.isfinite(ref) & ~torch.isfinite(y.double())
            errs.append(math.inf if bool(bad.any()) else float(((y.double() - ref).abs() / scale).max()))
        del ref, scale
        ms = _interleaved_ms(torch, [p.tessel, p.torch_eager], sets, args.warmup, args.iters)
        del sets
        row = {"op": "linear", "tokens": tokens, "in_features": fin, "out_features": fout, "activation": act,
               "dtype": "bf16", "ms": ms[0], "tflops": p.flops() / (ms[0] * 1e-3) / 1e12, "baseline": "F.linear + act",
               "baseline_ms": ms[1], "baseline_tflops": p.flops() / (ms[1] * 1e-3) / 1e12, "ratio": ms[1] / ms[0],
               "max_rel_err": errs[0], "baseline_max_rel_err": errs[1], "verified": errs[0] <= bound,
               "iters": args.iters}
        failed |= not row["verified"]
        report["results"].append(row)
        print(f"{p.text():<32} {ms[0]:8.3f} {row['tflops']:8.1f} {ms[1]:9.3f} {row['baseline_tflops']:8.1f} "
              f"{row['ratio']:6.3f}  {'ok' if row['verified'] else 'FAILED'} {errs[0]:.2g} (torch {errs[1]:.2g})")
    _write(report, args, info)
    return 1 if failed else 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    def dist_main(args):  # under torchrun; its own module (tessel/bench_dist.py)
        from .bench_dist import dist_main as run

        return run(args)

    def train_main(args):  # its own module (tessel/bench_train.py)
        from .bench_train import train_main as run

        return run(args)

    suites = {"gemm": gemm_main, "linear": linear_main, "grouped": grouped_main, "attention": attention_main,
              "conv": conv_main, "dist": dist_main, "train": train_main}
    if not argv or argv[0] not in suites:
        print("usage: python -m tessel.bench gemm|linear|grouped|attention|conv|dist|train [options]   (--help after the "
              "suite lists them)",
              file=sys.stderr)
        return 2
    return suites[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
