"""tessel: CuTe-family CUDA kernels for Python arrays.

    import torch, tessel
    a = torch.randn(4096, 1024, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(2048, 1024, device="cuda", dtype=torch.bfloat16)
    y = tessel.gemm(a, w.t())                  # a @ w.T: the transposed view is read in place

`tessel.gemm` takes any CUDA array: torch tensors, and any object with ``__dlpack__`` (CuPy,
JAX, ...) or ``__cuda_array_interface__``. `tessel.torch` (imported with tessel when torch already
is, else by ``import tessel.torch``) registers ``torch.ops.tessel.gemm`` for autograd,
torch.compile and CUDA graphs, and a drop-in ``tessel.torch.Linear``. ``python -m tessel.bench
gemm`` times tessel against torch.matmul.

Errors: TypeError when an argument is not an array or its dtype is not supported, ValueError when
its device, shape or strides break a rule, RuntimeError when CUDA fails (CUDA's text included);
every message starts with the argument's name.
"""
import sys as _sys

from . import _C

__version__ = "0.1.0"
__all__ = ["gemm", "gemm_kernel", "gemm_kernels", "device_count", "device_info"]


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


def gemm_kernels():
    """The compiled GEMM kernels, one dict each (name, summary, tile, dtypes, layouts, ...)."""
    return _C.gemm_kernels()


def device_count():
    """The number of usable CUDA devices: 0 on a machine without a driver or a device."""
    return _C.device_count()


def device_info(index=0):
    """Properties of CUDA device `index`: name, cc, sm_count, clock_mhz, l2_bytes, driver_version, ..."""
    return _C.device_info(index)


def _allocate(like, shape, dtype, device):
    """gemm()'s out=None: an empty array of `shape` and `dtype` (a name such as "bfloat16") on
    CUDA device `device`, made by the library of `like` (the first operand)."""
    root = type(like).__module__.split(".")[0]
    if root == "torch":
        import torch

        return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)
    if root == "cupy":
        import cupy

        if dtype not in ("float32", "float16"):
            raise TypeError(f"out: CuPy has no {dtype} arrays; pass out= for this call")
        with cupy.cuda.Device(device):
            return cupy.empty(shape, dtype=dtype)
    raise TypeError(
        "out: tessel.gemm allocates its result only for torch tensors and CuPy arrays; "
        f"pass out= for {type(like).__module__}.{type(like).__qualname__} inputs"
    )


_C._set_allocator(_allocate)

# With torch already imported, its ops come with tessel (torch.ops.tessel.gemm).
if "torch" in _sys.modules:
    try:
        from . import torch as _tessel_torch  # noqa: F401
    except Exception as _e:  # an old torch must not make tessel unimportable
        import warnings as _warnings

        _warnings.warn(f"tessel.torch was not loaded, so torch.ops.tessel is missing: {_e}")
