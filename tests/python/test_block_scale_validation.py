"""tessel.gemm's block-scaled fp8 arguments (scale_a, scale_b) with fake arrays: every refusal is the
documented exception and names the argument and the rule. No GPU or torch needed."""
import pytest

import tessel
from fake_arrays import CAI, DLPack, address

# A call that passes every rule launches, here on made-up pointers: on a GPU that is an illegal
# address that poisons the process's CUDA context, so these run where there is no GPU.
reaches_cuda = pytest.mark.skipif(tessel.device_count() > 0,
                                  reason="passes every rule and would launch on made-up pointers: no-GPU machines only")

M, N, K = 200, 300, 300  # 3 blocks of K, 3 column blocks of b
KB, NB = 3, 3


def dl(shape, i, dtype="float8_e4m3fn", **kw):
    return DLPack(shape, dtype=dtype, ptr=address(i), **kw)


def operands(**over):
    """A valid block-scaled call: e4m3 a [M, K] row-major, b [K, N] column-major (tn), bf16 out,
    scale_a [M, KB] M-major, scale_b [NB, KB] K-major; some replaced."""
    base = {
        "a": dl((M, K), 0), "b": dl((K, N), 1, strides=(1, K)), "out": dl((M, N), 2, "bfloat16"),
        "scale_a": dl((M, KB), 3, "float32", strides=(1, M)), "scale_b": dl((NB, KB), 4, "float32"),
    }
    base.update(over)
    return base


def refuse(exc, match, **over):
    kw = operands(**over)
    a, b = kw.pop("a"), kw.pop("b")
    with pytest.raises(exc) as info:
        tessel.gemm(a, b, **kw)
    assert match in str(info.value), f"expected {match!r} in {str(info.value)!r}"
    return str(info.value)


def test_one_array_and_one_float_is_a_value_error():
    refuse(ValueError, "scale_b: scale_a is an array of block scales, so scale_b must be one too", scale_b=None)
    refuse(ValueError, "scale_a: scale_b is an array of block scales, so scale_a must be one too", scale_a=2.0)


def test_bool_scale_is_a_type_error():
    refuse(TypeError, "scale_a: expected a float (per-tensor) or a float32 array of block scales, got bool",
           scale_a=True)


def test_1d_scale_is_a_value_error():
    refuse(ValueError, "scale_a: has 1 dimension; with a 2-D D it must be [200, 3]", scale_a=dl((1,), 3, "float32"))


def test_0d_scale_array_is_a_value_error_pointing_at_a_float():
    refuse(ValueError, "a per-tensor scale is a Python float", scale_a=CAI((), typestr="<f4", ptr=address(3)))


def test_fp16_scales_are_a_type_error():
    refuse(TypeError, "scale_b: fp16 is not supported; block scales are fp32", scale_b=dl((NB, KB), 4, "float16"))


def test_int32_scales_are_a_type_error():
    refuse(TypeError, "scale_a: dtype int32 is not supported", scale_a=dl((M, KB), 3, "int32", strides=(1, M)))


def test_k_major_scale_a_is_a_value_error():
    msg = refuse(ValueError, "scale_a: strides (3, 1) do not make it [M, ceil(K/128)], M-major",
                 scale_a=dl((M, KB), 3, "float32"))
    assert "leading dimension of at least 200" in msg


def test_m_major_scale_b_is_a_value_error():
    refuse(ValueError, "scale_b: strides (1, 3) do not make it [ceil(N/128), ceil(K/128)], K-major",
           scale_b=dl((NB, KB), 4, "float32", strides=(1, NB)))


def test_scale_a_per_128_rows_is_a_value_error():
    refuse(ValueError, "scale_a: shape (2, 3) is not [200, 3]", scale_a=dl((2, KB), 3, "float32", strides=(1, 2)))


def test_scale_b_per_column_is_a_value_error():
    refuse(ValueError, "scale_b: shape (300, 3) is not [3, 3]", scale_b=dl((N, KB), 4, "float32"))


def test_3d_scales_for_a_2d_problem_are_a_value_error():
    refuse(ValueError, "scale_b: has 3 dimensions; with a 2-D D it must be [3, 3]", scale_b=dl((1, NB, KB), 4, "float32"))


def test_block_scales_on_bf16_operands_are_a_value_error():
    refuse(ValueError, "scale_mode: block scales fp8 operands only", a=dl((M, K), 0, "bfloat16"),
           b=dl((K, N), 1, "bfloat16", strides=(1, K)))


def test_per_tensor_float_on_bf16_operands_is_refused():
    with pytest.raises(ValueError) as info:
        tessel.gemm(dl((M, K), 0, "bfloat16"), dl((K, N), 1, "bfloat16"), out=dl((M, N), 2, "bfloat16"), scale_a=2.0)
    assert "a_scale" in str(info.value)


def test_batched_scales_must_be_packed_per_batch():
    batch = 2
    over = {"a": dl((batch, M, K), 0), "b": dl((batch, K, N), 1, strides=(K * N, 1, K)),
            "out": dl((batch, M, N), 2, "bfloat16")}
    refuse(ValueError, "scale_a: batch stride 1000 is not 600", scale_a=dl((batch, M, KB), 3, "float32",
                                                                            strides=(1000, 1, M)), **over)
    refuse(ValueError, "scale_a: has 2 dimensions; with a 3-D D it must be [2, 200, 3]", **over)


def _passes_every_rule(**over):
    kw = operands(**over)
    a, b = kw.pop("a"), kw.pop("b")
    try:
        tessel.gemm(a, b, **kw)
    except (RuntimeError, ValueError) as e:
        text = str(e)
        assert isinstance(e, RuntimeError) or "is not CUDA memory" in text, text


@reaches_cuda
def test_packed_padded_and_per_tensor_scales_pass_every_rule_before_cuda():
    _passes_every_rule()
    _passes_every_rule(scale_a=dl((M, KB), 3, "float32", strides=(1, 256)), scale_b=dl((NB, KB), 4, "float32",
                                                                                      strides=(4, 1)))
    _passes_every_rule(scale_a=None, scale_b=None)
    _passes_every_rule(scale_a=0.5, scale_b=4.0)  # per-tensor factors
    _passes_every_rule(a=dl((1, K), 0), out=dl((1, N), 2, "bfloat16"),
                       scale_a=dl((1, KB), 3, "float32"))  # M = 1: a row-major [1, KB] is M-major too
    batch = 2
    _passes_every_rule(a=dl((batch, M, K), 0), b=dl((batch, K, N), 1, strides=(K * N, 1, K)),
                       out=dl((batch, M, N), 2, "bfloat16"),
                       scale_a=dl((batch, M, KB), 3, "float32", strides=(M * KB, 1, M)),
                       scale_b=dl((batch, NB, KB), 4, "float32"))


@reaches_cuda
def test_cai_float32_scales_are_read_too():
    _passes_every_rule(scale_a=CAI((M, KB), typestr="<f4", strides=(4, 4 * M), ptr=address(3)),
                       scale_b=CAI((NB, KB), typestr="<f4", ptr=address(4)))
