"""tessel.gemm's argument rules, with fake arrays: every refusal is the documented exception, and its
message names the argument and states the rule. No GPU or torch needed: every rule here is checked
before the first CUDA call (the last tests reach CUDA on purpose)."""
import pytest

import tessel
from fake_arrays import CAI, DLPack, address

F4 = 4  # bytes of a float32


def cai(shape, i=0, typestr="<f4", strides_el=None, **kw):
    """A float32 (by default) CAI fake; strides_el in elements."""
    size = int(typestr[-1])
    strides = None if strides_el is None else [s * size for s in strides_el]
    return CAI(shape, typestr=typestr, strides=strides, ptr=address(i), **kw)


def dl(shape, i=0, **kw):
    return DLPack(shape, ptr=address(i), **kw)


def refuse(exc, match, *args, **kwargs):
    with pytest.raises(exc) as info:
        tessel.gemm(*args, **kwargs)
    assert match in str(info.value), f"expected {match!r} in {str(info.value)!r}"
    return str(info.value)


GOOD_A, GOOD_B, GOOD_OUT = (4, 5), (5, 6), (4, 6)


def test_module_imports_without_a_gpu():
    assert tessel.__version__
    assert tessel._C.C_API_VERSION == 8
    assert isinstance(tessel.device_count(), int)
    names = [k["name"] for k in tessel.gemm_kernels()]
    assert names and all(isinstance(n, str) for n in names)


# ---- what the arguments are ----------------------------------------------------------------------


@pytest.mark.parametrize("which", ["a", "b", "out", "c"])
def test_non_array_is_a_type_error_naming_the_argument(which):
    args = {"a": cai(GOOD_A, 0), "b": cai(GOOD_B, 1), "out": cai(GOOD_OUT, 2), "c": cai(GOOD_OUT, 3)}
    args[which] = [[1.0, 2.0]]
    msg = refuse(TypeError, f"{which}: expected a CUDA array", args["a"], args["b"], out=args["out"], c=args["c"], beta=1)
    assert "list" in msg


@pytest.mark.parametrize("typestr", ["<f8", "<i4", "|u1", "<V2"])
def test_cai_dtype_outside_float32_float16_is_a_type_error(typestr):
    refuse(TypeError, f"a: dtype '{typestr}'", CAI(GOOD_A, typestr=typestr), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2))


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_dlpack_dtype_outside_tessels_is_a_type_error(dtype):
    refuse(TypeError, f"b: dtype {dtype} is not supported", dl(GOOD_A, 0), dl(GOOD_B, 1, dtype=dtype),
           out=dl(GOOD_OUT, 2))


def test_dlpack_vector_lanes_are_a_type_error():
    refuse(TypeError, "a: dtype float32 x 4 lanes", dl(GOOD_A, 0, lanes=4), dl(GOOD_B, 1), out=dl(GOOD_OUT, 2))


def test_cai_without_a_required_key_is_a_type_error():
    x = cai(GOOD_A)
    del x.__cuda_array_interface__["typestr"]
    refuse(TypeError, "a: __cuda_array_interface__ has no 'typestr'", x, cai(GOOD_B, 1), out=cai(GOOD_OUT, 2))


def test_masked_cai_is_a_value_error():
    refuse(ValueError, "a: is a masked array", cai(GOOD_A, mask=object()), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2))


def test_cai_stream_zero_is_a_value_error():
    refuse(ValueError, "b: __cuda_array_interface__ 'stream' is 0", cai(GOOD_A), cai(GOOD_B, 1, stream=0),
           out=cai(GOOD_OUT, 2))


def test_cai_stride_that_is_not_whole_elements_is_a_value_error():
    x = CAI(GOOD_A, strides=(18, 4), ptr=address(0))
    refuse(ValueError, "a: stride 18 bytes of dimension 0 is not a whole number of 4-byte elements", x, cai(GOOD_B, 1),
           out=cai(GOOD_OUT, 2))


# ---- dtypes together -------------------------------------------------------------------------------


def test_a_and_b_of_different_dtypes_is_a_type_error():
    msg = refuse(TypeError, "b: fp16 differs from a's dtype fp32", cai(GOOD_A), cai(GOOD_B, 1, typestr="<f2"),
                 out=cai(GOOD_OUT, 2))
    assert "same dtype" in msg


def test_narrower_output_than_fp32_inputs_is_a_type_error():
    refuse(TypeError, "out: fp16 output needs fp16 inputs", cai(GOOD_A), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2, typestr="<f2"))


def test_c_of_another_dtype_than_out_is_a_type_error():
    refuse(TypeError, "c: dtype fp16 differs from out's fp32", cai(GOOD_A), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2),
           c=cai(GOOD_OUT, 3, typestr="<f2"), beta=1.0)


def test_two_e5m2_operands_are_a_type_error():
    refuse(TypeError, "b: e5m2 with a's dtype e5m2 is not supported", dl(GOOD_A, 0, dtype="float8_e5m2"),
           dl(GOOD_B, 1, dtype="float8_e5m2"), out=dl(GOOD_OUT, 2, dtype="bfloat16"))


def test_fp8_with_a_wider_operand_is_a_type_error():
    refuse(TypeError, "a: fp32 with fp8 b's dtype e4m3", dl(GOOD_A, 0), dl(GOOD_B, 1, dtype="float8_e4m3fn"),
           out=dl(GOOD_OUT, 2))


def test_fp8_output_is_a_type_error():
    refuse(TypeError, "out: e4m3 is an input type here", dl(GOOD_A, 0, dtype="float8_e4m3fn"),
           dl(GOOD_B, 1, dtype="float8_e4m3fn"), out=dl(GOOD_OUT, 2, dtype="float8_e4m3fn"))


def test_tf32_with_non_float32_operands_is_a_type_error():
    refuse(TypeError, "tf32: applies to float32 operands, but a is float16", cai(GOOD_A, typestr="<f2"),
           cai(GOOD_B, 1, typestr="<f2"), out=cai(GOOD_OUT, 2, typestr="<f2"), tf32=True)


# ---- shapes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,words", [((), "0 dimensions"), ((5,), "1 dimension"), ((2, 2, 4, 5), "4 dimensions")])
def test_operand_that_is_not_2d_or_3d_is_a_value_error(shape, words):
    refuse(ValueError, f"a: has {words}; a GEMM operand is 2-D", cai(shape), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2))
    refuse(ValueError, f"c: has {words}; a GEMM operand is 2-D", cai(GOOD_A), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2),
           c=cai(shape, 3))


def test_k_mismatch_is_a_value_error():
    refuse(ValueError, "b: has 6 rows, but a has 5 columns", cai(GOOD_A), cai((6, 6), 1), out=cai(GOOD_OUT, 2))


def test_out_of_the_wrong_shape_is_a_value_error():
    refuse(ValueError, "out: is 4 x 7, but a @ b is 4 x 6", cai(GOOD_A), cai(GOOD_B, 1), out=cai((4, 7), 2))


def test_c_of_the_wrong_shape_is_a_value_error():
    refuse(ValueError, "c: is 3 x 6, but out is 4 x 6", cai(GOOD_A), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2),
           c=cai((3, 6), 3), beta=1.0)


def test_batches_that_do_not_broadcast_are_a_value_error():
    refuse(ValueError, "b: batch 2 does not broadcast against a's batch 3", cai((3, 4, 5)), cai((2, 5, 6), 1),
           out=cai((3, 4, 6), 2))


def test_batched_inputs_with_a_2d_out_are_a_value_error():
    refuse(ValueError, "out: is 2-D, but a is batched", cai((3, 4, 5)), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2))


def test_2d_inputs_with_a_3d_out_are_a_value_error():
    refuse(ValueError, "out: is 3-D, but a and b are 2-D", cai(GOOD_A), cai(GOOD_B, 1), out=cai((2, 4, 6), 2))


def test_out_batch_that_differs_from_the_inputs_is_a_value_error():
    refuse(ValueError, "out: batch 2 does not match the batch 3", cai((3, 4, 5)), cai((3, 5, 6), 1), out=cai((2, 4, 6), 2))


def test_3d_c_with_2d_out_is_a_value_error():
    refuse(ValueError, "c: is 3-D, but out is 2-D", cai(GOOD_A), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2),
           c=cai((1, 4, 6), 3), beta=1.0)


def test_c_batch_that_does_not_broadcast_is_a_value_error():
    refuse(ValueError, "c: batch 2 does not broadcast to out's batch 3", cai((3, 4, 5)), cai((3, 5, 6), 1),
           out=cai((3, 4, 6), 2), c=cai((2, 4, 6), 3), beta=1.0)


def test_beta_without_c_is_a_value_error():
    refuse(ValueError, "c: beta is 0.5, but no C was given", cai(GOOD_A), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2), beta=0.5)


# ---- strides -----------------------------------------------------------------------------------------


def test_neither_last_stride_1_is_a_value_error():
    msg = refuse(ValueError, "a: neither of its last two strides is 1", cai(GOOD_A, strides_el=(10, 2)), cai(GOOD_B, 1),
                 out=cai(GOOD_OUT, 2))
    assert "(shape (4, 5), strides (10, 2))" in msg


def test_overlapping_rows_are_a_value_error():
    refuse(ValueError, "b: its rows overlap: the row stride 0 is below the row length 6", cai(GOOD_A),
           cai(GOOD_B, 1, strides_el=(0, 1)), out=cai(GOOD_OUT, 2))


def test_overlapping_columns_are_a_value_error():
    refuse(ValueError, "a: its columns overlap: the column stride 2 is below the column length 4",
           cai(GOOD_A, strides_el=(1, 2)), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2))


def test_negative_stride_is_a_value_error():
    refuse(ValueError, "a: stride -5 of dimension 0 is negative", cai(GOOD_A, strides_el=(-5, 1)), cai(GOOD_B, 1),
           out=cai(GOOD_OUT, 2))


def test_c_in_another_order_than_out_is_a_value_error():
    refuse(ValueError, "c: is column-major, but out is row-major", cai(GOOD_A), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2),
           c=cai(GOOD_OUT, 3, strides_el=(1, 4)), beta=1.0)


def test_out_batch_stride_0_is_a_value_error():
    refuse(ValueError, "out: batch stride 0 with batch 2 makes every batch write the same matrix", cai((2, 4, 5)),
           cai((2, 5, 6), 1), out=cai((2, 4, 6), 2, strides_el=(0, 6, 1)))


def test_out_batches_that_overlap_are_a_value_error():
    refuse(ValueError, "out: its elements overlap", cai((2, 4, 5)), cai((2, 5, 6), 1),
           out=cai((2, 4, 6), 2, strides_el=(6, 6, 1)))


def test_read_only_out_is_a_value_error():
    refuse(ValueError, "out: is read-only", cai(GOOD_A), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2, readonly=True))


def test_out_over_an_input_is_a_value_error():
    refuse(ValueError, "out: starts at the same address as a", cai((4, 4)), cai((4, 4), 1), out=cai((4, 4), 0))


# ---- the other arguments -----------------------------------------------------------------------------


def test_alpha_that_is_not_a_number_is_a_type_error():
    refuse(TypeError, "alpha: expected a real number, got <class 'str'>", cai(GOOD_A), cai(GOOD_B, 1),
           out=cai(GOOD_OUT, 2), alpha="2")


def test_kernel_that_is_not_a_string_is_a_type_error():
    refuse(TypeError, "kernel: expected a kernel name", cai(GOOD_A), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2), kernel=3)


def test_unknown_kernel_is_a_value_error():
    refuse(ValueError, "kernel: 'no_such_kernel' is not a compiled kernel", cai(GOOD_A), cai(GOOD_B, 1),
           out=cai(GOOD_OUT, 2), kernel="no_such_kernel")


# ---- the fused epilogue (bias, activation) -------------------------------------------------------


def test_unknown_activation_is_a_value_error():
    refuse(ValueError, "activation: 'gelu_erf' is not one of 'relu', 'gelu', 'gelu_tanh', 'silu'", cai(GOOD_A),
           cai(GOOD_B, 1), out=cai(GOOD_OUT, 2), activation="gelu_erf")


def test_activation_that_is_not_a_string_is_a_type_error():
    refuse(TypeError, "activation: expected a str", cai(GOOD_A), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2), activation=1)


def test_non_array_bias_is_a_type_error():
    refuse(TypeError, "bias: expected a CUDA array", cai(GOOD_A), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2), bias=[1.0])


@pytest.mark.parametrize("shape", [(5,), (4,), (6, 1), (2, 6), (1, 1, 6)])
def test_bias_that_is_not_a_vector_of_out_is_a_value_error(shape):
    refuse(ValueError, "bias: ", cai(GOOD_A), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2), bias=cai(shape, 3))


def test_bias_of_another_dtype_than_out_is_a_type_error():
    refuse(TypeError, "bias: dtype fp16 differs from out's fp32", cai(GOOD_A), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2),
           bias=cai((6,), 3, typestr="<f2"))


def test_strided_bias_is_a_value_error():
    refuse(ValueError, "bias: stride 2 along its 6 values", cai(GOOD_A), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2),
           bias=cai((6,), 3, strides_el=[2]))


@pytest.mark.parametrize("shape,activation", [((6,), "gelu"), ((1, 6), "silu"), ((4, 1), "relu"), ((6,), None)])
def test_vector_bias_and_activation_pass_every_rule_before_cuda(shape, activation):
    # Every argument rule passes: the call gets as far as CUDA (which this machine may not have).
    with pytest.raises(Exception) as info:
        tessel.gemm(cai(GOOD_A), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2), bias=cai(shape, 3), activation=activation)
    assert not str(info.value).startswith(("bias:", "activation:")), str(info.value)


def test_stream_of_the_wrong_type_is_a_type_error():
    refuse(TypeError, "stream: expected a CUDA stream handle (int) or a stream object", cai(GOOD_A), cai(GOOD_B, 1),
           out=cai(GOOD_OUT, 2), stream="default")


def test_negative_stream_is_a_value_error():
    refuse(ValueError, "stream: -1 is not a CUDA stream handle", cai(GOOD_A), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2),
           stream=-1)


def test_out_none_for_an_array_library_tessel_cannot_allocate_with_is_a_type_error():
    refuse(TypeError, "out: tessel.gemm allocates its result only for torch tensors and CuPy arrays", cai(GOOD_A),
           cai(GOOD_B, 1))


def test_out_none_still_reports_the_inputs_own_errors_first():
    refuse(ValueError, "b: has 6 rows, but a has 5 columns", cai(GOOD_A), cai((6, 6), 1))
    refuse(ValueError, "a: has 1 dimension", cai((5,)), cai(GOOD_B, 1))


# ---- devices -----------------------------------------------------------------------------------------


def test_cpu_dlpack_array_is_a_value_error():
    refuse(ValueError, "a: lives on DLPack device type 1 (CPU); tessel needs CUDA device memory",
           dl(GOOD_A, 0, device=(1, 0)), dl(GOOD_B, 1), out=dl(GOOD_OUT, 2))


def test_numpy_array_is_refused_as_cpu_memory():
    np = pytest.importorskip("numpy")
    a = np.ones(GOOD_A, dtype=np.float32)
    refuse(ValueError, "a: lives on DLPack device type 1 (CPU)", a, cai(GOOD_B, 1), out=cai(GOOD_OUT, 2))


def test_operands_on_two_devices_are_a_value_error():
    refuse(ValueError, "b: is on CUDA device 1, but a is on device 0; all operands must be on one device",
           dl(GOOD_A, 0, device=(2, 0)), dl(GOOD_B, 1, device=(2, 1)), out=dl(GOOD_OUT, 2, device=(2, 0)))


def test_dlpack_capsules_are_released_when_a_call_is_refused():
    a, b, out = dl(GOOD_A, 0), dl((6, 6), 1), dl(GOOD_OUT, 2)
    refuse(ValueError, "b: has 6 rows", a, b, out=out)
    assert (a.released, b.released, out.released) == (1, 1, 1)


# ---- reaching CUDA -------------------------------------------------------------------------------------


def test_dlpack_producers_are_asked_for_the_calls_stream():
    # M = 0: nothing to compute, so even a GPU machine launches nothing on the made-up pointers.
    a, b, out = dl((0, 5), 0), dl(GOOD_B, 1), dl((0, 6), 2)
    for stream, asked in ((None, 1), (0, 1), (7, 7)):  # the default is the legacy stream, asked for as 1
        try:
            tessel.gemm(a, b, out=out, stream=stream)
        except RuntimeError as e:  # no driver: making device 0 current fails
            assert "cuda" in str(e).lower()
        assert a.streams[-1] == b.streams[-1] == out.streams[-1] == asked
    assert a.released == len(a.streams)


@pytest.mark.skipif(tessel.device_count() > 0, reason="checks the failure on a machine without a CUDA driver or device")
def test_without_a_gpu_a_valid_call_is_a_runtime_error_with_cudas_text():
    with pytest.raises(RuntimeError) as info:
        tessel.gemm(cai(GOOD_A), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2))
    assert "a: cudaPointerGetAttributes: cuda" in str(info.value)


@pytest.mark.skipif(tessel.device_count() == 0, reason="needs a CUDA device to look the pointer up")
def test_made_up_pointer_is_not_cuda_memory():
    refuse(ValueError, "is not CUDA memory", cai(GOOD_A), cai(GOOD_B, 1), out=cai(GOOD_OUT, 2))
