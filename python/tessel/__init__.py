"""tessel: CuTe-family CUDA kernels for Python arrays.

    import torch, tessel
    a = torch.randn(4096, 1024, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(2048, 1024, device="cuda", dtype=torch.bfloat16)
    y = tessel.gemm(a, w.t())                  # a @ w.T: the transposed view is read in place

    q = torch.randn(4, 1024, 32, 128, device="cuda", dtype=torch.bfloat16)   # [B, S, H, D]
    k, v = torch.randn_like(q), torch.randn_like(q)
    o = tessel.attention(q, k, v, causal=True)  # flash-attention forward, [B, S, H, D]

`tessel.gemm` and `tessel.attention` take any CUDA array: torch tensors, and any object with
``__dlpack__`` (CuPy, JAX, ...) or ``__cuda_array_interface__``. `tessel.torch` (imported with
tessel when torch already is, else by ``import tessel.torch``) registers ``torch.ops.tessel.gemm``
(autograd, torch.compile, CUDA graphs), a drop-in ``tessel.torch.Linear``,
``torch.ops.tessel.attention`` (forward only) and ``tessel.torch.scaled_dot_product_attention``.
``python -m tessel.bench gemm|attention`` times tessel against torch.matmul and SDPA.

Errors: TypeError when an argument is not an array or its dtype is not supported, ValueError when
its device, shape or strides break a rule, RuntimeError when CUDA fails (CUDA's text included);
every message starts with the argument's name.
"""
import sys as _sys

from . import _C

__version__ = "0.1.0"
__all__ = ["gemm", "gemm_kernel", "gemm_kernels", "attention", "attention_kernels", "device_count", "device_info"]


def gemm(a, b, *, out=None, alpha=1.0, beta=0.0, c=None, stream=None, kernel=None, tf32=False):
    """out = alpha * a @ b + beta * c, on the GPU, asynchronously on `stream`; returns out.

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
    """
    return _C.gemm(a, b, out, c, alpha, beta, stream, kernel, tf32)


def gemm_kernel(a, b, *, out=None, alpha=1.0, beta=0.0, c=None, stream=None, kernel=None, tf32=False):
    """The name of the kernel gemm() would run for these arguments (None when there is nothing to
    compute); checks them as gemm() does and launches nothing."""
    return _C.gemm_kernel(a, b, out, c, alpha, beta, stream, kernel, tf32)


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
    Backward is not available yet.

    Errors: TypeError for a dtype or an argument of the wrong type, ValueError for a shape, a
    stride, a device or an argument's rule (the message starts with the argument's name and
    states the rule), RuntimeError for a CUDA failure, with CUDA's text.
    """
    return _C.attention(q, k, v, out, lse, return_lse, softmax_scale, causal, window, softcap, align, cu_seqlens_q,
                        cu_seqlens_k, max_seqlen_q, max_seqlen_k, stream, kernel)


def attention_kernels():
    """The compiled attention kernels, one dict each (name, description, min_cc)."""
    return _C.attention_kernels()


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
