"""``python -m tessel.bench dist``: tessel's overlapped tensor-parallel GEMMs against what PyTorch
users run today, in the same processes, under torchrun (one process per GPU):

    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \\
        torchrun --nproc_per_node 2 -m tessel.bench dist [--json bench/results/dist-h200.json]

Sides, per problem (M x N x K of the whole layer; every rank computes its 1/P share):
  all-gather + GEMM ("ag"): rank r holds A's rows [M/P, K] and B's columns [K, N/P]
    tessel      tessel.torch.all_gather_matmul (transfers on the copy engines, overlapped)
    sequential  dist.all_gather_into_tensor, then torch.matmul (NCCL, then cuBLAS)
    torch-fused torch.ops.symm_mem.fused_all_gather_matmul, where it runs without multicast
  GEMM + reduce-scatter ("rs"): rank r holds A[:, K/P] and B[K/P, :], gets rows [M/P, N] of the sum
    tessel      tessel.torch.matmul_reduce_scatter
    sequential  torch.matmul, then dist.reduce_scatter_tensor
    torch-fused torch.ops.symm_mem.fused_matmul_reduce_scatter
  and the parts alone: the collective (comm) and tessel's GEMM of the rank's share (gemm).

Method: random inputs (never zeros), verified once against the sequential side; then warm-up and
--iters rounds, each round every side once (interleaved), each launch preceded by a barrier (an
all-reduce of one value and a synchronize, so every rank starts together) and timed with CUDA events
on the current stream; per side the median per rank, and the slower rank's median is reported.
speedup = sequential / tessel; hidden = (comm + gemm - tessel) / comm, the fraction of the
communication's time that the overlap removed (1: all of it). The inputs (>= 64 MB per operand at
the default shapes) exceed the 50 MB L2, so nothing is rotated.

"path": "overlapped" where the hidden fraction is above one half, else "little overlap" (the
transfers ran mostly before or after the GEMMs, whatever moved them). NCCL_DEBUG=INFO in the
launcher's environment shows NCCL's own account of its path. The JSON is written only when --json
or --out-dir is given, by rank 0.

--trace DIR: after a problem's timed rounds, one more call of the tessel side runs under
torch.profiler (CUDA activity, CUPTI) on every rank; each rank writes the Chrome trace
(DIR/dist-<op>-<MxNxK>-rank<r>.json) and a text timeline beside it (.txt: every GPU kernel, copy
and memset of the call, its start and length in ms from the call's first, its stream), with the
host time spent inside the call (the argument agreement's wait and the enqueueing); rank 0 prints
its own timeline.
"""
import argparse
import datetime
import json
import os
import statistics
import sys
import time

import tessel

_AG_PROBLEMS = ["8192x8192x8192", "16384x8192x8192", "8192x28672x8192"]
_RS_PROBLEMS = ["8192x8192x8192", "16384x8192x8192", "8192x8192x28672"]  # the AG ones with N and K swapped


def _parse_problem(text):
    try:
        m, n, k = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"problem '{text}' is not MxNxK")
    if min(m, n, k) < 1:
        raise argparse.ArgumentTypeError(f"problem '{text}': extents must be positive")
    return m, n, k


def _barrier(torch, dist, token):
    dist.all_reduce(token)
    torch.cuda.synchronize()


def _time(torch, dist, token, fn):
    _barrier(torch, dist, token)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def _slowest(dist, value):
    """The largest of every rank's value (None where any rank has none)."""
    values = [None] * dist.get_world_size()
    dist.all_gather_object(values, value)
    return None if any(v is None for v in values) else max(values)


def _fused_ops(torch, dist, group):
    """torch's fused symm_mem ops' namespace, or the reason they cannot run here."""
    try:
        from torch.distributed._symmetric_memory import enable_symm_mem_for_group

        enable_symm_mem_for_group(group.group_name)
        return torch.ops.symm_mem, None
    except Exception as e:  # an old torch, no symmetric memory on this machine, ...
        return None, f"{type(e).__name__}: {e}"


def _trace(torch, dist, token, fn, path):
    """One call of `fn` under torch.profiler: writes its Chrome trace to `path` and returns the
    host milliseconds spent in the call and its GPU events as rows (start ms from the first
    event, length ms, stream, name)."""
    from torch.profiler import ProfilerActivity, profile

    _barrier(torch, dist, token)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        start = time.perf_counter()
        fn()
        host_ms = (time.perf_counter() - start) * 1e3
        torch.cuda.synchronize()
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = json.load(f).get("traceEvents", [])
    gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and "ts" in e]
    first = min((float(e["ts"]) for e in gpu), default=0.0)
    rows = sorted((((float(e["ts"]) - first) / 1e3, float(e.get("dur", 0)) / 1e3, e.get("args", {}).get("stream"),
                    str(e.get("name", ""))) for e in gpu), key=lambda row: row[0])
    return host_ms, rows


def _timeline_text(title, host_ms, rows):
    lines = [f"{title}: {host_ms:.3f} ms on the host inside the call; GPU events (start, length in ms; stream):"]
    for start, length, stream, name in rows:
        lines.append(f"  {start:8.3f} {length:8.3f}  stream {stream}  {name[:90]}")
    return "\n".join(lines)


def _sides(torch, dist, group, op, problem, dtype, args, fused):
    """The callables of one problem on this rank, and the check of tessel's result."""
    P, r = dist.get_world_size(group), dist.get_rank(group)
    m, n, k = problem
    dev = torch.cuda.current_device()
    gen = torch.Generator(device="cuda").manual_seed(1234 + r)

    def rand(*shape):
        return torch.empty(shape, dtype=dtype, device=dev).uniform_(-1, 1, generator=gen)

    if op == "ag":
        if m % P or n % P:
            raise ValueError(f"M = {m} and N = {n} must divide by {P} ranks")
        a_shard, w = rand(m // P, k), rand(n // P, k)  # a Linear weight [N/P, K]; B = w.t()
        b = w.t()
        a_full, d_seq = torch.empty(m, k, dtype=dtype, device=dev), torch.empty(m, n // P, dtype=dtype, device=dev)

        def sequential():
            dist.all_gather_into_tensor(a_full, a_shard, group=group)
            torch.matmul(a_full, b, out=d_seq)

        sides = {
            "tessel": lambda: tessel.torch.all_gather_matmul(a_shard, b, group, chunk_rows=args.chunk_rows),
            "sequential": sequential,
            "comm": lambda: dist.all_gather_into_tensor(a_full, a_shard, group=group),
            "gemm": lambda: tessel.gemm(a_full, b, out=d_seq),
        }
        if fused is not None:
            sides["torch-fused"] = lambda: fused.fused_all_gather_matmul(a_shard, [b], 0, group.group_name)
        sequential()
        want = d_seq.clone()
    else:
        if m % P or k % P:
            raise ValueError(f"M = {m} and K = {k} must divide by {P} ranks")
        a, w = rand(m, k // P), rand(n, k // P)  # B = w.t(), [K/P, N]
        b = w.t()
        partial, d_seq = torch.empty(m, n, dtype=dtype, device=dev), torch.empty(m // P, n, dtype=dtype, device=dev)

        def sequential():
            torch.matmul(a, b, out=partial)
            dist.reduce_scatter_tensor(d_seq, partial, group=group)

        sides = {
            "tessel": lambda: tessel.torch.matmul_reduce_scatter(a, b, group, chunk_rows=args.chunk_rows),
            "sequential": sequential,
            "comm": lambda: dist.reduce_scatter_tensor(d_seq, partial, group=group),
            "gemm": lambda: tessel.gemm(a, b, out=partial),
        }
        if fused is not None:
            sides["torch-fused"] = lambda: fused.fused_matmul_reduce_scatter(a, b, "sum", 0, group.group_name)
        sequential()
        want = d_seq.clone()
    got = sides["tessel"]()
    torch.cuda.synchronize()
    # Relative to the largest |result|: both sides round their partial products once to the dtype.
    scale = want.abs().max().float().clamp_min(1e-30)
    err = ((got.float() - want.float()).abs().max() / scale).item()
    finite = bool(torch.isfinite(got).all().item())
    bound = 4.0 * (2.0 ** -8 if dtype == torch.bfloat16 else 2.0 ** -11)
    return sides, (finite and err <= bound), err


def dist_main(argv):
    ap = argparse.ArgumentParser(prog="python -m tessel.bench dist",
                                 description="tessel's overlapped tensor-parallel GEMMs against NCCL + cuBLAS, "
                                             "under torchrun")
    ap.add_argument("--ag", nargs="*", type=_parse_problem, default=None, metavar="MxNxK",
                    help=f"all-gather + GEMM problems (default {' '.join(_AG_PROBLEMS)})")
    ap.add_argument("--rs", nargs="*", type=_parse_problem, default=None, metavar="MxNxK",
                    help=f"GEMM + reduce-scatter problems (default {' '.join(_RS_PROBLEMS)})")
    ap.add_argument("--dtype", choices=("bf16", "fp16"), default="bf16")
    ap.add_argument("--chunk-rows", type=int, default=0, help="rows per transfer (0: the library's choice)")
    ap.add_argument("--iters", type=int, default=30, help="timed rounds (default 30)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed rounds first (default 5)")
    ap.add_argument("--no-fused", dest="fused", action="store_false", help="skip torch's fused symm_mem ops")
    ap.add_argument("--json", default=None, help="write the JSON here (rank 0)")
    ap.add_argument("--out-dir", default=None, help="write <out-dir>/dist-<gpu>.json (rank 0)")
    ap.add_argument("--trace", default=None, metavar="DIR",
                    help="one more call of the tessel side per problem under torch.profiler: a Chrome trace and "
                         "a text timeline per rank in DIR")
    args = ap.parse_args(argv)
    try:
        import torch
        import torch.distributed as dist
        import tessel.torch  # noqa: F401
    except ImportError as e:
        print(f"tessel.bench dist needs torch: {e}", file=sys.stderr)
        return 2
    if "LOCAL_RANK" not in os.environ:
        print("tessel.bench dist runs under torchrun: torchrun --nproc_per_node 2 -m tessel.bench dist",
              file=sys.stderr)
        return 2
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    group = dist.group.WORLD
    P, rank = dist.get_world_size(), dist.get_rank()
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    token = torch.zeros(1, device="cuda")
    info = tessel.device_info(local)
    fused, fused_why = _fused_ops(torch, dist, group) if args.fused else (None, "--no-fused")
    say = print if rank == 0 else (lambda *a, **k: None)
    report = {
        "gpu": info["name"], "sm_count": info["sm_count"], "clock_mhz": info["clock_mhz"], "ranks": P,
        "torch": torch.__version__, "nccl_torch": ".".join(map(str, torch.cuda.nccl.version())),
        "commit": os.environ.get("TESSEL_GIT_COMMIT", "unknown"),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "suite": "dist", "method": "slower rank's median of interleaved rounds, barrier before each launch",
        "results": [],
    }
    say(f"GPU      {P} x {info['name']}, torch {torch.__version__} (NCCL {report['nccl_torch']}), "
        f"tessel commit {report['commit']}")
    say(f"torch-fused: {'runs' if fused is not None else 'not run: ' + str(fused_why)}")
    say(f"{'op':<3} {'problem':<18} {'tessel':>8} {'seq':>8} {'fused':>8} {'comm':>8} {'gemm':>8} "
        f"{'speedup':>8} {'vs fused':>8} {'hidden':>7}  path / check")
    failed = False
    work = [("ag", p) for p in (args.ag if args.ag is not None else map(_parse_problem, _AG_PROBLEMS))]
    work += [("rs", p) for p in (args.rs if args.rs is not None else map(_parse_problem, _RS_PROBLEMS))]
    for op, problem in work:
        text = "x".join(map(str, problem))
        try:
            sides, ok, err = _sides(torch, dist, group, op, problem, dtype, args, fused)
        except Exception as e:  # every rank reaches here together: a refusal is raised on every rank
            failed = True
            say(f"{op:<3} {text:<18} error: {e}")
            report["results"].append({"op": op, "problem": text, "error": str(e)})
            continue
        fused_error = None
        if "torch-fused" in sides:  # one probe on every rank; dropped everywhere if it failed anywhere
            try:
                sides["torch-fused"]()
                torch.cuda.synchronize()
            except Exception as e:
                fused_error = f"{type(e).__name__}: {e}"
            if _slowest(dist, 1 if fused_error else 0):
                fused_error = fused_error or "failed on another rank"
                del sides["torch-fused"]
        times = {name: [] for name in sides}
        for it in range(args.warmup + args.iters):
            for name, fn in sides.items():
                ms = _time(torch, dist, token, fn)
                if it >= args.warmup:
                    times[name].append(ms)
        med = {name: _slowest(dist, statistics.median(v) if v else None) for name, v in times.items()}
        t, seq, comm, gemm = med["tessel"], med["sequential"], med["comm"], med["gemm"]
        fz = med.get("torch-fused")
        hidden = (comm + gemm - t) / comm if comm else None
        ok = _slowest(dist, 0 if ok else 1) == 0
        failed |= not ok
        path = "overlapped" if hidden is not None and hidden > 0.5 else "little overlap"
        fused_note = "" if fz is not None else f"; torch-fused not run: {fused_error or fused_why}"
        say(f"{op:<3} {text:<18} {t:8.3f} {seq:8.3f} {fz if fz is not None else float('nan'):8.3f} {comm:8.3f} "
            f"{gemm:8.3f} {seq / t:8.3f} {(fz / t) if fz else float('nan'):8.3f} {hidden:7.2f}  {path}, "
            f"{'ok' if ok else 'FAILED'} (max rel err {err:.2g}){fused_note}")
        if args.trace:  # after the timed rounds, so that the trace costs them nothing
            os.makedirs(args.trace, exist_ok=True)
            base = os.path.join(args.trace, f"dist-{op}-{text}-rank{rank}")
            host_ms, rows = _trace(torch, dist, token, sides["tessel"], base + ".json")
            timeline = _timeline_text(f"{op} {text}, rank {rank}", host_ms, rows)
            with open(base + ".txt", "w") as f:
                f.write(timeline + "\n")
            say(timeline)
        m, n, k = problem
        report["results"].append({
            "op": "ag_gemm" if op == "ag" else "gemm_rs", "m": m, "n": n, "k": k, "batch": 1, "dtype": args.dtype,
            "ranks": P, "ms": t, "baseline": "nccl+cublas", "baseline_ms": seq, "ratio": seq / t,
            "torch_fused_ms": fz, "ratio_torch_fused": (fz / t) if fz else None,
            "torch_fused_note": None if fz is not None else (fused_error or fused_why),
            "comm_ms": comm, "gemm_ms": gemm, "hidden": hidden, "path": path,
            "tflops": 2.0 * m * n * k / P / (t * 1e-3) / 1e12, "verified": ok, "max_rel_err": err,
        })
    if rank == 0 and (args.json or args.out_dir):
        name = info["name"].lower()
        gpu = "h200" if "h200" in name else "h100" if "h100" in name else name.replace(" ", "-")
        path = args.json or os.path.join(args.out_dir, f"dist-{gpu}.json")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
        print(f"\nwrote {path}")
    dist.barrier()
    dist.destroy_process_group()
    return 1 if failed else 0
