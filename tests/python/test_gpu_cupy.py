"""tessel.gemm and tessel.attention on CuPy arrays (DLPack from CuPy, and its __cuda_array_interface__
through a wrapper), against float64 references from numpy; random inputs, NaN-poisoned outputs."""
import math

import pytest

cp = pytest.importorskip("cupy", reason="the CuPy tests need CuPy")
np = pytest.importorskip("numpy")

import tessel  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(tessel.device_count() == 0, reason="needs a CUDA device"),
]


def tolerance(dtype, k):
    u_out = 2.0**-11 if dtype == cp.float16 else 2.0**-24
    return 8 * 2.0**-24 * math.sqrt(max(k, 1)) + 2 * u_out


def rel_err(d, a, b):
    A, B = cp.asnumpy(a).astype(np.float64), cp.asnumpy(b).astype(np.float64)
    R, S = A @ B, np.abs(A) @ np.abs(B)
    D = cp.asnumpy(d).astype(np.float64)
    assert not (np.isfinite(R) & ~np.isfinite(D)).any(), "non-finite result where the reference is finite"
    return float((np.abs(D - R) / np.where(S > 0, S, 1.0)).max())


def rand(*shape, dtype=cp.float32):
    return (cp.random.random(shape, dtype=cp.float32) * 2 - 1).astype(dtype)


class CudaArrayInterfaceOnly:
    """A CuPy array seen only through __cuda_array_interface__ (as a Numba array would be)."""

    def __init__(self, x):
        self._x = x
        self.__cuda_array_interface__ = x.__cuda_array_interface__


@pytest.mark.parametrize("dtype", [cp.float32, cp.float16])
@pytest.mark.parametrize("transpose_a,transpose_b", [(False, False), (True, False), (False, True), (True, True)])
def test_gemm_on_cupy_arrays(dtype, transpose_a, transpose_b):
    cp.random.seed(7)
    m, n, k = 97, 130, 71
    a = rand(k, m, dtype=dtype).T if transpose_a else rand(m, k, dtype=dtype)
    b = rand(n, k, dtype=dtype).T if transpose_b else rand(k, n, dtype=dtype)
    out = cp.full((m, n), cp.nan, dtype=dtype)
    assert tessel.gemm(a, b, out=out) is out
    cp.cuda.get_current_stream().synchronize()
    assert rel_err(out, a, b) <= tolerance(dtype, k)


def test_out_none_allocates_a_cupy_array():
    a, b = rand(40, 24), rand(24, 16)
    out = tessel.gemm(a, b)
    assert isinstance(out, cp.ndarray) and out.dtype == cp.float32 and out.shape == (40, 16)
    assert rel_err(out, a, b) <= tolerance(cp.float32, 24)


def test_cuda_array_interface_objects():
    a, b = rand(33, 65), rand(65, 17)
    out = cp.full((33, 17), cp.nan, dtype=cp.float32)
    tessel.gemm(CudaArrayInterfaceOnly(a), CudaArrayInterfaceOnly(b), out=CudaArrayInterfaceOnly(out))
    cp.cuda.Device().synchronize()
    assert rel_err(out, a, b) <= tolerance(cp.float32, 65)


def test_runs_on_cupys_current_stream():
    a, b = rand(256, 256), rand(256, 256)
    out = cp.full((256, 256), cp.nan, dtype=cp.float32)
    cp.cuda.Device().synchronize()
    with cp.cuda.Stream(non_blocking=True) as s:
        tessel.gemm(a, b, out=out)  # default: CuPy's current stream, s
        s.synchronize()
    assert rel_err(out, a, b) <= tolerance(cp.float32, 256)
    with cp.cuda.Stream(non_blocking=True) as s2:
        pass
    out.fill(cp.nan)
    cp.cuda.Device().synchronize()
    tessel.gemm(a, b, out=out, stream=s2)  # a cupy.cuda.Stream object
    s2.synchronize()
    assert rel_err(out, a, b) <= tolerance(cp.float32, 256)


def test_non_contiguous_cupy_view_is_refused():
    a = rand(32, 64)[:, ::2]
    with pytest.raises(ValueError, match="a: neither of its last two strides is 1"):
        tessel.gemm(a, rand(32, 8))


def test_float64_cupy_array_is_a_type_error():
    with pytest.raises(TypeError, match="a: dtype float64 is not supported"):
        tessel.gemm(rand(4, 4, dtype=cp.float64), rand(4, 4, dtype=cp.float64))


# ---- attention -----------------------------------------------------------------------------------


def attention_reference(q, k, v, causal=False, cu_q=None, cu_k=None):
    """float64 out of [B, S, H, D] (or packed [total, H, D] with offsets) CuPy arrays, bottom-right causal."""
    Q, K, V = (cp.asnumpy(x).astype(np.float64) for x in (q, k, v))
    if cu_q is None:
        return np.stack([attention_reference_one(Q[b], K[b], V[b], causal) for b in range(Q.shape[0])])
    cq, ck = cp.asnumpy(cu_q), cp.asnumpy(cu_k)
    return np.concatenate([attention_reference_one(Q[cq[b]:cq[b + 1]], K[ck[b]:ck[b + 1]], V[ck[b]:ck[b + 1]], causal)
                           for b in range(len(cq) - 1)])


def attention_reference_one(Q, K, V, causal):
    s_q, h, d = Q.shape
    s_k, h_kv = K.shape[0], K.shape[1]
    group = h // h_kv
    out = np.zeros((s_q, h, V.shape[2]))
    for head in range(h):
        s = Q[:, head] @ K[:, head // group].T / math.sqrt(d)
        if causal:
            s = np.where(np.arange(s_k)[None, :] <= np.arange(s_q)[:, None] + s_k - s_q, s, -np.inf)
        m = s.max(axis=1, keepdims=True) if s_k else np.zeros((s_q, 1))
        m = np.where(np.isfinite(m), m, 0.0)
        p = np.exp(s - m)
        denom = p.sum(axis=1, keepdims=True)
        out[:, head] = np.where(denom > 0, (p @ V[:, head // group]) / np.where(denom > 0, denom, 1.0), 0.0)
    return out


# fp16 outputs of inputs in (-1, 1): a few ulps of the output's magnitude (at most 1)
ATTENTION_TOLERANCE = 4 * 2.0**-10


@pytest.mark.parametrize("causal", [False, True])
def test_attention_on_cupy_arrays(causal):
    cp.random.seed(11)
    q, k, v = rand(2, 70, 4, 64, dtype=cp.float16), rand(2, 90, 2, 64, dtype=cp.float16), rand(2, 90, 2, 64,
                                                                                                dtype=cp.float16)
    out = cp.full((2, 70, 4, 64), cp.nan, dtype=cp.float16)
    assert tessel.attention(q, k, v, out=out, causal=causal) is out
    cp.cuda.get_current_stream().synchronize()
    assert np.abs(cp.asnumpy(out).astype(np.float64) - attention_reference(q, k, v, causal)).max() <= ATTENTION_TOLERANCE


def test_attention_allocates_cupy_outputs():
    q = rand(1, 33, 2, 128, dtype=cp.float16)
    out, lse = tessel.attention(q, q, q, return_lse=True)
    assert isinstance(out, cp.ndarray) and out.dtype == cp.float16 and out.shape == (1, 33, 2, 128)
    assert isinstance(lse, cp.ndarray) and lse.dtype == cp.float32 and lse.shape == (1, 2, 33)
    cp.cuda.get_current_stream().synchronize()
    assert np.abs(cp.asnumpy(out).astype(np.float64) - attention_reference(q, q, q)).max() <= ATTENTION_TOLERANCE


def test_variable_length_attention_with_cupy_offsets():
    lens_q, lens_k = [3, 0, 40], [10, 7, 40]
    cu_q = cp.asarray(np.concatenate([[0], np.cumsum(lens_q)]), dtype=cp.int32)
    cu_k = cp.asarray(np.concatenate([[0], np.cumsum(lens_k)]), dtype=cp.int32)
    q, k, v = rand(sum(lens_q), 2, 96, dtype=cp.float16), rand(sum(lens_k), 1, 96, dtype=cp.float16), rand(
        sum(lens_k), 1, 96, dtype=cp.float16)
    out = cp.full(q.shape, cp.nan, dtype=cp.float16)
    tessel.attention(q, k, v, out=out, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_q=40, max_seqlen_k=40,
                     causal=True)
    cp.cuda.get_current_stream().synchronize()
    ref = attention_reference(q, k, v, True, cu_q, cu_k)
    assert np.abs(cp.asnumpy(out).astype(np.float64) - ref).max() <= ATTENTION_TOLERANCE


def test_attention_through_cuda_array_interface_objects():
    q = rand(1, 20, 2, 64, dtype=cp.float16)
    out = cp.full(q.shape, cp.nan, dtype=cp.float16)
    wrapped = CudaArrayInterfaceOnly(q)
    tessel.attention(wrapped, wrapped, wrapped, out=CudaArrayInterfaceOnly(out))
    cp.cuda.Device().synchronize()
    assert np.abs(cp.asnumpy(out).astype(np.float64) - attention_reference(q, q, q)).max() <= ATTENTION_TOLERANCE


def test_float32_cupy_attention_is_a_type_error():
    q = rand(1, 8, 2, 64, dtype=cp.float32)
    with pytest.raises(TypeError, match="q: fp32 is not supported; attention takes fp16 and bf16"):
        tessel.attention(q, q, q)
