"""``python -m tessel.bench train``: a small Llama-style decoder trained several times from the same
initial weights on the same batches, and the loss curves and step times side by side. The sides:

    torch             F.scaled_dot_product_attention(..., is_causal=True, enable_gqa=True), nn.Linear
    torch-repeat      the same with K and V repeated to every query head (no enable_gqa): the same
                      mathematics, other roundings -- the yardstick for bf16 noise
    tessel-attention  tessel.torch.attention ([B, S, H, D], causal), nn.Linear
    tessel            tessel.torch.attention and tessel.torch.Linear

    python -m tessel.bench train [--steps 300] [--layers 8] [--out-dir bench/results]

The model (defaults): 8 decoder layers of width 2048; attention with 16 query heads and 4 KV heads
of 128 (grouped-query), rotary position embeddings, causal; a SwiGLU MLP 5632 wide; RMSNorm before
each block and before the output; bytes as tokens (a vocabulary of 256); sequences of 4096, batch 2;
weights, gradients and AdamW's state in bfloat16 (lr 3e-4 after 20 warm-up steps, cosine decay to a
tenth, betas 0.9 / 0.95, weight decay 0.1, gradient norm clipped at 1). Every side starts from one
set of initial weights (normal, std 0.02; the output projections of each block scaled by
1 / sqrt(2 x layers)).

The corpus: the source files of the Python standard library the interpreter runs from (every .py
under sysconfig's stdlib path, sorted; Debian's python3 package ships them), concatenated as bytes.
The last 5% is held out. Training batches are windows at offsets drawn once from a seeded generator,
the same on every side; the held-out loss is the mean over 16 fixed windows, every --eval-every
steps and after the last.

Step time: wall clock of a whole step (forward, backward, clipping, the optimizer) up to the
loss's .item(), median over the steps after the first 10. SDPA runs on torch's own choice of
backend (recorded per side, from torch._fused_sdp_choice); every side computes the MLP's gate as
F.silu of a Linear (tessel's Linear could fuse the SiLU, but its backward then recomputes the GEMM).

Agreement: bf16 training is not bitwise repeatable across kernels, so the curves are compared by
their 20-step moving averages after the first 50 steps (the largest and the mean absolute
difference) and by the held-out losses, each against torch's; torch-repeat against torch measures
how far two runs of the same mathematics drift apart.
"""
import argparse
import glob
import math
import os
import statistics
import sysconfig
import time

from . import bench as _bench

_SIDES = ("torch", "torch-repeat", "tessel-attention", "tessel")


def _corpus(torch):
    """The standard library's .py sources as one uint8 tensor (bytes), and the files' count."""
    root = sysconfig.get_paths()["stdlib"]
    files = sorted(glob.glob(os.path.join(root, "**", "*.py"), recursive=True))
    chunks = []
    for path in files:
        try:
            with open(path, "rb") as f:
                chunks.append(f.read())
        except OSError:
            continue
    data = b"\n".join(chunks)
    if len(data) < (1 << 20):
        raise SystemExit(f"train: the standard library at {root} holds only {len(data)} bytes of .py sources "
                         "(at least 1 MiB is needed)")
    return torch.frombuffer(bytearray(data), dtype=torch.uint8), len(chunks), root


def _model_classes(torch):
    import torch.nn.functional as F

    import tessel.torch as tt

    class RMSNorm(torch.nn.Module):
        def __init__(self, width):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.ones(width))

        def forward(self, x):
            xf = x.float()
            return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * self.weight

    def rotate(x, cos, sin):
        """Rotary embedding of x [B, S, H, D]: pairs (i, i + D/2) rotated by position x frequency."""
        xf = x.float()
        half = xf.shape[-1] // 2
        x1, x2 = xf[..., :half], xf[..., half:]
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).to(x.dtype)

    class Block(torch.nn.Module):
        def __init__(self, cfg, side):
            super().__init__()
            self.cfg, self.side = cfg, side
            linear = tt.Linear if side == "tessel" else torch.nn.Linear
            width, hd = cfg["width"], cfg["head_dim"]
            self.norm1, self.norm2 = RMSNorm(width), RMSNorm(width)
            self.wq = linear(width, cfg["heads"] * hd, bias=False)
            self.wk = linear(width, cfg["kv_heads"] * hd, bias=False)
            self.wv = linear(width, cfg["kv_heads"] * hd, bias=False)
            self.wo = linear(cfg["heads"] * hd, width, bias=False)
            self.w1 = linear(width, cfg["mlp"], bias=False)
            self.w3 = linear(width, cfg["mlp"], bias=False)
            self.w2 = linear(cfg["mlp"], width, bias=False)

        def attention(self, q, k, v):
            if self.side.startswith("tessel"):
                return tt.attention(q, k, v, causal=True)  # [B, S, H, D]; S_q = S_k: either alignment
            if self.side == "torch-repeat":
                group = q.shape[2] // k.shape[2]
                k, v = k.repeat_interleave(group, dim=2), v.repeat_interleave(group, dim=2)
            o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                               is_causal=True, enable_gqa=self.side == "torch")
            return o.transpose(1, 2)

        def forward(self, x, cos, sin):
            b, s, _ = x.shape
            hd = self.cfg["head_dim"]
            h = self.norm1(x)
            q = rotate(self.wq(h).view(b, s, self.cfg["heads"], hd), cos, sin)
            k = rotate(self.wk(h).view(b, s, self.cfg["kv_heads"], hd), cos, sin)
            v = self.wv(h).view(b, s, self.cfg["kv_heads"], hd)
            x = x + self.wo(self.attention(q, k, v).reshape(b, s, -1))
            h = self.norm2(x)
            return x + self.w2(F.silu(self.w1(h)) * self.w3(h))

    class Decoder(torch.nn.Module):
        def __init__(self, cfg, side):
            super().__init__()
            self.cfg = cfg
            self.embed = torch.nn.Embedding(256, cfg["width"])
            self.blocks = torch.nn.ModuleList(Block(cfg, side) for _ in range(cfg["layers"]))
            self.norm = RMSNorm(cfg["width"])
            self.head = torch.nn.Linear(cfg["width"], 256, bias=False)
            hd = cfg["head_dim"]
            freqs = 1.0 / (10000.0 ** (torch.arange(0, hd // 2, dtype=torch.float32) / (hd // 2)))
            angles = torch.outer(torch.arange(cfg["seq"], dtype=torch.float32), freqs)  # [S, D/2]
            self.register_buffer("cos", angles.cos()[None, :, None, :], persistent=False)
            self.register_buffer("sin", angles.sin()[None, :, None, :], persistent=False)

        def forward(self, tokens):
            x = self.embed(tokens)
            for blk in self.blocks:
                x = blk(x, self.cos, self.sin)
            return self.head(self.norm(x))

    return Decoder


def _initial_weights(torch, model, layers):
    """Normal(0, 0.02) weights (the blocks' output projections scaled by 1 / sqrt(2 layers)), unit
    norm gains: a state dict every side loads."""
    gen = torch.Generator(device="cpu").manual_seed(1234)
    state = {}
    for name, p in model.state_dict().items():
        if name.endswith("norm1.weight") or name.endswith("norm2.weight") or name == "norm.weight":
            state[name] = torch.ones(p.shape)
        else:
            std = 0.02 / math.sqrt(2 * layers) if name.endswith(("wo.weight", "w2.weight")) else 0.02
            state[name] = torch.randn(p.shape, generator=gen) * std
    return state


def _lr(step, steps, peak, warmup=20):
    if step < warmup:
        return peak * (step + 1) / warmup
    t = (step - warmup) / max(1, steps - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * t)))


def _run_side(torch, Decoder, side, cfg, init_state, train, held_out, offsets, eval_offsets, args):
    import torch.nn.functional as F

    device = torch.device("cuda", torch.cuda.current_device())
    model = Decoder(cfg, side)
    model.load_state_dict(init_state)
    model = model.to(device=device, dtype=torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    seq = cfg["seq"]
    span = torch.arange(seq + 1)

    def batch(data, starts):
        idx = starts[:, None] + span[None, :]
        w = data[idx].to(device=device, dtype=torch.long)
        return w[:, :-1], w[:, 1:]

    def evaluate():
        model.eval()
        total = 0.0
        with torch.no_grad():
            for i in range(0, len(eval_offsets), cfg["batch"]):
                x, y = batch(held_out, eval_offsets[i:i + cfg["batch"]])
                total += F.cross_entropy(model(x).float().view(-1, 256), y.reshape(-1), reduction="sum").item()
        model.train()
        return total / (len(eval_offsets) * seq)

    losses, times, evals = [], [], []
    for step in range(args.steps):
        if step % args.eval_every == 0:
            evals.append((step, evaluate()))
        x, y = batch(train, offsets[step])
        for g in opt.param_groups:
            g["lr"] = _lr(step, args.steps, args.lr)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss = F.cross_entropy(model(x).float().view(-1, 256), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        value = loss.item()
        times.append(time.perf_counter() - t0)
        losses.append(value)
        if not math.isfinite(value):
            print(f"  {side}: step {step} loss {value}: stopping this side")
            break
        if step % 50 == 0 or step == args.steps - 1:
            print(f"  {side:17s} step {step:4d}  loss {value:.4f}  {times[-1] * 1e3:7.1f} ms")
    evals.append((len(losses), evaluate()))
    peak_gib = torch.cuda.max_memory_allocated() / 2**30
    del model, opt
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    timed = times[10:] if len(times) > 20 else times
    step_s = statistics.median(timed)
    return {
        "side": side,
        "attention": "tessel.torch.attention" if side.startswith("tessel") else
        f"F.scaled_dot_product_attention, backend {_sdpa_backend(torch, cfg, side)}",
        "linear": "tessel.torch.Linear" if side == "tessel" else "torch.nn.Linear",
        "steps": len(losses), "step_ms_median": step_s * 1e3,
        "tokens_per_s": cfg["batch"] * seq / step_s, "peak_memory_gib": peak_gib,
        "loss": losses, "held_out": evals,
    }


def _sdpa_backend(torch, cfg, side):
    """The backend SDPA picks for a side's attention call (torch._fused_sdp_choice), or "unknown"."""
    try:
        from torch.nn.attention import SDPBackend

        heads = cfg["heads"] if side == "torch-repeat" else cfg["kv_heads"]
        shape = (cfg["batch"], cfg["heads"], cfg["seq"], cfg["head_dim"])
        q = torch.empty(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        kv = torch.empty((cfg["batch"], heads, cfg["seq"], cfg["head_dim"]), device="cuda", dtype=torch.bfloat16,
                         requires_grad=True)
        choice = torch._fused_sdp_choice(q, kv, kv, is_causal=True, enable_gqa=side == "torch")
        return SDPBackend(choice).name
    except Exception:  # a private function: absent or changed in another torch
        return "unknown"


def _smooth(xs, n=20):
    out, acc = [], 0.0
    for i, x in enumerate(xs):
        acc += x
        if i >= n:
            acc -= xs[i - n]
        out.append(acc / min(i + 1, n))
    return out


def train_main(argv):
    ap = argparse.ArgumentParser(prog="python -m tessel.bench train",
                                 description="a small Llama-style decoder trained with torch's SDPA and nn.Linear "
                                             "and with tessel's attention and Linear, from the same weights on the "
                                             "same batches")
    ap.add_argument("--steps", type=int, default=300, help="training steps per side (default 300)")
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--width", type=int, default=2048)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--mlp", type=int, default=5632, help="the MLP's hidden width (default 5632)")
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--eval-every", type=int, default=50)
    ap.add_argument("--sides", default=",".join(_SIDES), help=f"which runs, in order (default {','.join(_SIDES)})")
    ap.add_argument("--seed", type=int, default=0, help="places the training windows (default 0)")
    ap.add_argument("--suite", default=None, help="suite name in the JSON and its file name (default python-train)")
    ap.add_argument("--json", default=None, help="output file (default <out-dir>/<suite>-<gpu>.json)")
    ap.add_argument("--out-dir", default=os.path.join("bench", "results"))
    args = ap.parse_args(argv)
    sides = [s for s in args.sides.split(",") if s]
    for s in sides:
        if s not in _SIDES:
            ap.error(f"--sides: '{s}' is not one of {', '.join(_SIDES)}")
    if args.steps < 1 or args.eval_every < 1:
        ap.error("--steps and --eval-every must be >= 1")
    if args.width % args.heads or args.heads % args.kv_heads or (args.width // args.heads) not in (64, 128, 256):
        ap.error("--width / --heads must be a head dim of 64, 128 or 256, and --heads a multiple of --kv-heads")
    torch, info = _bench._torch_and_device("torch's SDPA and nn.Linear")
    cfg = {"layers": args.layers, "width": args.width, "heads": args.heads, "kv_heads": args.kv_heads,
           "head_dim": args.width // args.heads, "mlp": args.mlp, "seq": args.seq, "batch": args.batch}
    data, files, root = _corpus(torch)
    split = int(len(data) * 0.95)
    train, held_out = data[:split], data[split:]
    gen = torch.Generator(device="cpu").manual_seed(args.seed)
    offsets = torch.randint(0, split - args.seq - 1, (args.steps, args.batch), generator=gen)
    eval_offsets = torch.linspace(0, len(held_out) - args.seq - 2, 16).long()
    method = ("a decoder trained from one set of initial weights on the same batches per side (docstring of "
              "tessel/bench_train.py); step time the median wall clock of whole steps after the first 10")
    report = _bench._report(torch, info, args.suite or "python-train", method)
    report["model"] = cfg
    report["corpus"] = {"source": f"{files} .py files of the Python standard library ({root})", "bytes": len(data),
                        "held_out_bytes": len(held_out)}
    report["optimizer"] = {"name": "AdamW (fused), bf16 weights and state", "lr": args.lr, "warmup": 20,
                           "schedule": "cosine to 0.1 x lr", "betas": [0.9, 0.95], "weight_decay": 0.1, "clip": 1.0}
    Decoder = _model_classes(torch)
    init_state = _initial_weights(torch, Decoder(cfg, "torch"), args.layers)
    print(f"model    {args.layers} layers, width {args.width}, heads {args.heads}/{args.kv_heads}, MLP {args.mlp}, "
          f"seq {args.seq}, batch {args.batch}; corpus {len(data) >> 20} MiB ({files} files)")
    for side in sides:
        torch.manual_seed(args.seed)
        report["results"].append(_run_side(torch, Decoder, side, cfg, init_state, train, held_out, offsets,
                                           eval_offsets, args))
    base = next((r for r in report["results"] if r["side"] == "torch"), None)
    print(f"\n{'side':17s} {'step ms':>8s} {'tokens/s':>10s} {'vs torch':>8s} {'last-20 loss':>12s} {'held-out':>9s}")
    for r in report["results"]:
        last = statistics.mean(r["loss"][-20:])
        speed = base["step_ms_median"] / r["step_ms_median"] if base else float("nan")
        r["speedup_vs_torch"] = speed if base else None
        print(f"{r['side']:17s} {r['step_ms_median']:8.1f} {r['tokens_per_s']:10.0f} {speed:8.3f} {last:12.4f} "
              f"{r['held_out'][-1][1]:9.4f}")
        if base and r is not base:
            a, b = _smooth(base["loss"]), _smooth(r["loss"])
            diffs = [abs(x - y) for x, y in zip(a[50:], b[50:])]
            r["agreement_vs_torch"] = {
                "smoothed_max_abs_diff": max(diffs) if diffs else None,
                "smoothed_mean_abs_diff": statistics.mean(diffs) if diffs else None,
                "held_out_diffs": [y[1] - x[1] for x, y in zip(base["held_out"], r["held_out"])],
            }
            ag = r["agreement_vs_torch"]
            if diffs:
                print(f"  {r['side']} against torch: 20-step moving average after step 50 differs by at most "
                      f"{ag['smoothed_max_abs_diff']:.4f} (mean {ag['smoothed_mean_abs_diff']:.4f}); held-out "
                      f"{', '.join(f'{d:+.4f}' for d in ag['held_out_diffs'])}")
    _bench._write(report, args, info)
    return 0
