"""tessel.grouped_mm's argument rules, with fake arrays: every refusal is the documented exception,
and its message names the argument and states the rule. No GPU or torch needed: every rule here is
checked before the first CUDA call (the last tests reach CUDA on purpose)."""
import pytest

import tessel
from fake_arrays import CAI, DLPack, address

# A call that passes every rule launches, here on made-up pointers: on a GPU that is an illegal
# address that poisons the process's CUDA context, so these run where there is no GPU.
reaches_cuda = pytest.mark.skipif(tessel.device_count() > 0,
                                  reason="passes every rule and would launch on made-up pointers: no-GPU machines only")

G, M, K, N = 4, 100, 64, 32  # groups, total rows, K, N: 16-byte aligned rows in bf16


def dl(shape, i, dtype="bfloat16", **kw):
    return DLPack(shape, dtype=dtype, ptr=address(i), **kw)


def args(**over):
    """A valid call's arguments (a, b as the transposed view of [G, N, K] weights, offs, out), with
    some replaced."""
    a = dl((M, K), 0)
    b = dl((G, K, N), 1, strides=(N * K, 1, K))
    offs = dl((G,), 2, dtype="int32")
    out = dl((M, N), 3)
    base = {"a": a, "b": b, "offs": offs, "out": out}
    base.update(over)
    return base


def refuse(exc, match, **over):
    kw = args(**over)
    a, b, offs = kw.pop("a"), kw.pop("b"), kw.pop("offs")
    with pytest.raises(exc) as info:
        tessel.grouped_mm(a, b, offs, **kw)
    assert match in str(info.value), f"expected {match!r} in {str(info.value)!r}"
    return str(info.value)


def test_module_version_has_the_grouped_gemm():
    assert tessel._C.C_API_VERSION == 8
    assert "grouped_mm" in tessel.__all__


# ---- what the arguments are ----------------------------------------------------------------------


@pytest.mark.parametrize("which", ["a", "b", "offs", "out"])
def test_non_array_is_a_type_error_naming_the_argument(which):
    refuse(TypeError, f"{which}: expected a CUDA array", **{which: [[1.0]]})


def test_fp32_inputs_are_a_type_error():
    refuse(TypeError, "a: fp32 is not supported; grouped GEMM takes bf16 or fp16", a=dl((M, K), 0, dtype="float32"),
           b=dl((G, K, N), 1, dtype="float32"))


def test_fp8_inputs_are_a_type_error():
    refuse(TypeError, "a: e4m3 is not supported", a=dl((M, K), 0, dtype="float8_e4m3fn"),
           b=dl((G, K, N), 1, dtype="float8_e4m3fn"))


def test_mixed_inputs_are_a_type_error():
    refuse(TypeError, "b: dtype fp16 differs from a's bf16", b=dl((G, K, N), 1, dtype="float16"))


def test_int64_offsets_are_a_type_error():
    refuse(TypeError, "offs: dtype '<i8'", offs=CAI((G,), typestr="<i8", ptr=address(2)))


def test_float_offsets_are_a_type_error():
    refuse(TypeError, "offs: dtype '<f4'", offs=CAI((G,), typestr="<f4", ptr=address(2)))


def test_fp16_out_from_bf16_inputs_is_a_type_error():
    refuse(TypeError, "out: dtype fp16 with bf16 inputs; bf16 inputs write bf16 or fp32", out=dl((M, N), 3, "float16"))


def test_out_dtype_outside_the_three_is_a_type_error():
    refuse(TypeError, "out_dtype: int8 is not supported; a grouped GEMM writes bfloat16, float16 or float32",
           out_dtype="int8")


def test_out_dtype_that_contradicts_out_is_a_type_error():
    refuse(TypeError, "out_dtype: float32, but out is bfloat16", out_dtype="torch.float32")


def test_c_of_another_dtype_than_out_is_a_type_error():
    refuse(TypeError, "c: dtype fp32 differs from out's bf16", c=dl((M, N), 4, "float32"), beta=1.0)


# ---- shapes ----------------------------------------------------------------------------------------


def test_3d_a_is_a_value_error():
    refuse(ValueError, "a: has 3 dimensions; it must be 2-D [total_m, K]", a=dl((1, M, K), 0))


def test_2d_b_is_a_value_error():
    refuse(ValueError, "b: has 2 dimensions; it must be 3-D [G, K, N]", b=dl((K, N), 1))


def test_2d_offsets_are_a_value_error():
    refuse(ValueError, "offs: has 2 dimensions; it must be 1-D [G]", offs=dl((G, 1), 2, "int32"))


def test_b_whose_k_is_not_as_k_is_a_value_error():
    refuse(ValueError, "b: is (4, 48, 32), but a has 64 columns", b=dl((G, 48, N), 1))


def test_offsets_count_other_than_the_groups_is_a_value_error():
    refuse(ValueError, "offs: has 3 values, but b has 4 groups", offs=dl((3,), 2, "int32"))


def test_zero_groups_is_a_value_error():
    refuse(ValueError, "b: has 0 groups", b=dl((0, K, N), 1), offs=dl((0,), 2, "int32"))


def test_more_groups_than_one_launch_takes_is_a_value_error():
    refuse(ValueError, "b: has 1025 groups, above the 1024 one call takes; split the call", b=dl((1025, K, N), 1),
           offs=dl((1025,), 2, "int32"))


def test_out_of_the_wrong_shape_is_a_value_error():
    refuse(ValueError, "out: is (100, 16), but the result is [total_m, N] = (100, 32)", out=dl((M, 16), 3))


def test_c_of_the_wrong_shape_is_a_value_error():
    refuse(ValueError, "c: is (99, 32), but out is (100, 32)", c=dl((M - 1, N), 4), beta=1.0)


def test_beta_without_c_is_a_value_error():
    refuse(ValueError, "c: beta is 1, but no C was given", beta=1.0)


# ---- strides -----------------------------------------------------------------------------------------


def test_column_major_a_is_a_value_error():
    refuse(ValueError, "a: its last stride is 100", a=dl((M, K), 0, strides=(1, M)))


def test_column_major_out_is_a_value_error():
    refuse(ValueError, "out: its last stride is 100", out=dl((M, N), 3, strides=(1, M)))


def test_b_with_neither_order_is_a_value_error():
    refuse(ValueError, "b: neither of its last two strides is 1", b=dl((G, K, N), 1, strides=(4 * K * N, 2 * N, 2)))


def test_b_broadcast_over_groups_is_a_value_error():
    refuse(ValueError, "b.group_stride: 0 is below", b=dl((G, K, N), 1, strides=(0, 1, K)))


def test_strided_offsets_are_a_value_error():
    refuse(ValueError, "offs: stride 2; the offsets must be contiguous", offs=dl((G,), 2, "int32", strides=(2,)))


def test_negative_stride_is_a_value_error():
    refuse(ValueError, "a: stride -64 of dimension 0 is negative", a=dl((M, K), 0, strides=(-K, 1)))


def test_rows_the_kernels_tma_cannot_read_are_a_value_error_naming_the_fix():
    msg = refuse(ValueError, "a.row_stride: 100 elements (200 bytes) is not a multiple of 16 bytes",
                 a=dl((M, 100), 0), b=dl((G, 100, N), 1, strides=(N * 100, 1, 100)))
    assert "pad K to a multiple of 8" in msg


def test_out_over_an_input_is_a_value_error():
    refuse(ValueError, "out: starts at the same address as a", a=dl((M, K), 0), b=dl((G, K, K), 1), out=dl((M, K), 0))


# ---- devices and layouts that pass -------------------------------------------------------------------


def test_operands_on_two_devices_are_a_value_error():
    refuse(ValueError, "offs: is on CUDA device 1, but a is on device 0", offs=dl((G,), 2, "int32", device=(2, 1)))


def test_cpu_offsets_are_a_value_error():
    refuse(ValueError, "offs: lives on DLPack device type 1 (CPU)", offs=dl((G,), 2, "int32", device=(1, 0)))


def _passes_every_rule(**over):
    # Every argument rule passes: the call gets as far as CUDA (which this machine may not have).
    kw = args(**over)
    a, b, offs = kw.pop("a"), kw.pop("b"), kw.pop("offs")
    try:
        tessel.grouped_mm(a, b, offs, **kw)
    except (RuntimeError, ValueError) as e:
        text = str(e)
        assert isinstance(e, RuntimeError) or "is not CUDA memory" in text, text


@reaches_cuda
def test_both_layouts_of_b_fp32_out_and_c_pass_every_rule_before_cuda():
    _passes_every_rule()                                   # transposed [G, N, K] weights
    _passes_every_rule(b=dl((G, K, N), 1))                 # a [G, K, N] array
    _passes_every_rule(out=dl((M, N), 3, "float32"), out_dtype="float32")
    _passes_every_rule(c=dl((M, N), 4), beta=0.5, alpha=2.0)
    _passes_every_rule(b=dl((1, K, N), 1, strides=(0, 1, K)), offs=dl((1,), 2, "int32"))  # one group: any stride


@pytest.mark.skipif(tessel.device_count() > 0, reason="checks the failure on a machine without a CUDA driver or device")
def test_without_a_gpu_a_valid_call_is_a_runtime_error_with_cudas_text():
    with pytest.raises(RuntimeError) as info:
        kw = args()
        tessel.grouped_mm(kw["a"], kw["b"], kw["offs"], out=kw["out"])
    assert "cuda" in str(info.value).lower()


def test_out_none_for_an_array_library_tessel_cannot_allocate_is_a_type_error():
    kw = args()
    with pytest.raises(TypeError) as info:
        tessel.grouped_mm(CAI((M, K), typestr="<f2", ptr=address(0)),
                          CAI((G, K, N), typestr="<f2", ptr=address(1)), kw["offs"])
    assert "out: tessel.grouped_mm allocates its result only for torch tensors and CuPy arrays" in str(info.value)
