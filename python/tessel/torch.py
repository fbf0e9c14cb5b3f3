"""tessel for PyTorch: ``torch.ops.tessel.gemm``, ``tessel.torch.gemm``, ``torch.ops.tessel.linear``,
``tessel.torch.linear``, ``tessel.torch.Linear``;
``torch.ops.tessel.attention`` (with autograd through ``torch.ops.tessel.attention_backward``),
``tessel.torch.attention`` and ``tessel.torch.scaled_dot_product_attention``.

    import torch, tessel.torch
    x = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(1024, 4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    y = tessel.torch.gemm(x, w.t())            # x @ w.T; y.sum().backward() runs tessel GEMMs too

``tessel::gemm`` is a torch operator (torch.library's define and impl): a fake (meta) implementation lets
``torch.compile(fullgraph=True)`` trace it, its backward is two more tessel GEMMs (so double
backward works as well), and its output comes from ``torch.empty`` on torch's current stream,
where it runs -- so CUDA-graph capture works. Inputs whose strides tessel cannot read in place
(neither of the last two strides 1, overlapping rows) are copied with ``.contiguous()`` first;
``tessel.gemm`` itself refuses them instead.

``tessel::linear`` (``tessel.torch.linear``, ``tessel.torch.Linear(..., activation=...)``) is
act(x @ weight.T + bias) in one GEMM, the bias and the activation in its epilogue, with autograd.

``tessel::grouped_mm`` is tessel.grouped_mm (torch._grouped_mm's 2-D x 3-D case, a
mixture-of-experts layer) as a custom op with a fake implementation, its output from
``torch.empty`` on the current stream; it has no autograd formula (see grouped_mm).

``tessel::attention`` is flash-attention forward as an operator returning (out, lse), with a fake
implementation (torch.compile(fullgraph=True), varlen included) and outputs from ``torch.empty``
on the current stream (CUDA graphs). Its autograd formula is ``tessel::attention_backward``, a
second operator (with its own fake) that returns (dq, dk, dv) from tessel's backward kernels, so
``loss.backward()`` works through torch.ops.tessel.attention, tessel.torch.attention and
tessel.torch.scaled_dot_product_attention, compiled or not. A gradient that reaches lse (a loss
that uses the log-sum-exp itself) is handled exactly by one more backward pass (see
_attention_backward_formula); double backward is not supported.

    q = torch.randn(4, 32, 4096, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True)  # [B, H, S, D]
    o = tessel.torch.scaled_dot_product_attention(q, q, q, is_causal=True)  # as F.scaled_dot_product_attention
    o.sum().backward()                                                      # tessel's backward kernels

``tessel::conv`` is convolution forward in F.conv2d's / F.conv3d's layout ([N, C, H, W] inputs,
[K, C/groups, R, S] weights), with tessel's fused bias, activation and residual; it returns a
channels_last tensor, reads channels_last inputs in place (others are copied to channels_last
first) and has a fake implementation (torch.compile) but no backward: ``.backward()`` through it
raises torch's error for an op without an autograd formula.

    x = torch.randn(8, 64, 56, 56, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    w = torch.randn(64, 64, 3, 3, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    y = tessel.torch.conv2d(x, w, padding=1, activation="relu")   # F.relu(F.conv2d(x, w, padding=1))
"""
from typing import List, Optional, Sequence, Tuple

import torch
from torch import Tensor

from . import _C

__all__ = ["gemm", "linear", "Linear", "grouped_mm", "attention", "scaled_dot_product_attention", "conv2d", "conv3d", "all_gather_matmul",
           "matmul_reduce_scatter"]

_FP8 = tuple(getattr(torch, n) for n in ("float8_e4m3fn", "float8_e5m2") if hasattr(torch, n))

# tessel's operators that run in training and decode loops (gemm, linear, attention and its
# backward) are defined through torch.library.Library -- define, impl, register_fake,
# register_autograd -- rather than torch.library.custom_op: the same operators to the dispatcher,
# torch.compile and opcheck, for less host time a call (on the H200's host a tessel::attention call
# cost 61 us through custom_op and costs 35 us as defined here, 22 of them the kernel function's).
# grouped_mm and conv, which have no backward, stay custom ops: custom_op makes .backward()
# through them raise.
_LIB = torch.library.Library("tessel", "DEF")


def _define(name: str, kernel, fake) -> None:
    """tessel::<name>: the kernel's signature as its schema (inferred as custom_op infers it), the
    kernel on every device, `fake` as its fake (meta) implementation."""
    _LIB.define(name + torch.library.infer_schema(kernel, mutates_args=()))
    _LIB.impl(name, kernel, "CompositeExplicitAutograd")
    torch.library.register_fake("tessel::" + name, fake, lib=_LIB)


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


def _gemm_fake(a, b, alpha=1.0, beta=0.0, c=None, out_dtype=None):
    return a.new_empty(_out_shape(a, b), dtype=_out_dtype(a, c, out_dtype))


_define("gemm", _gemm, _gemm_fake)


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


torch.library.register_autograd("tessel::gemm", _backward, setup_context=_setup_context, lib=_LIB)


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


# ---- a Linear layer with its bias and activation fused ------------------------------------------------

_ACTIVATIONS = (None, "relu", "gelu", "gelu_tanh", "silu")


def _check_activation(activation):
    if activation not in _ACTIVATIONS:
        raise ValueError(f"activation: {activation!r} is not one of None, 'relu', 'gelu', 'gelu_tanh', 'silu'")


def _linear_out(x: Tensor, weight: Tensor) -> Sequence[int]:
    if x.dim() < 1 or weight.dim() != 2:
        raise ValueError(f"x, weight: x is [..., in_features] and weight [out_features, in_features]; got "
                         f"{list(x.shape)} and {list(weight.shape)}")
    if x.shape[-1] != weight.shape[1]:
        raise ValueError(f"weight: has {weight.shape[1]} input features, but x has {x.shape[-1]} "
                         f"(x is [..., in_features], weight [out_features, in_features])")
    return (*x.shape[:-1], weight.shape[0])


def _linear(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None, activation: Optional[str] = None) -> Tensor:
    shape = _linear_out(x, weight)
    x2 = x.reshape(-1, x.shape[-1])
    out = torch.empty((x2.shape[0], weight.shape[0]), dtype=x.dtype, device=x.device)
    _C.gemm(_operand(x2), _operand(weight.t()), out, None, 1.0, 0.0, None, None, False, bias, activation, None, None)
    return out.reshape(shape)


def _linear_fake(x, weight, bias=None, activation=None):
    return x.new_empty(_linear_out(x, weight))


_define("linear", _linear, _linear_fake)


def _linear_setup_context(ctx, inputs, output):
    x, weight, bias, activation = (*inputs, *(None, None)[len(inputs) - 2 :])
    ctx.activation = activation
    # relu's derivative is read off the output; gelu's and silu's need the product before the
    # activation, which the backward recomputes (one more GEMM) rather than the forward storing it.
    ctx.save_for_backward(x, weight, bias, output if activation == "relu" else None)


def _linear_backward(ctx, grad):
    # y = act(z), z = x @ weight^T + bias:  dz = dy act'(z),  dx = dz @ weight,  dweight = dz^T @ x,
    # dbias = the sum of dz over the rows.
    x, weight, bias, y = ctx.saved_tensors
    need_x, need_w, need_b = (*ctx.needs_input_grad, False, False)[:3]
    g = grad.reshape(-1, grad.shape[-1])
    g = g if g.dtype == x.dtype else g.to(x.dtype)
    act = ctx.activation
    if act is None:
        dz = g
    elif act == "relu":
        dz = g * (y.reshape(g.shape) > 0)
    else:
        z = torch.ops.tessel.linear(x, weight, bias).reshape(g.shape)
        dz = (torch.ops.aten.silu_backward(g, z) if act == "silu" else
              torch.ops.aten.gelu_backward(g, z, approximate="tanh" if act == "gelu_tanh" else "none"))
    dx = torch.ops.tessel.gemm(dz, weight).reshape(x.shape) if need_x else None
    dw = torch.ops.tessel.gemm(dz.mT, x.reshape(-1, x.shape[-1])) if need_w else None
    db = dz.sum(0) if need_b and bias is not None else None
    return (dx, dw, db, None)[: len(ctx.needs_input_grad)]


torch.library.register_autograd("tessel::linear", _linear_backward, setup_context=_linear_setup_context, lib=_LIB)


def linear(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None, activation: Optional[str] = None) -> Tensor:
    """act(x @ weight.T + bias) through ``torch.ops.tessel.linear``: F.linear followed by
    activation None, 'relu', 'gelu' (erf), 'gelu_tanh' or 'silu', in one tessel GEMM whose
    epilogue adds the bias and applies the activation in float32 before the one rounding.
    x is [..., in_features], weight [out_features, in_features] (read transposed in place), bias
    [out_features] of x's dtype. Autograd: two tessel GEMMs and the bias's row sum; for gelu and
    silu the backward recomputes x @ weight.T + bias (a third GEMM) for the derivative, where
    relu's is read off the output. torch.compile(fullgraph=True) and CUDA graphs as tessel::gemm."""
    _check_activation(activation)
    return torch.ops.tessel.linear(x, weight, bias, activation)


class Linear(torch.nn.Linear):
    """``torch.nn.Linear`` whose product is tessel's GEMM: y = act(x @ weight.T + bias), with the
    same parameters, initialisation and state_dict (weight.T is read in place, no copy). The bias
    and the optional activation (None, 'relu', 'gelu', 'gelu_tanh', 'silu'; keyword only) are
    applied in the GEMM's epilogue (tessel.torch.linear)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None, *,
                 activation: Optional[str] = None):
        _check_activation(activation)
        super().__init__(in_features, out_features, bias, device, dtype)
        self.activation = activation

    def forward(self, x: Tensor) -> Tensor:
        return torch.ops.tessel.linear(x, self.weight, self.bias, self.activation)

    def extra_repr(self) -> str:
        act = "" if self.activation is None else f", activation={self.activation!r}"
        return super().extra_repr() + act


# ---- grouped GEMM (mixture-of-experts) ---------------------------------------------------------------


def _grouped_shape(a: Tensor, b: Tensor) -> Sequence[int]:
    """[total_m, N] of a grouped product, with tessel's rank rules for a and b (tessel.grouped_mm's messages)."""
    if a.dim() != 2:
        raise ValueError(f"a: has {a.dim()} dimension{'' if a.dim() == 1 else 's'}; it must be 2-D [total_m, K]")
    if b.dim() != 3:
        raise ValueError(f"b: has {b.dim()} dimension{'' if b.dim() == 1 else 's'}; it must be 3-D [G, K, N] "
                         "(one K x N matrix per group)")
    if b.shape[1] != a.shape[1]:
        raise ValueError(f"b: is {tuple(b.shape)}, but a has {a.shape[1]} columns (a is [total_m, K] = "
                         f"{list(a.shape)}, so b must be [G, K, N] = [G, {a.shape[1]}, N])")
    return (a.shape[0], b.shape[2])


def _grouped_b(b: Tensor) -> Tensor:
    """b as tessel reads it in place -- each group's K x N matrix row- or column-major, the groups
    apart by at least one matrix -- or a contiguous copy."""
    if b.dim() != 3 or b.numel() == 0:
        return b
    g, k, n = b.shape
    if not _readable(b):
        return b.contiguous()
    kn = n == 1 or b.stride(2) == 1
    one = k * b.stride(1) if kn and k > 1 else n * b.stride(2) if not kn and n > 1 else k * n
    return b if g <= 1 or b.stride(0) >= one else b.contiguous()


@torch.library.custom_op("tessel::grouped_mm", mutates_args=())
def _grouped_mm(a: Tensor, b: Tensor, offs: Tensor, out_dtype: Optional[torch.dtype] = None) -> Tensor:
    out = torch.empty(_grouped_shape(a, b), dtype=out_dtype or a.dtype, device=a.device)
    # stream None: torch's current stream on a's device.
    return _C.grouped_mm(_operand(a, "r"), _grouped_b(b), offs, out, None, None, 1.0, 0.0, None)


@_grouped_mm.register_fake
def _grouped_mm_fake(a, b, offs, out_dtype=None):
    return a.new_empty(_grouped_shape(a, b), dtype=out_dtype or a.dtype)


def grouped_mm(a: Tensor, b: Tensor, offs: Tensor, *, out_dtype: Optional[torch.dtype] = None) -> Tensor:
    """torch._grouped_mm(a, b, offs, out_dtype=...) for 2-D a [total_m, K] and 3-D b [G, K, N]
    through ``torch.ops.tessel.grouped_mm`` (torch.compile, CUDA graphs): group g is rows
    offs[g-1]..offs[g] of a and of the result (offs int32 cumulative row ends on the GPU). b may
    be the transposed view of [G, N, K] weights (read in place); views tessel cannot read are
    copied. Rows past offs[-1] are left uninitialised. No autograd: the weight gradient
    dB[g] = a_g^T dD_g reduces over each group's own rows, which this grouped GEMM (ragged M, one K)
    does not compute."""
    return torch.ops.tessel.grouped_mm(a, b, offs, out_dtype)


# ---- attention ---------------------------------------------------------------------------------------


def _attention_shapes(q: Tensor, k: Tensor, v: Tensor, varlen: bool):
    """(out shape, lse shape) with tessel's rank rules for q, k and v (tessel.attention's messages)."""
    rank = 3 if varlen else 4
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.dim() != rank:
            rule = ("with cu_seqlens the operands are packed 3-D [total, H, D]" if varlen else
                    "attention operands are 4-D [B, S, H, D] (or packed 3-D [total, H, D] with cu_seqlens_q and "
                    "cu_seqlens_k)")
            raise ValueError(f"{name}: has {t.dim()} dimension{'' if t.dim() == 1 else 's'}; {rule}")
    out = (*q.shape[:-1], v.shape[-1])
    lse = (q.shape[1], q.shape[0]) if varlen else (q.shape[0], q.shape[2], q.shape[1])
    return out, lse


def _attention_operand(t: Tensor) -> Tensor:
    """t itself where tessel reads it in place (last dimension contiguous, rows 16-byte aligned),
    else a contiguous copy."""
    if t.is_contiguous() or t.numel() == 0:  # (a contiguous t is its own contiguous copy)
        return t
    align = max(1, 16 // t.element_size())
    in_place = (t.shape[-1] <= 1 or t.stride(-1) == 1) and t.data_ptr() % 16 == 0 and all(
        n <= 1 or (s >= 0 and s % align == 0) for n, s in zip(t.shape[:-1], t.stride()[:-1]))
    return t if in_place else t.contiguous()


def _attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    softmax_scale: Optional[float] = None,
    causal: bool = False,
    window_left: int = -1,
    window_right: int = -1,
    softcap: float = 0.0,
    top_left: bool = False,
    cu_seqlens_q: Optional[Tensor] = None,
    cu_seqlens_k: Optional[Tensor] = None,
    max_seqlen_q: Optional[int] = None,
    max_seqlen_k: Optional[int] = None,
    deterministic: bool = False,
) -> Tuple[Tensor, Tensor]:
    # deterministic is the backward's: the forward is deterministic already.
    varlen = cu_seqlens_q is not None or cu_seqlens_k is not None
    out_shape, lse_shape = _attention_shapes(q, k, v, varlen)
    out = torch.empty(out_shape, dtype=q.dtype, device=q.device)
    lse = torch.empty(lse_shape, dtype=torch.float32, device=q.device)
    cu_q = None if cu_seqlens_q is None else cu_seqlens_q.contiguous()
    cu_k = None if cu_seqlens_k is None else cu_seqlens_k.contiguous()
    # stream None: torch's current stream on q's device.
    _C.attention(_attention_operand(q), _attention_operand(k), _attention_operand(v), out, lse, False, softmax_scale,
                 causal, (window_left, window_right), softcap, "top-left" if top_left else "bottom-right", cu_q, cu_k,
                 max_seqlen_q, max_seqlen_k, None, None)
    return out, lse


def _attention_fake(q, k, v, softmax_scale=None, causal=False, window_left=-1, window_right=-1, softcap=0.0,
                    top_left=False, cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None,
                    deterministic=False):
    out_shape, lse_shape = _attention_shapes(q, k, v, cu_seqlens_q is not None or cu_seqlens_k is not None)
    return q.new_empty(out_shape), q.new_empty(lse_shape, dtype=torch.float32)


_define("attention", _attention, _attention_fake)


def _attention_backward(
    dout: Tensor,
    q: Tensor,
    k: Tensor,
    v: Tensor,
    out: Tensor,
    lse: Tensor,
    softmax_scale: Optional[float] = None,
    causal: bool = False,
    window_left: int = -1,
    window_right: int = -1,
    softcap: float = 0.0,
    top_left: bool = False,
    cu_seqlens_q: Optional[Tensor] = None,
    cu_seqlens_k: Optional[Tensor] = None,
    max_seqlen_q: Optional[int] = None,
    max_seqlen_k: Optional[int] = None,
    deterministic: bool = False,
) -> Tuple[Tensor, Tensor, Tensor]:
    _attention_shapes(q, k, v, cu_seqlens_q is not None or cu_seqlens_k is not None)
    dq = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    dk = torch.empty(k.shape, dtype=k.dtype, device=k.device)
    dv = torch.empty(v.shape, dtype=v.dtype, device=v.device)
    cu_q = None if cu_seqlens_q is None else cu_seqlens_q.contiguous()
    cu_k = None if cu_seqlens_k is None else cu_seqlens_k.contiguous()
    lse_rows = lse if lse.numel() == 0 or lse.stride(-1) == 1 else lse.contiguous()
    # stream None: torch's current stream on q's device, where the scratch is allocated stream-ordered.
    _C.attention_backward(_attention_operand(q), _attention_operand(k), _attention_operand(v), _attention_operand(out),
                          _attention_operand(dout), lse_rows, dq, dk, dv, softmax_scale, causal,
                          (window_left, window_right), softcap, "top-left" if top_left else "bottom-right", cu_q, cu_k,
                          max_seqlen_q, max_seqlen_k, deterministic, None, None)
    return dq, dk, dv


def _attention_backward_fake(dout, q, k, v, out, lse, softmax_scale=None, causal=False, window_left=-1,
                             window_right=-1, softcap=0.0, top_left=False, cu_seqlens_q=None, cu_seqlens_k=None,
                             max_seqlen_q=None, max_seqlen_k=None, deterministic=False):
    _attention_shapes(q, k, v, cu_seqlens_q is not None or cu_seqlens_k is not None)
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


_define("attention_backward", _attention_backward, _attention_backward_fake)


def _attention_backward_backward(ctx, *grads):
    """tessel::attention_backward's autograd formula: differentiating a gradient raises."""
    raise RuntimeError("tessel::attention_backward: no double backward (the gradient of a gradient through tessel's "
                       "attention is not implemented)")


torch.library.register_autograd("tessel::attention_backward", _attention_backward_backward,
                                setup_context=lambda ctx, inputs, output: None, lib=_LIB)


# tessel::attention's arguments after q, k, v, with their defaults (a call may leave them out).
_ATTENTION_DEFAULTS = (None, False, -1, -1, 0.0, False, None, None, None, None, False)


def _attention_setup_context(ctx, inputs, output):
    q, k, v = inputs[:3]
    (softmax_scale, causal, window_left, window_right, softcap, top_left, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
     max_seqlen_k, deterministic) = (*inputs[3:], *_ATTENTION_DEFAULTS[len(inputs) - 3:])
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k)
    ctx.options = (softmax_scale, causal, window_left, window_right, softcap, top_left)
    ctx.max_seqlens = (max_seqlen_q, max_seqlen_k)
    # torch.use_deterministic_algorithms(True) asks for the bitwise-repeatable backward too.
    ctx.deterministic = bool(deterministic) or torch.are_deterministic_algorithms_enabled()
    # An output nothing differentiates (lse, usually) gets None, not zeros: no pass runs for it.
    ctx.set_materialize_grads(False)


def _attention_backward_formula(ctx, dout, dlse):
    # dq, dk, dv of out's gradient come from tessel's backward kernels. A gradient of lse (a loss
    # that uses the log-sum-exp itself) adds dS_ij = P_ij dlse_i dz_ij/dt_ij to the scores'
    # gradient, since dLSE_i/dz_ij = P_ij. The kernels form dS = P (dP - Dsum) with dP = dO V^T and
    # Dsum = rowsum(dO * O), so one more call with V = 0 (dP = 0), dO = e_0 and O = -dlse e_0 in
    # each row (Dsum = -dlse) gives exactly that term's dq and dk; its dv (P^T e_0) is no gradient
    # and is dropped. dlse enters rounded to q's dtype, as dout does.
    q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k = ctx.saved_tensors
    options = (*ctx.options, cu_seqlens_q, cu_seqlens_k, *ctx.max_seqlens, ctx.deterministic)
    dq = dk = dv = None
    if dout is not None:
        dq, dk, dv = torch.ops.tessel.attention_backward(dout.to(q.dtype), q, k, v, out, lse, *options)
    if dlse is not None:
        # lse [B, H, S_q] (packed: [H, total_q]) as one value per row of out, [B, S_q, H] ([total_q, H])
        rows = dlse.transpose(0, 1) if cu_seqlens_q is not None else dlse.transpose(1, 2)
        o_lse = out.new_zeros(out.shape)
        o_lse[..., 0] = -rows.to(out.dtype)
        do_lse = out.new_zeros(out.shape)
        do_lse[..., 0] = 1
        dq_lse, dk_lse, _ = torch.ops.tessel.attention_backward(do_lse, q, k, v.new_zeros(v.shape), o_lse, lse,
                                                                *options)
        dq = dq_lse if dq is None else dq + dq_lse
        dk = dk_lse if dk is None else dk + dk_lse
        dv = v.new_zeros(v.shape) if dv is None else dv
    needs = ctx.needs_input_grad
    return (dq if needs[0] else None, dk if needs[1] else None, dv if needs[2] else None,
            *(None,) * (len(needs) - 3))


torch.library.register_autograd("tessel::attention", _attention_backward_formula,
                                setup_context=_attention_setup_context, lib=_LIB)


_ALIGNS = {"bottom-right": False, "top-left": True}


def attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *,
    softmax_scale: Optional[float] = None,
    causal: bool = False,
    window: Tuple[int, int] = (-1, -1),
    softcap: float = 0.0,
    align: str = "bottom-right",
    cu_seqlens_q: Optional[Tensor] = None,
    cu_seqlens_k: Optional[Tensor] = None,
    max_seqlen_q: Optional[int] = None,
    max_seqlen_k: Optional[int] = None,
    return_lse: bool = False,
    deterministic: bool = False,
):
    """tessel.attention through ``torch.ops.tessel.attention`` (autograd, torch.compile, CUDA
    graphs): the arguments and rules are tessel.attention's, except that inputs it cannot read in
    place are copied. Returns out, or (out, lse) with return_lse=True; ``.backward()`` runs
    tessel.attention_backward's kernels (deterministic=True, or
    torch.use_deterministic_algorithms(True), picks their bitwise-repeatable mode)."""
    if align not in _ALIGNS:
        raise ValueError(f"align: {align!r} is neither 'bottom-right' (FlashAttention's, the default) nor 'top-left' "
                         "(torch's is_causal)")
    out, lse = torch.ops.tessel.attention(q, k, v, softmax_scale, causal, window[0], window[1], softcap,
                                          _ALIGNS[align], cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                          deterministic)
    return (out, lse) if return_lse else out


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    is_causal: bool = False,
    scale: Optional[float] = None,
    *,
    enable_gqa: bool = False,
) -> Tensor:
    """``F.scaled_dot_product_attention(query, key, value, is_causal=..., scale=..., enable_gqa=...)``
    (no attn_mask, no dropout) through tessel's kernel: torch's [B, H, S, D] layout (or [N, S, D]),
    is_causal aligned top-left as torch aligns it. The inputs are passed to tessel as transposed
    views ([B, S, H, D], no copy); the result is a [B, H, S_q, D_v] view of tessel's
    [B, S_q, H, D_v] output, as FlashAttention's backend of SDPA returns it. ``.backward()`` runs
    tessel's backward kernels (bitwise-repeatable under torch.use_deterministic_algorithms(True))."""
    if query.dim() not in (3, 4):
        raise ValueError(f"query: has {query.dim()} dimensions; tessel's SDPA takes [B, H, S, D] or [N, S, D]")
    for name, t in (("key", key), ("value", value)):
        if t.dim() != query.dim():
            raise ValueError(f"{name}: has {t.dim()} dimensions, but query has {query.dim()}")
    batched = query.dim() == 4
    q, k, v = (t if batched else t.unsqueeze(0) for t in (query, key, value))
    if k.shape[1] != q.shape[1] and not enable_gqa:
        raise ValueError(f"key: has {k.shape[1]} heads, but query has {q.shape[1]}; pass enable_gqa=True for grouped-"
                         "query attention, as F.scaled_dot_product_attention needs")
    if scale == 0.0:
        raise ValueError("scale: 0 is not supported by tessel (its softmax_scale 0 means 1 / sqrt(D)); pass None")
    out, _ = torch.ops.tessel.attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), scale, is_causal,
                                        -1, -1, 0.0, True)
    out = out.transpose(1, 2)
    return out if batched else out.squeeze(0)



# ---- convolution ---------------------------------------------------------------------------------------


def _memory_format(t: Tensor):
    return torch.channels_last_3d if t.dim() == 5 else torch.channels_last


def _channels_last(t: Tensor) -> Tensor:
    """[N, C, *spatial] -> the [N, *spatial, C] view tessel reads: in place when the channels are
    contiguous and no element repeats, else from a channels_last copy."""
    in_place = (t.shape[1] <= 1 or t.stride(1) == 1) and all(n <= 1 or s > 0 for n, s in zip(t.shape, t.stride()))
    if not in_place:
        t = t.contiguous(memory_format=_memory_format(t))
    return t.movedim(1, -1)


def _filters_last(w: Tensor) -> Tensor:
    """[K, C/groups, *taps] -> the [K, *taps, C/groups] view tessel reads: in place when each
    filter's taps are packed channels last, else from a channels_last copy."""
    v = w.movedim(1, -1)
    packed, dense = 1, True
    for n, s in zip(reversed(v.shape[1:]), reversed(v.stride()[1:])):
        dense = dense and (n <= 1 or s == packed)
        packed *= n
    return v if dense else w.contiguous(memory_format=_memory_format(w)).movedim(1, -1)


def _conv_out_shape(x: Tensor, w: Tensor, stride: Sequence[int], padding: Sequence[int],
                    dilation: Sequence[int]) -> List[int]:
    """[N, K, *out] of F.conv2d / F.conv3d for these arguments (tessel's messages for what has none)."""
    if x.dim() not in (4, 5):
        raise ValueError(f"x: has {x.dim()} dimensions; tessel::conv takes F.conv2d's [N, C, H, W] or F.conv3d's "
                         "[N, C, D, H, W]")
    if w.dim() != x.dim():
        raise ValueError(f"w: has {w.dim()} dimensions, but x has {x.dim()}; the weight is [K, C/groups, "
                         f"{'T, ' if x.dim() == 5 else ''}R, S]")
    dims = x.dim() - 2
    for name, v in (("stride", stride), ("padding", padding), ("dilation", dilation)):
        if len(v) != dims:
            raise ValueError(f"{name}: has {len(v)} values, but the convolution is {dims}-D")
    out = [x.shape[0], w.shape[0]]
    for i in range(dims):
        span = dilation[i] * (w.shape[2 + i] - 1) + 1
        padded = x.shape[2 + i] + 2 * padding[i]
        if stride[i] < 1 or span > padded:
            out.append(1)  # no output extent: tessel refuses the arguments with its own reason
        else:
            out.append((padded - span) // stride[i] + 1)
    return out


@torch.library.custom_op("tessel::conv", mutates_args=())
def _conv(
    x: Tensor,
    w: Tensor,
    bias: Optional[Tensor],
    stride: List[int],
    padding: List[int],
    dilation: List[int],
    groups: int = 1,
    activation: str = "none",
    alpha: float = 1.0,
    beta: float = 0.0,
    residual: Optional[Tensor] = None,
) -> Tensor:
    shape = _conv_out_shape(x, w, stride, padding, dilation)
    out = torch.empty(shape, dtype=x.dtype, device=x.device, memory_format=_memory_format(x))
    b = None if bias is None else bias.to(torch.float32).contiguous()
    r = None
    if residual is not None:  # read with out's strides: channels_last
        r = residual.contiguous(memory_format=_memory_format(residual)) if residual.dim() == out.dim() else residual
        r = r.movedim(1, -1)
    # stream None: torch's current stream on x's device.
    _C.conv("fprop", _channels_last(x), _filters_last(w), out.movedim(1, -1), None, b, r, stride, padding, dilation,
            groups, activation, alpha, beta, None, None)
    return out


@_conv.register_fake
def _conv_fake(x, w, bias, stride, padding, dilation, groups=1, activation="none", alpha=1.0, beta=0.0, residual=None):
    shape = _conv_out_shape(x, w, stride, padding, dilation)
    return torch.empty(shape, dtype=x.dtype, device=x.device, memory_format=_memory_format(x))


def _spatial(v, dims: int, name: str) -> List[int]:
    if isinstance(v, int):
        return [v] * dims
    if isinstance(v, str):
        raise ValueError(f"{name}: {v!r} is not supported by tessel; give an int or {dims} ints")
    v = list(v)
    if len(v) == 1:
        return v * dims
    return v


def _conv_nd(dims, input, weight, bias, stride, padding, dilation, groups, activation, alpha, beta, residual):
    if input.dim() != dims + 2:
        raise ValueError(f"input: has {input.dim()} dimensions; conv{dims}d takes [N, C, {'D, ' if dims == 3 else ''}H, W]")
    return torch.ops.tessel.conv(input, weight, bias, _spatial(stride, dims, "stride"), _spatial(padding, dims, "padding"),
                                 _spatial(dilation, dims, "dilation"), groups, activation or "none", alpha, beta,
                                 residual)


def conv2d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride=1, padding=0, dilation=1,
           groups: int = 1, *, activation: Optional[str] = None, alpha: float = 1.0, beta: float = 0.0,
           residual: Optional[Tensor] = None) -> Tensor:
    """``F.conv2d(input, weight, bias, stride, padding, dilation, groups)`` through
    ``torch.ops.tessel.conv`` (torch.compile, CUDA graphs; no backward), then
    act(alpha * conv + beta * residual + bias) fused: activation None, "relu", "gelu" (tanh form)
    or "silu". input [N, C, H, W], weight [K, C/groups, R, S], float16 or bfloat16, best in
    channels_last memory format (read in place; others are copied); bias of any float dtype (used as
    float32); integer padding only. Returns [N, K, P, Q] in channels_last memory format."""
    return _conv_nd(2, input, weight, bias, stride, padding, dilation, groups, activation, alpha, beta, residual)


def conv3d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride=1, padding=0, dilation=1,
           groups: int = 1, *, activation: Optional[str] = None, alpha: float = 1.0, beta: float = 0.0,
           residual: Optional[Tensor] = None) -> Tensor:
    """``F.conv3d`` as tessel.torch.conv2d is F.conv2d: input [N, C, D, H, W], weight
    [K, C/groups, T, R, S], best in channels_last_3d memory format; returns channels_last_3d."""
    return _conv_nd(3, input, weight, bias, stride, padding, dilation, groups, activation, alpha, beta, residual)


# ---- tensor-parallel GEMMs over NCCL (tessel.dist; docs/dist.md) -----------------------------------

_DIST_CONTEXTS = {}  # (process group, device index) -> tessel.dist.Context


def _dist_context(group, device: torch.device):
    """tessel's own NCCL communicator for `group` on `device`, made once: the group's rank 0 makes
    an NCCL unique id and broadcasts it over the group (the group's own communicator is not
    reachable portably from Python), then every rank joins. Collective on first use."""
    import torch.distributed as tdist

    from . import dist

    group = group if group is not None else tdist.group.WORLD
    key = (group, device.index)
    ctx = _DIST_CONTEXTS.get(key)
    if ctx is None:
        if not dist.available():
            raise RuntimeError("tessel.torch: this build of tessel has no tessel::dist (NCCL >= 2.28 was not found "
                               "when it was built)")
        rank, nranks = tdist.get_rank(group), tdist.get_world_size(group)
        box = [dist.Context.unique_id() if rank == 0 else None]
        tdist.broadcast_object_list(box, src=tdist.get_global_rank(group, 0), group=group, device=device)
        ctx = dist.Context(box[0], nranks, rank, device.index)
        _DIST_CONTEXTS[key] = ctx
    return ctx


def _dist_device(t: Tensor) -> torch.device:
    """The GPU a collective call runs on: t's, or the current one when t is not a CUDA tensor (the
    call then refuses t on this rank -- and, through the argument agreement, on every rank)."""
    return t.device if t.is_cuda else torch.device("cuda", torch.cuda.current_device())


def all_gather_matmul(a_shard: Tensor, b: Tensor, group=None, *, return_a: bool = False, chunk_rows: int = 0):
    """``all_gather_into_tensor(a_shard) @ b`` over the ranks of `group` (a torch.distributed
    process group; None: the default group), the all-gather overlapped with tessel's GEMM --
    torch.ops.symm_mem.fused_all_gather_matmul's computation with gather_dim 0.

    a_shard: this rank's [M/P, K] rows of A (row-major; equal shards on every rank), b: [K, N]
    (this rank's column shard of a weight; ``w.t()`` reads in place). Returns d = A @ b, [M, N],
    bit for bit what the all-gather followed by tessel's GEMM of the whole problem gives; with
    return_a=True returns (A, d), as the fused op returns the gathered A for a backward pass.
    float16 or bfloat16. Collective: every rank of the group calls it, in the same order; a rank
    whose shapes differ makes every rank raise. The first call on a group makes tessel's NCCL
    communicator for it (collective). No autograd."""
    device = _dist_device(a_shard)
    ctx = _dist_context(group, device)
    from . import dist

    with dist._refusing("all_gather", ctx):  # an error here reaches the other ranks too
        a = a_shard if a_shard.dim() != 2 or a_shard.stride(-1) == 1 else a_shard.contiguous()
        rows = a.shape[0] * ctx.nranks
        d = torch.empty((rows, b.shape[-1]), dtype=a.dtype, device=device)
        gathered = torch.empty((rows, a.shape[-1]), dtype=a.dtype, device=device) if return_a else None
    dist.all_gather_gemm(ctx, a, b, out=d, a_gathered=gathered, chunk_rows=chunk_rows)
    return (gathered, d) if return_a else d


def matmul_reduce_scatter(a: Tensor, b: Tensor, group=None, *, reduce_op: str = "sum", chunk_rows: int = 0):
    """``reduce_scatter_tensor(a @ b)`` over the ranks of `group` along dim 0, the transfers
    overlapped with tessel's GEMM -- torch.ops.symm_mem.fused_matmul_reduce_scatter's computation
    with scatter_dim 0.

    a: [M, K_r] (this rank's K shard of the activations), b: [K_r, N] (the matching rows of a
    weight; ``w.t()`` reads in place). Returns this rank's row block of the sum (reduce_op "sum")
    or mean ("avg") over ranks, [ceil(M / P), N] (the last ranks' blocks shorter when P does not
    divide M, where torch's op requires it to). The partial products travel in a's dtype and are
    added in float32. Collective, like all_gather_matmul. No autograd."""
    if reduce_op not in ("sum", "avg"):
        raise ValueError(f"reduce_op: {reduce_op!r} is not 'sum' or 'avg'")
    device = _dist_device(a)
    ctx = _dist_context(group, device)
    from . import dist

    with dist._refusing("reduce_scatter", ctx):
        rows = dist.block_rows(a.shape[0], ctx.nranks, ctx.rank)
        d = torch.empty((rows, b.shape[-1]), dtype=a.dtype, device=device)
    alpha = 1.0 / ctx.nranks if reduce_op == "avg" else 1.0
    dist.gemm_reduce_scatter(ctx, a, b, out=d, alpha=alpha, chunk_rows=chunk_rows)
    return d
