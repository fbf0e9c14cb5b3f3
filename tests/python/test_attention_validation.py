"""tessel.attention's argument rules, with fake arrays: every refusal is the documented exception
(TypeError for a dtype or an argument's type, ValueError for a shape, a stride, a device or a rule)
and its message is the C ABI's or the host API validator's reason, starting with the argument's
name. No GPU or torch needed: every rule is checked before the first CUDA call (the last tests
reach CUDA on purpose)."""
import math

import pytest

import tessel
from fake_arrays import CAI, DLPack, address

B, S_Q, S_K, H, H_KV, D = 2, 37, 50, 8, 2, 128

# A call that passes every rule reaches CUDA; with made-up pointers only a machine without a GPU
# may let it (there the first CUDA call fails with RuntimeError).
reaches_cuda = pytest.mark.skipif(tessel.device_count() > 0,
                                  reason="passes every rule and would launch on made-up pointers: no-GPU machines only")


def dl(shape, i, dtype="bfloat16", **kw):
    return DLPack(shape, dtype=dtype, ptr=address(i), **kw)


def packed_strides(shape):
    strides, n = [], 1
    for e in reversed(shape):
        strides.insert(0, n)
        n *= max(e, 1)
    return tuple(strides)


def problem(d=D, d_v=None, dtype="bfloat16", **over):
    """Fake q, k, v, out (and lse) of a dense problem, as keyword arguments of tessel.attention."""
    d_v = d if d_v is None else d_v
    args = {
        "q": dl((B, S_Q, H, d), 0, dtype),
        "k": dl((B, S_K, H_KV, d), 1, dtype),
        "v": dl((B, S_K, H_KV, d_v), 2, dtype),
        "out": dl((B, S_Q, H, d_v), 3, dtype),
    }
    args.update(over)
    return args


def varlen(batch=3, total_q=100, total_k=120, **over):
    """Fake packed q, k, v, out with int32 offsets."""
    args = {
        "q": dl((total_q, H, D), 0),
        "k": dl((total_k, H_KV, D), 1),
        "v": dl((total_k, H_KV, D), 2),
        "out": dl((total_q, H, D), 3),
        "cu_seqlens_q": dl((batch + 1,), 5, "int32"),
        "cu_seqlens_k": dl((batch + 1,), 6, "int32"),
    }
    args.update(over)
    return args


def without(args, *names):
    return {n: a for n, a in args.items() if n not in names}


def refuse(exc, starts, **kwargs):
    """tessel.attention(**kwargs) raises exc whose message starts with `starts`."""
    args = dict(kwargs)
    q, k, v = args.pop("q"), args.pop("k"), args.pop("v")
    with pytest.raises(exc) as info:
        tessel.attention(q, k, v, **args)
    msg = str(info.value)
    assert msg.startswith(starts), f"expected {starts!r} at the start of {msg!r}"
    return msg


def test_module_exports_attention():
    assert callable(tessel.attention) and "attention" in tessel.__all__
    kernels = tessel.attention_kernels()
    assert isinstance(kernels, list)
    for k in kernels:
        assert isinstance(k["name"], str) and isinstance(k["description"], str) and isinstance(k["min_cc"], int)


# ---- what the arguments are ----------------------------------------------------------------------


@pytest.mark.parametrize("which", ["q", "k", "v", "out", "lse", "cu_seqlens_q"])
def test_non_array_is_a_type_error_naming_the_argument(which):
    args = varlen() if which == "cu_seqlens_q" else problem()
    args[which] = [[1.0, 2.0]]
    msg = refuse(TypeError, f"{which}: expected a CUDA array", **args)
    assert "list" in msg


def test_float32_operands_are_a_type_error():
    refuse(TypeError, "q: fp32 is not supported; attention takes fp16 and bf16", **problem(dtype="float32"))


def test_float32_operands_through_cuda_array_interface_are_a_type_error():
    f4 = {n: CAI(a.shape, "<f4", ptr=a.ptr) for n, a in problem().items()}
    refuse(TypeError, "q: fp32 is not supported", **f4)


def test_fp8_operands_are_a_type_error():
    refuse(TypeError, "q: e4m3 is not supported", **problem(dtype="float8_e4m3fn"))


def test_int32_operand_is_a_type_error():
    refuse(TypeError, "v: dtype int32 is not supported; tessel takes float32", **problem(v=dl((B, S_K, H_KV, D), 2, "int32")))


def test_operands_of_two_dtypes_are_a_type_error():
    refuse(TypeError, "k: fp16 differs from q's bf16; q, k, v and out share one dtype",
           **problem(k=dl((B, S_K, H_KV, D), 1, "float16")))
    refuse(TypeError, "out: fp16 differs from q's bf16", **problem(out=dl((B, S_Q, H, D), 3, "float16")))


def test_fp16_through_cuda_array_interface_is_accepted_until_cuda():
    f2 = {n: CAI(a.shape, "<f2", ptr=a.ptr) for n, a in problem().items()}
    with pytest.raises((RuntimeError, ValueError)) as info:  # no driver / made-up pointers
        tessel.attention(f2.pop("q"), f2.pop("k"), f2.pop("v"), **f2)
    assert "cuda" in str(info.value).lower()


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_lse_that_is_not_float32_is_a_type_error(dtype):
    refuse(TypeError, f"lse: {'bf16' if dtype == 'bfloat16' else 'fp16'} is not fp32; LSE is fp32",
           **problem(lse=dl((B, H, S_Q), 4, dtype)))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
def test_offsets_that_are_not_int32_are_a_type_error(dtype):
    refuse(TypeError, f"cu_seqlens_k: dtype {dtype} is not supported; sequence offsets are int32",
           **varlen(cu_seqlens_k=dl((4,), 6, dtype)))


def test_offsets_through_cuda_array_interface_are_int32():
    refuse(TypeError, "cu_seqlens_q: dtype '<f4' (from __cuda_array_interface__) is not supported; sequence offsets "
                      "are int32 ('<i4')", **varlen(cu_seqlens_q=CAI((4,), "<f4", ptr=address(5))))


@reaches_cuda
def test_int32_offsets_through_cuda_array_interface_pass_the_rules():
    with pytest.raises(RuntimeError):  # as far as CUDA
        tessel.attention(**varlen(cu_seqlens_q=CAI((4,), "<i4", ptr=address(5))))


# ---- shapes --------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,words", [((), "0 dimensions"), ((B * S_Q, H, D), "3 dimensions"),
                                         ((1, B, S_Q, H, D), "5 dimensions")])
def test_q_that_is_not_4d_is_a_value_error(shape, words):
    refuse(ValueError, f"q: has {words}; attention operands are 4-D [B, S, H, D] (or packed 3-D [total, H, D] with "
                       "cu_seqlens_q and cu_seqlens_k)", **problem(q=dl(shape, 0)))


def test_batch_of_k_is_a_value_error():
    refuse(ValueError, "k: batch 3 differs from q's 2", **problem(k=dl((3, S_K, H_KV, D), 1)))


def test_head_dim_of_k_is_a_value_error():
    refuse(ValueError, "k: head dim 64 differs from q's 128; q and k share D", **problem(k=dl((B, S_K, H_KV, 64), 1)))


def test_v_that_does_not_match_k_is_a_value_error():
    refuse(ValueError, f"v: shape (2, 49, {H_KV}, {D}) does not match k's (2, 50, {H_KV}, {D})",
           **problem(v=dl((B, 49, H_KV, D), 2)))


def test_out_of_the_wrong_shape_is_a_value_error():
    refuse(ValueError, f"out: shape (2, 37, 8, 64) is not (2, 37, 8, {D}), [B, S_q, H, D_v] from q and v",
           **problem(out=dl((B, S_Q, H, 64), 3)))


def test_lse_of_the_wrong_shape_is_a_value_error():
    refuse(ValueError, "lse: shape (2, 37, 8) is not (2, 8, 37), [B, H, S_q] from q",
           **problem(lse=dl((B, S_Q, H), 4, "float32")))
    refuse(ValueError, "lse: has 2 dimensions; LSE is 3-D [B, H, S_q]", **problem(lse=dl((H, S_Q), 4, "float32")))


def test_heads_not_a_multiple_of_kv_heads_is_the_validators_value_error():
    refuse(ValueError, "heads: 8 is not a multiple of kv_heads 3", **problem(k=dl((B, S_K, 3, D), 1),
                                                                             v=dl((B, S_K, 3, D), 2)))


@pytest.mark.parametrize("d,d_v,starts", [(80, 80, "head_dim: 80 is not supported"),
                                          (32, 32, "head_dim: 32 is not supported"),
                                          (128, 64, "head_dim_v: 64 with head_dim 128 is not supported"),
                                          (192, 64, "head_dim_v: 64 with head_dim 192 is not supported")])
def test_unsupported_head_dims_are_the_validators_value_error(d, d_v, starts):
    msg = refuse(ValueError, starts, **problem(d=d, d_v=d_v))
    assert "(192,128)" in msg


@reaches_cuda
@pytest.mark.parametrize("d,d_v", [(64, 64), (96, 96), (128, 128), (192, 192), (256, 256), (192, 128)])
def test_supported_head_dims_pass_the_rules(d, d_v):
    with pytest.raises(RuntimeError):  # as far as CUDA
        tessel.attention(**problem(d=d, d_v=d_v))


def test_sequences_past_32_bits_are_not_supported():
    refuse(ValueError, "seqlen_k: 2147483648 is above 2^31 - 1", **problem(k=dl((B, 2**31, H_KV, D), 1),
                                                                           v=dl((B, 2**31, H_KV, D), 2)))


# ---- strides -------------------------------------------------------------------------------------


def test_last_dimension_not_contiguous_is_a_value_error():
    q = dl((B, S_Q, H, D), 0, strides=(S_Q * H * D * 2, H * D * 2, D * 2, 2))
    msg = refuse(ValueError, "q: the last dimension's stride is 2", **problem(q=q))
    assert "(shape (2, 37, 8, 128), strides (75776, 2048, 256, 2))" in msg


def test_negative_stride_is_a_value_error():
    k = dl((B, S_K, H_KV, D), 1, strides=(S_K * H_KV * D, -H_KV * D, D, 1))
    refuse(ValueError, "k: stride -256 of dimension 1 is negative", **problem(k=k))


def test_rows_not_16_byte_aligned_are_the_validators_value_error():
    q = dl((B, S_Q, H, D), 0, strides=(S_Q * H * (D + 4), H * (D + 4), D + 4, 1))
    refuse(ValueError, "q.head_stride: 132 is not a multiple of 8 elements (16 bytes)", **problem(q=q))
    out = dl((B, S_Q, H, D), 3, strides=(2 * S_Q * H * D, H * D + 4, D, 1))
    refuse(ValueError, "out.row_stride: 1028 is not a multiple of 8 elements", **problem(out=out))


def test_unaligned_pointer_is_the_validators_value_error():
    refuse(ValueError, "v: the pointer is not 16-byte aligned", **problem(v=DLPack((B, S_K, H_KV, D), "bfloat16",
                                                                                   ptr=address(2) + 8)))


@reaches_cuda
def test_transposed_bhsd_views_pass_the_rules():
    # [B, H, S, D] arrays seen as [B, S, H, D]: strides (H S D, D, S D, 1), read in place
    def view(shape, i):
        b, s, h, d = shape
        return dl(shape, i, strides=(h * s * d, d, s * d, 1))
    args = {"q": view((B, S_Q, H, D), 0), "k": view((B, S_K, H_KV, D), 1), "v": view((B, S_K, H_KV, D), 2),
            "out": view((B, S_Q, H, D), 3)}
    with pytest.raises(RuntimeError):  # as far as CUDA
        tessel.attention(**args)


def test_overlapping_out_is_a_value_error():
    out = dl((B, S_Q, H, D), 3, strides=(S_Q * H * D, H * D, 64, 1))
    refuse(ValueError, "out: its elements overlap", **problem(out=out))


def test_lse_rows_not_contiguous_are_a_value_error():
    refuse(ValueError, "lse: the last dimension's stride is 2",
           **problem(lse=dl((B, H, S_Q), 4, "float32", strides=(H * S_Q * 2, S_Q * 2, 2))))


def test_read_only_out_is_a_value_error():
    f2 = {n: CAI(a.shape, "<f2", ptr=a.ptr) for n, a in problem().items()}
    f2["out"] = CAI((B, S_Q, H, D), "<f2", ptr=address(3), readonly=True)
    refuse(ValueError, "out: is read-only", **f2)


def test_out_over_an_input_is_a_value_error():
    refuse(ValueError, "out: starts at the same address as q", **problem(out=dl((B, S_Q, H, D), 0)))
    refuse(ValueError, "lse: starts at the same address as out", **problem(lse=dl((B, H, S_Q), 3, "float32")))


# ---- the mask and the scalars --------------------------------------------------------------------


def test_softmax_scale_rules():
    refuse(ValueError, "softmax_scale: 0 is not a scale; pass None", **problem(), softmax_scale=0.0)
    refuse(ValueError, "softmax_scale: nan is not finite", **problem(), softmax_scale=math.nan)
    refuse(ValueError, "softmax_scale: inf is not finite", **problem(), softmax_scale=math.inf)
    refuse(TypeError, "softmax_scale: expected a real number, got <class 'str'>", **problem(), softmax_scale="0.1")


@pytest.mark.parametrize("cap", [-1.0, math.inf, math.nan])
def test_softcap_that_is_negative_or_not_finite_is_the_validators_value_error(cap):
    refuse(ValueError, "softcap: ", **problem(), softcap=cap)


def test_causal_with_a_right_window_is_the_validators_value_error():
    refuse(ValueError, "window_right: 2 with causal contradicts it (causal is window_right = 0)", **problem(),
           causal=True, window=(-1, 2))


@pytest.mark.parametrize("window,starts", [("left", "window: expected (left, right)"),
                                           ((1, 2, 3), "window: expected (left, right), two ints"),
                                           ((1.5, 2), "window[0] (left): expected an int"),
                                           ((1, None), "window[1] (right): expected an int")])
def test_window_that_is_not_two_ints_is_a_type_error(window, starts):
    refuse(TypeError, starts, **problem(), window=window)


def test_causal_that_is_not_a_bool_is_a_type_error():
    refuse(TypeError, "causal: expected a bool, got <class 'str'>", **problem(), causal="yes")
    refuse(TypeError, "return_lse: expected a bool", **problem(), return_lse="yes")


def test_align_rules():
    refuse(ValueError, "align: 'center' is neither 'bottom-right'", **problem(), align="center")
    refuse(TypeError, "align: expected 'bottom-right' or 'top-left'", **problem(), align=1)


def test_max_seqlen_without_offsets_is_a_value_error():
    refuse(ValueError, "max_seqlen_q: 5 is given without cu_seqlens_q", **problem(), max_seqlen_q=5)
    refuse(TypeError, "max_seqlen_k: expected an int, got <class 'str'>", **varlen(), max_seqlen_k="5")


def test_kernel_rules():
    refuse(TypeError, "kernel: expected a kernel name (str; tessel.attention_kernels() lists them)", **problem(),
           kernel=3)
    refuse(ValueError, "kernel: 'no_such_kernel' is not a compiled attention kernel", **problem(),
           kernel="no_such_kernel")


def test_stream_rules():
    refuse(TypeError, "stream: expected a CUDA stream handle", **problem(), stream="default")
    refuse(ValueError, "stream: -1 is not a CUDA stream handle", **problem(), stream=-1)


# ---- variable-length batches ---------------------------------------------------------------------


def test_one_offsets_array_without_the_other_is_a_value_error():
    refuse(ValueError, "cu_seqlens_k: missing, but cu_seqlens_q is given", **without(varlen(), "cu_seqlens_k"))
    refuse(ValueError, "cu_seqlens_q: missing, but cu_seqlens_k is given", **without(varlen(), "cu_seqlens_q"))


def test_4d_operands_with_offsets_are_a_value_error():
    refuse(ValueError, "q: has 4 dimensions; with cu_seqlens the operands are packed 3-D [total, H, D]",
           **varlen(q=dl((1, 100, H, D), 0)))


def test_offsets_rules():
    refuse(ValueError, "cu_seqlens_k: has 5 offsets, but cu_seqlens_q has 4; both hold B + 1",
           **varlen(cu_seqlens_k=dl((5,), 6, "int32")))
    refuse(ValueError, "cu_seqlens_q: is empty", **varlen(cu_seqlens_q=dl((0,), 5, "int32"),
                                                          cu_seqlens_k=dl((0,), 6, "int32")))
    refuse(ValueError, "cu_seqlens_q: has 2 dimensions; it is 1-D", **varlen(cu_seqlens_q=dl((2, 2), 5, "int32")))
    refuse(ValueError, "cu_seqlens_q: stride 2; the offsets must be contiguous",
           **varlen(cu_seqlens_q=dl((4,), 5, "int32", strides=(2,))))
    refuse(ValueError, "max_seqlen_q: -1 is negative", **varlen(), max_seqlen_q=-1)


def test_varlen_lse_is_h_by_total_q():
    refuse(ValueError, f"lse: shape ({H}, 99) is not ({H}, 100), [H, total_q] from q",
           **varlen(lse=dl((H, 99), 4, "float32")))
    refuse(ValueError, "lse: has 3 dimensions; LSE is 2-D [H, total_q] with cu_seqlens",
           **varlen(lse=dl((3, H, 100), 4, "float32")))


@reaches_cuda
def test_varlen_call_passes_the_rules():
    with pytest.raises(RuntimeError):  # as far as CUDA
        tessel.attention(**varlen(lse=dl((H, 100), 4, "float32")), max_seqlen_q=40, max_seqlen_k=64)


# ---- allocation, devices and DLPack --------------------------------------------------------------


def test_outputs_left_none_for_an_array_library_tessel_cannot_allocate_with_are_a_type_error():
    refuse(TypeError, "out: tessel.attention allocates its result only for torch tensors and CuPy arrays",
           **without(problem(), "out"))
    refuse(TypeError, "lse: tessel.attention allocates its result only for torch tensors and CuPy arrays",
           **problem(), return_lse=True)


def test_outputs_left_none_still_report_the_inputs_own_errors_first():
    refuse(ValueError, "k: batch 3 differs from q's 2", **without(problem(k=dl((3, S_K, H_KV, D), 1)), "out"),
           return_lse=True)
    refuse(ValueError, "head_dim: 80 is not supported", **without(problem(d=80), "out"))


def test_cpu_array_is_a_value_error():
    refuse(ValueError, "q: lives on DLPack device type 1 (CPU); tessel needs CUDA device memory",
           **problem(q=dl((B, S_Q, H, D), 0, device=(1, 0))))


def test_offsets_on_another_device_are_a_value_error():
    refuse(ValueError, "cu_seqlens_q: is on CUDA device 1, but q is on device 0; all operands must be on one device",
           **varlen(cu_seqlens_q=dl((4,), 5, "int32", device=(2, 1))))


def test_dlpack_capsules_are_released_when_a_call_is_refused():
    args = varlen(k=dl((120, H_KV, 64), 1))
    refuse(ValueError, "k: head dim 64 differs", **args)
    for a in args.values():
        assert a.released == len(a.streams) == 1


def test_dlpack_producers_are_asked_for_the_calls_stream():
    # B = 0: nothing to compute, so even a GPU machine launches nothing on the made-up pointers.
    args = {"q": dl((0, S_Q, H, D), 0), "k": dl((0, S_K, H_KV, D), 1), "v": dl((0, S_K, H_KV, D), 2),
            "out": dl((0, S_Q, H, D), 3), "lse": dl((0, H, S_Q), 4, "float32")}
    for stream, asked in ((None, 1), (0, 1), (7, 7)):  # the default is the legacy stream, asked for as 1
        try:
            tessel.attention(**args, stream=stream)
        except RuntimeError as e:  # no driver: making device 0 current fails
            assert "cuda" in str(e).lower()
        assert all(a.streams[-1] == asked for a in args.values())


@reaches_cuda
def test_without_a_gpu_a_valid_call_is_a_runtime_error_with_cudas_text():
    with pytest.raises(RuntimeError) as info:
        tessel.attention(**problem(lse=dl((B, H, S_Q), 4, "float32")), causal=True, window=(16, -1), softcap=30.0)
    assert "cuda" in str(info.value).lower()
