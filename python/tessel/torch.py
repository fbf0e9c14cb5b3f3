"""tessel for PyTorch: ``torch.ops.tessel.gemm``, ``tessel.torch.gemm`` and ``tessel.torch.Linear``.

    import torch, tessel.torch
    x = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(1024, 4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    y = tessel.torch.gemm(x, w.t())            # x @ w.T; y.sum().backward() runs tessel GEMMs too

``tessel::gemm`` is a ``torch.library.custom_op``: a fake (meta) implementation lets
``torch.compile(fullgraph=True)`` trace it, its backward is two more tessel GEMMs (so double
backward works as well), and its output comes from ``torch.empty`` on torch's current stream,
where it runs -- so CUDA-graph capture works. Inputs whose strides tessel cannot read in place
(neither of the last two strides 1, overlapping rows) are copied with ``.contiguous()`` first;
``tessel.gemm`` itself refuses them instead.
"""
from typing import Optional, Sequence

import torch
from torch import Tensor

from . import _C

__all__ = ["gemm", "Linear"]

_FP8 = tuple(getattr(torch, n) for n in ("float8_e4m3fn", "float8_e5m2") if hasattr(torch, n))


def _readable(t: Tensor, orders: str = "rc") -> bool:
    """Whether tessel reads t in place: one of its last two strides 1 (in one of `orders`, "r"
    row-major, "c" column-major), rows or columns at least their length apart, and a
    non-negative batch stride."""
    rows, cols = t.shape[-2], t.shape[-1]
    s_rows, s_cols = t.stride()[-2], t.stride()[-1]
    if rows * cols == 0:
        return True
    row = (cols == 1 or s_cols == 1) and (rows == 1 or s_rows >= max(1, cols))
    col = (rows == 1 or s_rows == 1) and (cols == 1 or s_cols >= max(1, rows))
    batch = t.dim() == 2 or t.shape[0] <= 1 or t.stride(0) >= 0
    return batch and (("r" in orders and row) or ("c" in orders and col))


def _operand(t: Tensor, orders: str = "rc") -> Tensor:
    if t.dim() not in (2, 3) or _readable(t, orders):
        return t  # (tessel refuses other ranks with its own message)
    return t.contiguous()


def _out_shape(a: Tensor, b: Tensor) -> Sequence[int]:
    """(batch,) M x N of a @ b, with tessel's rules for a and b (the messages tessel.gemm gives)."""
    for name, t in (("a", a), ("b", b)):
        if t.dim() not in (2, 3):
            raise ValueError(
                f"{name}: has {t.dim()} dimension{'' if t.dim() == 1 else 's'}; "
                "a GEMM operand is 2-D (rows x cols) or 3-D (batch x rows x cols)"
            )
    m, k = a.shape[-2], a.shape[-1]
    if b.shape[-2] != k:
        raise ValueError(
            f"b: has {b.shape[-2]} rows, but a has {k} columns (a is M x K = {m} x {k}, so b must be K x N = {k} x N)"
        )
    n = b.shape[-1]
    if a.dim() == 2 and b.dim() == 2:
        return (m, n)
    ba = a.shape[0] if a.dim() == 3 else 1
    bb = b.shape[0] if b.dim() == 3 else 1
    if a.dim() == 3 and b.dim() == 3 and ba != bb and ba != 1 and bb != 1:
        raise ValueError(f"b: batch {bb} does not broadcast against a's batch {ba} (batches must be equal, or 1)")
    return (bb if ba == 1 else ba, m, n)


def _out_dtype(a: Tensor, c: Optional[Tensor], out_dtype: Optional[torch.dtype]) -> torch.dtype:
    if out_dtype is not None:
        return out_dtype
    if c is not None:
        return c.dtype
    return torch.bfloat16 if a.dtype in _FP8 else a.dtype


@torch.library.custom_op("tessel::gemm", mutates_args=())
def _gemm(
    a: Tensor,
    b: Tensor,
    alpha: float = 1.0,
    beta: float = 0.0,
    c: Optional[Tensor] = None,
    out_dtype: Optional[torch.dtype] = None,
) -> Tensor:
    out = torch.empty(_out_shape(a, b), dtype=_out_dtype(a, c, out_dtype), device=a.device)
    cc = None if c is None else _operand(c, "r")  # C in D's (row-major) order
    # stream None: torch's current stream on a's device.
    return _C.gemm(_operand(a), _operand(b), out, cc, alpha, beta, None, None, False)


@_gemm.register_fake
def _gemm_fake(a, b, alpha=1.0, beta=0.0, c=None, out_dtype=None):
    return a.new_empty(_out_shape(a, b), dtype=_out_dtype(a, c, out_dtype))


def _sum_to(x: Tensor, shape) -> Tensor:
    """x summed over the batch that `shape` (the operand's own) broadcast."""
    if tuple(x.shape) == tuple(shape):
        return x
    if len(shape) == 2:
        return x.sum(0)
    return x.sum(0, keepdim=True)


_DEFAULTS = (1.0, 0.0, None, None)  # alpha, beta, c, out_dtype: a call may leave them out


def _setup_context(ctx, inputs, output):
    a, b, alpha, beta, c, out_dtype = (*inputs, *_DEFAULTS[len(inputs) - 2 :])
    ctx.save_for_backward(a, b)
    ctx.alpha, ctx.beta = alpha, beta
    ctx.c_shape = None if c is None else c.shape
    ctx.c_dtype = None if c is None else c.dtype


def _backward(ctx, grad):
    # out = alpha a @ b + beta c:  da = alpha grad @ b^T,  db = alpha a^T @ grad,  dc = beta grad
    # (each summed over a batch it was broadcast over). The transposes are views tessel reads in
    # place; a grad of another dtype than the inputs' (out_dtype=float32) is rounded to theirs.
    a, b = ctx.saved_tensors
    needs = (*ctx.needs_input_grad, False, False, False, False)
    need_a, need_b, need_c = needs[0], needs[1], needs[4]
    if (need_a or need_b) and a.dtype in _FP8:
        raise RuntimeError("tessel::gemm: no backward for fp8 inputs")
    g = grad if grad.dtype == a.dtype else grad.to(a.dtype)
    da = db = dc = None
    if need_a:
        da = _sum_to(torch.ops.tessel.gemm(g, b.mT, ctx.alpha), a.shape)
    if need_b:
        db = _sum_to(torch.ops.tessel.gemm(a.mT, g, ctx.alpha), b.shape)
    if need_c:
        dc = _sum_to(grad * ctx.beta, ctx.c_shape).to(ctx.c_dtype)
    return (da, db, None, None, dc, None)[: len(ctx.needs_input_grad)]


_gemm.register_autograd(_backward, setup_context=_setup_context)


def gemm(
    a: Tensor,
    b: Tensor,
    *,
    alpha: float = 1.0,
    beta: float = 0.0,
    c: Optional[Tensor] = None,
    out_dtype: Optional[torch.dtype] = None,
) -> Tensor:
    """alpha * a @ b + beta * c through ``torch.ops.tessel.gemm`` (autograd, torch.compile, CUDA
    graphs); the rules are tessel.gemm's, except that inputs it cannot read in place are copied.
    out_dtype: the result's dtype (default c's, else a's; bfloat16 for fp8 inputs)."""
    return torch.ops.tessel.gemm(a, b, alpha, beta, c, out_dtype)


class Linear(torch.nn.Linear):
    """``torch.nn.Linear`` whose product is tessel's GEMM: y = x @ weight.T + bias, with the same
    parameters, initialisation and state_dict (weight.T is read in place, no copy)."""

    def forward(self, x: Tensor) -> Tensor:
        lead = x.shape[:-1]
        y = torch.ops.tessel.gemm(x.reshape(-1, x.shape[-1]), self.weight.t())
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(*lead, self.out_features)
