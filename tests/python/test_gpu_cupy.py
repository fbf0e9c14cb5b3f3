"""tessel.gemm on CuPy arrays (DLPack from CuPy, and its __cuda_array_interface__ through a wrapper),
against float64 references from numpy; random inputs, NaN-poisoned outputs."""
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
