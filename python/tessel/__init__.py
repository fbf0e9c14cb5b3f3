"""tessel: CuTe-family CUDA kernels for Python arrays.

    import torch, tessel
    a = torch.randn(4096, 1024, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(2048, 1024, device="cuda", dtype=torch.bfloat16)
    y = tessel.gemm(a, w.t())                  # a @ w.T: the transposed view is read in place

    q = torch.randn(4, 1024, 32, 128, device="cuda", dtype=torch.bfloat16)   # [B, S, H, D]
    k, v = torch.randn_like(q), torch.randn_like(q)
    o, lse = tessel.attention(q, k, v, causal=True, return_lse=True)  # flash-attention forward, [B, S, H, D]
    dq, dk, dv = tessel.attention_backward(q, k, v, o, torch.randn_like(o), lse, causal=True)

    x = torch.randn(8, 64, 56, 56, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    w = torch.randn(128, 64, 3, 3, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    y = tessel.conv(x.permute(0, 2, 3, 1), w.permute(0, 2, 3, 1), padding=1)   # NHWC [8, 56, 56, 128]

`tessel.gemm`, `tessel.grouped_mm`, `tessel.attention`, `tessel.attention_backward` and the convolutions (`tessel.conv`,
`conv_dgrad`, `conv_wgrad`) take any CUDA array: torch tensors, and any object with
``__dlpack__`` (CuPy, JAX, ...) or ``__cuda_array_interface__``. `tessel.torch` (imported with
tessel when torch already is, else by ``import tessel.torch``) registers ``torch.ops.tessel.gemm``
(autograd, torch.compile, CUDA graphs), ``torch.ops.tessel.linear`` (bias and activation fused, autograd),
``torch.ops.tessel.grouped_mm``, a drop-in ``tessel.torch.Linear``,
``torch.ops.tessel.attention`` (autograd through ``torch.ops.tessel.attention_backward``),
``tessel.torch.scaled_dot_product_attention``,
``torch.ops.tessel.conv`` (fprop, F.conv2d's layout) and ``tessel.torch.conv2d`` / ``conv3d``.
``python -m tessel.bench gemm|grouped|attention|conv`` times tessel against torch.matmul, torch._grouped_mm,
SDPA and F.conv2d.
``tessel.dist`` (where tessel was built with NCCL) runs tensor-parallel GEMMs with their
communication overlapped; ``tessel.torch.all_gather_matmul`` / ``matmul_reduce_scatter`` take a
``torch.distributed`` group.

Errors: TypeError when an argument is not an array or its dtype is not supported, ValueError when
its device, shape or strides break a rule, RuntimeError when CUDA fails (CUDA's text included);
every message starts with the argument's name.
"""
import sys as _sys

from . import _C

__version__ = "0.1.0"
__all__ = ["gemm", "gemm_kernel", "gemm_kernels", "grouped_mm", "attention", "attention_kernels", "attention_backward",
           "attention_backward_kernels", "conv", "conv_dgrad", "conv_wgrad", "conv_kernel", "conv_kernels",
           "device_count", "device_info"]


def gemm(a, b, *, out=None, alpha=1.0, beta=0.0, c=None, stream=None, kernel=None, tf32=False, bias=None,
         activation=None, scale_a=None, scale_b=None):
    """out = act(alpha * a @ b + beta * c + bias), on the GPU, asynchronously on `stream`; returns out.

    a is (batch,) M x K, b (batch,) K x N, c and out (batch,) M x N. Each matrix must be row- or
    column-major: one of its last two strides is 1 (a transposed view such as ``w.t()`` needs no
    copy); a non-contiguous view that is neither raises ValueError. A 2-D operand, or a 3-D one
    with batch 1, is broadcast over the batch, as in numpy's matmul.

    dtypes: a and b both float32, float16 or bfloat16, or both fp8 (float8_e4m3fn, float8_e5m2;
    not both e5m2; fold per-tensor scales into alpha). float16 and bfloat16 write their own dtype
    or float32, float32 writes float32, fp8 writes bfloat16, float16 or float32. ``tf32=True``
    lets float32 products use tf32 tensor cores. c (optional; beta must be 0 without it) has out's
    dtype and order.

    out: written in place when given. When None it is allocated through the inputs' array library
    (torch: torch.empty on a's device; CuPy: cupy.empty, float32/float16 only) with c's dtype, or
    else the inputs' (bfloat16 for fp8); other array types need out.

    stream: a CUDA stream handle (int, 0 = the legacy default stream) or a stream object
    (torch.cuda.Stream, cupy.cuda.Stream, anything with ``__cuda_stream__``). Default: a's
    library's current stream -- torch's current stream for a torch tensor, CuPy's for a CuPy
    array, the "stream" of a ``__cuda_array_interface__`` that names one, else the legacy default
    stream. DLPack producers are asked to order their work before that stream; for a torch tensor
    on another stream than torch's current one, ordering is the caller's (as for any torch op
    under ``torch.cuda.stream``). Nothing synchronises with the host.

    kernel: a kernel name from gemm_kernels() to force one; None picks by heuristic.
    All operands must be on one CUDA device; it is made current for the call.

    Fused epilogue (optional): bias has out's dtype and broadcasts against out as a vector, as in
    numpy: shape (N,) or (1, N) adds bias[j] to column j (a Linear layer's bias), (M, 1) adds
    bias[i] to row i; contiguous; one vector for every batch. activation is None, 'relu', 'gelu'
    (the exact, erf form: torch's default), 'gelu_tanh' (torch's approximate="tanh") or 'silu',
    applied last, in float32, before the one rounding to out's dtype.

    fp8 scales (fp8 a and b only): scale_a / scale_b as Python floats are per-tensor factors,
    out = alpha * (scale_a a) @ (scale_b b) + ...; as float32 arrays they are block scales
    (DeepSeek-V3's; the layouts of cuBLASLt's VEC128_32F / BLK128x128_32F modes, so the tensors
    torch._scaled_mm takes for 1x128 and 128x128 blocks fit):
      scale_a [M, ceil(K/128)], M-major (``s.t().contiguous().t()``; its first stride 1, the
        second any stride >= M): one factor per row of a and 128-deep block of K;
      scale_b [ceil(N/128), ceil(K/128)], K-major (row-major: its last stride 1, the first any
        stride >= ceil(K/128)): one factor per 128 x 128 block of b (128 columns of out, 128 of K).
    out(i, j) = alpha sum_kb scale_a[i, kb] scale_b[j // 128, kb] sum_{k in block kb} a[i, k] b[k, j] + beta c.
    Both or neither are arrays; with a batch they are [batch, ...] with each batch's scales packed
    after the previous batch's. Block scaling has one kernel, for sm_90 GPUs (elsewhere the call
    raises).
    """
    return _C.gemm(a, b, out, c, alpha, beta, stream, kernel, tf32, bias, activation, scale_a, scale_b)


def gemm_kernel(a, b, *, out=None, alpha=1.0, beta=0.0, c=None, stream=None, kernel=None, tf32=False, bias=None,
                activation=None, scale_a=None, scale_b=None):
    """The name of the kernel gemm() would run for these arguments (None when there is nothing to
    compute); checks them as gemm() does and launches nothing."""
    return _C.gemm_kernel(a, b, out, c, alpha, beta, stream, kernel, tf32, bias, activation, scale_a, scale_b)


def grouped_mm(a, b, offs, *, out=None, out_dtype=None, c=None, alpha=1.0, beta=0.0, stream=None):
    """Grouped GEMM (a mixture-of-experts layer; torch._grouped_mm's 2-D x 3-D case), all groups
    in one launch, asynchronously on `stream`; returns out.

        out[s_g:e_g] = alpha * a[s_g:e_g] @ b[g] + beta * c[s_g:e_g]    for g in range(G)

    with e_g = offs[g], s_0 = 0, s_g = offs[g - 1]: a is [total_m, K] (tokens sorted by group,
    row-major), b is [G, K, N], out and c are [total_m, N] (row-major), offs an int32 array of G
    cumulative row ends on the GPU. Each b[g] may be stored either way: a [G, K, N] array (N
    contiguous) or the transposed view ``w.transpose(-2, -1)`` of [G, N, K] Linear weights (K
    contiguous), read in place. Groups may be empty; G is at most 1024.

    dtypes: a and b both bfloat16 or both float16; out (out_dtype, default c's, else the inputs')
    the inputs' dtype or float32; float32 accumulation. offs is never read on the host (no
    synchronisation; CUDA-graph capturable), so its values are not checked: each end is clamped
    into [0, total_m], a group whose end is below its start is empty, and rows of out past
    offs[-1] are left as they were (uninitialised when out is allocated).

    The kernel runs on sm_90 GPUs only and reads a and b by TMA: 16-byte aligned data and row
    (and group) strides that are multiples of 8 elements (pad K, or N for a [G, K, N] b); other
    calls raise ValueError naming the stride and the fix. out: written in place when given, else
    allocated through a's array library. stream and the rules for devices are tessel.gemm's.

    Errors: TypeError for a dtype ("b: dtype fp16 differs from a's bf16 ..."), ValueError for a
    shape, a stride, a device or an argument's rule ("offs: has 7 values, but b has 8 groups ...",
    "b: neither of its last two strides is 1 ..."), RuntimeError for a CUDA failure.
    """
    return _C.grouped_mm(a, b, offs, out, out_dtype, c, alpha, beta, stream)


def attention(q, k, v, *, out=None, lse=None, return_lse=False, softmax_scale=None, causal=False, window=(-1, -1),
              softcap=0.0, align="bottom-right", cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None,
              max_seqlen_k=None, stream=None, kernel=None):
    """Flash-attention forward on the GPU, asynchronously on `stream`: returns out, or (out, lse)
    with return_lse=True.

        out[b, i, h, :] = softmax_j(s_ij) @ v[b, :, g, :],   s_ij = scale * q[b, i, h, :] . k[b, j, g, :]

    with g = h // (H // H_kv) (GQA and MQA when k and v have fewer heads), scores capped to
    ``softcap * tanh(s / softcap)`` when softcap > 0, and keys outside the mask removed; a row
    with no key left is 0 (its LSE -inf). lse[b, h, i] = log sum_j exp(s_ij), float32.

    Shapes (FlashAttention's): q [B, S_q, H, D], k [B, S_k, H_kv, D], v [B, S_k, H_kv, D_v], out
    [B, S_q, H, D_v], lse [B, H, S_q]. H must be a multiple of H_kv; (D, D_v) is (64, 64),
    (96, 96), (128, 128), (192, 192), (256, 256) or (192, 128). q, k, v and out share one dtype,
    float16 or bfloat16; softmax and accumulation are float32.

    Layout: the last dimension must be contiguous (stride 1); the other strides are free as long
    as every row starts 16-byte aligned (strides multiples of 8 elements), so ``x.transpose(1, 2)``
    of a [B, H, S, D] array is read in place, without a copy.

    Variable length: with cu_seqlens_q and cu_seqlens_k (int32 arrays of B + 1 offsets, non-
    decreasing from 0, on the GPU), q, k, v and out are packed [total, H, D] (sequence b is rows
    cu[b] to cu[b + 1]) and lse is [H, total_q]. max_seqlen_q / max_seqlen_k bound the sequence
    lengths (every one must be at most them: the kernel does not read cu_seqlens on the host);
    None uses the packed totals, always a valid bound but one that launches blocks for rows no
    sequence has: pass the true maxima where you know them.

    The mask: query i sits at key position p(i) = i + S_k - S_q with align="bottom-right"
    (FlashAttention's: the last query sees the last key), p(i) = i with align="top-left"
    (torch's is_causal). window=(left, right) keeps keys p(i) - left <= j <= p(i) + right, -1
    meaning unbounded on that side; causal=True is right = 0.

    softmax_scale: None for 1 / sqrt(D). out / lse: written in place when given; when None they are
    allocated through q's array library (torch, or CuPy for float16). stream, and the rules for
    devices, are tessel.gemm's. kernel: a name from attention_kernels() to force one.
    The gradients are tessel.attention_backward's (it needs lse: pass return_lse=True or lse=).

    Errors: TypeError for a dtype or an argument of the wrong type, ValueError for a shape, a
    stride, a device or an argument's rule (the message starts with the argument's name and
    states the rule), RuntimeError for a CUDA failure, with CUDA's text.
    """
    return _C.attention(q, k, v, out, lse, return_lse, softmax_scale, causal, window, softcap, align, cu_seqlens_q,
                        cu_seqlens_k, max_seqlen_q, max_seqlen_k, stream, kernel)


def attention_backward(q, k, v, out, dout, lse, *, dq=None, dk=None, dv=None, softmax_scale=None, causal=False,
                       window=(-1, -1), softcap=0.0, align="bottom-right", cu_seqlens_q=None, cu_seqlens_k=None,
                       max_seqlen_q=None, max_seqlen_k=None, deterministic=False, stream=None, kernel=None):
    """The gradients of tessel.attention on the GPU, asynchronously on `stream`: returns
    (dq, dk, dv) given dout = dL/dout.

    q, k, v are the forward's inputs, out and lse its outputs (lse float32, as tessel.attention
    returns it with return_lse=True), and softmax_scale, causal, window, softcap, align and the
    variable-length arguments must be the forward's: the call recomputes the scores from q and k,
    and the softmax from lse. dout has out's shape, dq q's, dk k's and dv v's, all of q's dtype;
    every one of them may have its own strides under tessel.attention's rules (last dimension
    contiguous, rows 16-byte aligned). With GQA/MQA (fewer heads in k and v) dk and dv are summed
    over the query heads that share each key/value head. Keys that no query sees get dk = dv = 0;
    rows that see no key get dq = 0.

    dq / dk / dv: written in place when given; when None they are allocated (packed, the shape of
    q / k / v) through q's array library. deterministic=True gives the same bits on every run (the
    default adds dq's partial sums in float32, in an order that varies; the deterministic mode
    adds them in a fixed order on an H100/H200 at head dims 64 and 128 with fixed lengths, and
    elsewhere recomputes instead, about 1.4x the work of that part). The call takes scratch memory
    for per-row statistics (and the float32 dq accumulator, beside turn counters for the ordered
    additions), allocated and freed in stream order. stream, kernel (a name from
    attention_backward_kernels()) and the rules for devices are tessel.attention's.

    Errors: tessel.attention's (TypeError, ValueError naming the argument, RuntimeError for
    CUDA), and for the gradients "dout: ...", "dq: shape (...) is not q's (...)", ...
    """
    return _C.attention_backward(q, k, v, out, dout, lse, dq, dk, dv, softmax_scale, causal, window, softcap, align,
                                 cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, deterministic, stream, kernel)


def conv(x, w, *, bias=None, stride=1, padding=0, dilation=1, groups=1, activation=None, alpha=1.0, beta=0.0,
         residual=None, out=None, stream=None, kernel=None):
    """Convolution forward (fprop) on the GPU, asynchronously on `stream`; returns out.

        out = act(alpha * conv(x, w) + beta * residual + bias)

    conv is cross-correlation, as F.conv2d / F.conv3d compute it, 2-D or 3-D by the rank of x:
    x [N, H, W, C] and w [K, R, S, C/groups] give out [N, P, Q, K]; x [N, D, H, W, C] and
    w [K, T, R, S, C/groups] give out [N, Z, P, Q, K], with P = (H + 2 pad - dilation (R - 1) - 1)
    // stride + 1 per spatial dimension. Channels last: a torch tensor in channels_last
    (channels_last_3d) memory format is ``t.permute(0, 2, 3, 1)`` (``t.permute(0, 2, 3, 4, 1)``),
    a view read in place; a weight [K, C/groups, R, S] in channels_last likewise.

    x, w, out and residual share one dtype, float16 or bfloat16 (accumulation float32). Every
    tensor's channel dimension is contiguous (stride 1); x's, out's and residual's other strides are
    free; w's filters may lie any distance apart but each filter's taps are packed. Any channel
    count works (C = 3, 33, ...), groups included (depthwise: groups = C = K).

    stride, padding, dilation: an int for every spatial dimension or one per dimension (outermost
    first). groups divides C and K. bias: float32 [K]. activation: None, "relu", "gelu" (the tanh
    form, F.gelu(approximate="tanh")) or "silu". residual (needed for beta != 0): out's shape and
    strides. out: written in place when given (it may be residual itself), else allocated through
    x's array library (packed [N, (Z,) P, Q, K]). stream and the rules for devices are tessel.gemm's;
    kernel: a name from conv_kernels() to force one.

    Errors: TypeError for a dtype or an argument of the wrong type, ValueError for a shape, a
    stride, a device or an argument's rule (the message starts with the argument's name: "w: ...",
    "padding: ...", "c: 66 is not divisible by groups 4 ..."), RuntimeError for a CUDA failure.
    """
    return _C.conv("fprop", x, w, out, None, bias, residual, stride, padding, dilation, groups, activation, alpha, beta,
                   stream, kernel)


def conv_dgrad(dy, w, *, x_shape=None, bias=None, stride=1, padding=0, dilation=1, groups=1, activation=None,
               alpha=1.0, beta=0.0, residual=None, out=None, stream=None, kernel=None):
    """The data gradient of tessel.conv (torch.nn.grad.conv2d_input in channels-last layout):
    returns dx = act(alpha * conv_transpose(dy, w) + beta * residual + bias), dx [N, (D,) H, W, C].

    dy is [N, (Z,) P, Q, K] (tessel.conv's out), w [K, (T,) R, S, C/groups]; stride, padding,
    dilation and groups are the forward convolution's. x_shape, dx's shape [N, (D,) H, W, C], is
    needed when out is None (at a stride above 1 several input sizes give one output size); with
    out given it must match out's shape or be None. bias: float32 [C]. The other arguments and the
    errors are tessel.conv's.
    """
    return _C.conv("dgrad", dy, w, out, x_shape, bias, residual, stride, padding, dilation, groups, activation, alpha,
                   beta, stream, kernel)


def conv_wgrad(x, dy, *, w_shape=None, stride=1, padding=0, dilation=1, groups=1, activation=None, alpha=1.0,
               beta=0.0, residual=None, out=None, stream=None, kernel=None):
    """The weight gradient of tessel.conv (torch.nn.grad.conv2d_weight in channels-last layout):
    returns dw = act(alpha * sum over N and the output pixels of dy x + beta * residual),
    dw [K, (T,) R, S, C/groups].

    x is [N, (D,) H, W, C], dy [N, (Z,) P, Q, K]; w_shape, dw's shape, is needed when out is None.
    The reduction over the batch and pixels is split over the SMs when the filters are few, in a
    fixed order: the same bits on every run on one GPU. No bias. The other arguments and the
    errors are tessel.conv's; out (or the allocated dw) has packed taps.
    """
    return _C.conv("wgrad", x, dy, out, w_shape, None, residual, stride, padding, dilation, groups, activation, alpha,
                   beta, stream, kernel)


def conv_kernel(op, a, b, **kwargs):
    """The name of the kernel the convolution pass `op` ("fprop": a = x, b = w; "dgrad": a = dy,
    b = w; "wgrad": a = x, b = dy) would run with these keyword arguments (those of tessel.conv,
    plus x_shape / w_shape); checks them as the call does and launches nothing. "gemm:<name>" is a
    1x1 convolution the GEMM kernels run; "epilogue-only" / "none" are calls that need no
    convolution kernel."""
    shape = kwargs.pop("x_shape", None) if op == "dgrad" else kwargs.pop("w_shape", None) if op == "wgrad" else None
    known = {"bias", "stride", "padding", "dilation", "groups", "activation", "alpha", "beta", "residual", "out",
             "stream", "kernel"}
    unknown = sorted(set(kwargs) - known)
    if unknown:
        raise TypeError(f"{unknown[0]}: not an argument of tessel.conv_kernel({op!r}, ...)")
    g = kwargs.get
    return _C.conv_kernel(op, a, b, g("out"), shape, g("bias"), g("residual"), g("stride", 1), g("padding", 0),
                          g("dilation", 1), g("groups", 1), g("activation"), g("alpha", 1.0), g("beta", 0.0),
                          g("stream"), g("kernel"))


def conv_kernels():
    """The compiled convolution kernels, one dict each (name, description, min_cc); the GEMM
    kernels that run 1x1 convolutions are gemm_kernels()."""
    return _C.conv_kernels()


def attention_kernels():
    """The compiled attention kernels, one dict each (name, description, min_cc)."""
    return _C.attention_kernels()


def attention_backward_kernels():
    """The compiled attention-backward kernels, one dict each (name, description, min_cc)."""
    return _C.attention_backward_kernels()


def gemm_kernels():
    """The compiled GEMM kernels, one dict each (name, summary, tile, dtypes, layouts, ...)."""
    return _C.gemm_kernels()


def device_count():
    """The number of usable CUDA devices: 0 on a machine without a driver or a device."""
    return _C.device_count()


def device_info(index=0):
    """Properties of CUDA device `index`: name, cc, sm_count, clock_mhz, l2_bytes, driver_version, ..."""
    return _C.device_info(index)


def _allocate(like, shape, dtype, device, name="out", call="tessel.gemm"):
    """An output left None (argument `name` of `call`): an empty array of `shape` and `dtype` (a
    name such as "bfloat16") on CUDA device `device`, made by the library of `like` (the first
    operand)."""
    root = type(like).__module__.split(".")[0]
    if root == "torch":
        import torch

        return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)
    if root == "cupy":
        import cupy

        if dtype not in ("float32", "float16"):
            raise TypeError(f"{name}: CuPy has no {dtype} arrays; pass {name}= for this call")
        with cupy.cuda.Device(device):
            return cupy.empty(shape, dtype=dtype)
    raise TypeError(
        f"{name}: {call} allocates its result only for torch tensors and CuPy arrays; "
        f"pass {name}= for {type(like).__module__}.{type(like).__qualname__} inputs"
    )


_C._set_allocator(_allocate)

# With torch already imported, its ops come with tessel (torch.ops.tessel.gemm).
if "torch" in _sys.modules:
    try:
        from . import torch as _tessel_torch  # noqa: F401
    except Exception as _e:  # an old torch must not make tessel unimportable
        import warnings as _warnings

        _warnings.warn(f"tessel.torch was not loaded, so torch.ops.tessel is missing: {_e}")
