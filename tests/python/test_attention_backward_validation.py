"""tessel.attention_backward's argument rules, with fake arrays: every refusal is the documented
exception (TypeError for a dtype or an argument's type, ValueError for a shape, a stride, a device
or a rule) and its message is the C ABI's or the host API validator's reason, starting with the
argument's name. No GPU or torch needed: every rule is checked before the first CUDA call (the
tests marked reaches_cuda go as far as CUDA on purpose, on machines without a GPU only)."""
import pytest

import tessel
from fake_arrays import CAI, DLPack, address

B, S_Q, S_K, H, H_KV, D = 2, 37, 50, 8, 2, 128

reaches_cuda = pytest.mark.skipif(tessel.device_count() > 0,
                                  reason="passes every rule and would launch on made-up pointers: no-GPU machines only")

# operand slots: distinct made-up addresses
Q, K, V, OUT, DOUT, LSE, CU_Q, CU_K, DQ, DK, DV = range(11)


def dl(shape, i, dtype="bfloat16", **kw):
    return DLPack(shape, dtype=dtype, ptr=address(i), **kw)


def problem(d=D, d_v=None, dtype="bfloat16", **over):
    """Fake forward tensors, dout and the three gradients of a dense problem, as keyword arguments
    of tessel.attention_backward."""
    d_v = d if d_v is None else d_v
    args = {
        "q": dl((B, S_Q, H, d), Q, dtype), "k": dl((B, S_K, H_KV, d), K, dtype), "v": dl((B, S_K, H_KV, d_v), V, dtype),
        "out": dl((B, S_Q, H, d_v), OUT, dtype), "dout": dl((B, S_Q, H, d_v), DOUT, dtype),
        "lse": dl((B, H, S_Q), LSE, "float32"),
        "dq": dl((B, S_Q, H, d), DQ, dtype), "dk": dl((B, S_K, H_KV, d), DK, dtype), "dv": dl((B, S_K, H_KV, d_v), DV, dtype),
    }
    args.update(over)
    return args


def varlen(batch=3, total_q=100, total_k=120, **over):
    """Fake packed tensors with int32 offsets."""
    args = {
        "q": dl((total_q, H, D), Q), "k": dl((total_k, H_KV, D), K), "v": dl((total_k, H_KV, D), V),
        "out": dl((total_q, H, D), OUT), "dout": dl((total_q, H, D), DOUT), "lse": dl((H, total_q), LSE, "float32"),
        "dq": dl((total_q, H, D), DQ), "dk": dl((total_k, H_KV, D), DK), "dv": dl((total_k, H_KV, D), DV),
        "cu_seqlens_q": dl((batch + 1,), CU_Q, "int32"), "cu_seqlens_k": dl((batch + 1,), CU_K, "int32"),
    }
    args.update(over)
    return args


def without(args, *names):
    return {n: a for n, a in args.items() if n not in names}


def call(**kwargs):
    args = dict(kwargs)
    positional = [args.pop(n) for n in ("q", "k", "v", "out", "dout", "lse")]
    return tessel.attention_backward(*positional, **args)


def refuse(exc, starts, **kwargs):
    """tessel.attention_backward(**kwargs) raises exc whose message starts with `starts`."""
    with pytest.raises(exc) as info:
        call(**kwargs)
    msg = str(info.value)
    assert msg.startswith(starts), f"expected {starts!r} at the start of {msg!r}"
    return msg


def test_module_exports_attention_backward():
    assert callable(tessel.attention_backward) and "attention_backward" in tessel.__all__
    assert "attention_backward_kernels" in tessel.__all__
    kernels = tessel.attention_backward_kernels()
    assert kernels and all(k["name"].startswith(("sm80_attention_bwd_", "sm90_attention_bwd_")) for k in kernels)
    for k in kernels:
        assert isinstance(k["description"], str) and k["min_cc"] == int(k["name"][2:4])
    assert {"sm90_attention_bwd_bf16_d128", "sm80_attention_bwd_bf16_d128"} <= {k["name"] for k in kernels}
    forward = {k["name"] for k in tessel.attention_kernels()}
    assert not forward & {k["name"] for k in kernels}


# ---- what the arguments are ----------------------------------------------------------------------


@pytest.mark.parametrize("which", ["q", "k", "v", "out", "dout", "lse", "dq", "dk", "dv"])
def test_non_array_is_a_type_error_naming_the_argument(which):
    args = problem()
    args[which] = [[1.0, 2.0]]
    assert "list" in refuse(TypeError, f"{which}: expected a CUDA array", **args)


def test_lse_is_required():
    refuse(TypeError, "lse: expected a CUDA array", **problem(lse=None))


def test_gradients_of_another_dtype_are_a_type_error():
    refuse(TypeError, "dout: fp16 differs from q's bf16; the gradients share the forward's dtype",
           **problem(dout=dl((B, S_Q, H, D), DOUT, "float16")))
    refuse(TypeError, "dq: fp32 differs from q's bf16", **problem(dq=dl((B, S_Q, H, D), DQ, "float32")))
    refuse(TypeError, "dv: fp16 differs from q's bf16", **problem(dv=dl((B, S_K, H_KV, D), DV, "float16")))


def test_forward_tensors_keep_the_forwards_rules():
    refuse(TypeError, "q: fp32 is not supported; attention takes fp16 and bf16", **problem(dtype="float32"))
    refuse(TypeError, "out: fp16 differs from q's bf16", **problem(out=dl((B, S_Q, H, D), OUT, "float16")))
    refuse(TypeError, "lse: bf16 is not fp32; LSE is fp32", **problem(lse=dl((B, H, S_Q), LSE)))
    refuse(ValueError, "k: batch 3 differs from q's 2", **problem(k=dl((3, S_K, H_KV, D), K)))
    refuse(ValueError, "lse: shape (2, 37, 8) is not (2, 8, 37), [B, H, S_q] from q",
           **problem(lse=dl((B, S_Q, H), LSE, "float32")))


# ---- shapes --------------------------------------------------------------------------------------


def test_gradients_take_the_shape_of_what_they_are_the_gradient_of():
    refuse(ValueError, "dout: shape (2, 37, 8, 64) is not out's (2, 37, 8, 128); dout is shaped like out",
           **problem(dout=dl((B, S_Q, H, 64), DOUT)))
    refuse(ValueError, "dq: shape (2, 36, 8, 128) is not q's (2, 37, 8, 128)", **problem(dq=dl((B, 36, H, D), DQ)))
    refuse(ValueError, "dk: shape (2, 50, 8, 128) is not k's (2, 50, 2, 128)", **problem(dk=dl((B, S_K, H, D), DK)))
    refuse(ValueError, "dv: shape (2, 50, 2) is not v's (2, 50, 2, 128)", **problem(dv=dl((B, S_K, H_KV), DV)))


def test_the_validators_rules_name_the_argument():
    refuse(ValueError, "heads: 8 is not a multiple of kv_heads 3",
           **problem(k=dl((B, S_K, 3, D), K), v=dl((B, S_K, 3, D), V), dk=dl((B, S_K, 3, D), DK),
                     dv=dl((B, S_K, 3, D), DV)))
    refuse(ValueError, "head_dim: 80 is not supported", **problem(d=80))
    refuse(ValueError, "head_dim_v: 64 with head_dim 128 is not supported", **problem(d_v=64))
    refuse(ValueError, "window_right: 2 with causal contradicts it", **problem(), causal=True, window=(-1, 2))
    refuse(ValueError, "seqlen_k: 2147483648 is above 2^31 - 1",
           **problem(k=dl((B, 2**31, H_KV, D), K), v=dl((B, 2**31, H_KV, D), V), dk=dl((B, 2**31, H_KV, D), DK),
                     dv=dl((B, 2**31, H_KV, D), DV)))


# ---- strides -------------------------------------------------------------------------------------


def test_gradient_strides():
    msg = refuse(ValueError, "dq: the last dimension's stride is 2",
                 **problem(dq=dl((B, S_Q, H, D), DQ, strides=(S_Q * H * D * 2, H * D * 2, D * 2, 2))))
    assert "(shape (2, 37, 8, 128), strides (75776, 2048, 256, 2))" in msg
    refuse(ValueError, "dk: stride -256 of dimension 1 is negative",
           **problem(dk=dl((B, S_K, H_KV, D), DK, strides=(S_K * H_KV * D, -H_KV * D, D, 1))))
    refuse(ValueError, "dv: its elements overlap",
           **problem(dv=dl((B, S_K, H_KV, D), DV, strides=(S_K * H_KV * D, H_KV * D, 64, 1))))
    refuse(ValueError, "dq.head_stride: 132 is not a multiple of 8 elements (16 bytes)",
           **problem(dq=dl((B, S_Q, H, D), DQ, strides=(S_Q * H * 136, H * 136, 132, 1))))
    refuse(ValueError, "dout.row_stride: 1028 is not a multiple of 8 elements",
           **problem(dout=dl((B, S_Q, H, D), DOUT, strides=(S_Q * 1032, 1028, D, 1))))
    refuse(ValueError, "dout: the pointer is not 16-byte aligned",
           **problem(dout=DLPack((B, S_Q, H, D), "bfloat16", ptr=address(DOUT) + 8)))


@reaches_cuda
def test_read_tensors_may_repeat_elements():
    # dout broadcast over the batch and heads (stride 0), out and lse likewise: read, never written
    args = problem(dout=dl((B, S_Q, H, D), DOUT, strides=(0, D, 0, 1)), out=dl((B, S_Q, H, D), OUT, strides=(0, H * D, D, 1)),
                   lse=dl((B, H, S_Q), LSE, "float32", strides=(0, S_Q, 1)))
    with pytest.raises(RuntimeError):  # as far as CUDA
        call(**args)


@reaches_cuda
def test_transposed_bhsd_views_pass_the_rules():
    def view(shape, i):
        b, s, h, d = shape
        return dl(shape, i, strides=(h * s * d, d, s * d, 1))
    args = problem(q=view((B, S_Q, H, D), Q), dout=view((B, S_Q, H, D), DOUT), dq=view((B, S_Q, H, D), DQ),
                   dk=view((B, S_K, H_KV, D), DK))
    with pytest.raises(RuntimeError):  # as far as CUDA
        call(**args)


# ---- outputs -------------------------------------------------------------------------------------


def test_a_gradient_over_an_input_or_another_gradient_is_a_value_error():
    refuse(ValueError, "dq: starts at the same address as q; the result cannot overwrite an input it reads",
           **problem(dq=dl((B, S_Q, H, D), Q)))
    refuse(ValueError, "dv: starts at the same address as dout", **problem(dv=dl((B, S_K, H_KV, D), DOUT)))
    refuse(ValueError, "dk: starts at the same address as dq; each gradient needs its own memory",
           **problem(dk=dl((B, S_K, H_KV, D), DQ)))


def test_read_only_gradient_is_a_value_error():
    f2 = {n: CAI(a.shape, "<f4" if n == "lse" else "<f2", ptr=a.ptr) for n, a in problem().items()}
    f2["dk"] = CAI((B, S_K, H_KV, D), "<f2", ptr=address(DK), readonly=True)
    refuse(ValueError, "dk: is read-only", **f2)


def test_gradients_left_none_for_an_array_library_tessel_cannot_allocate_with_are_a_type_error():
    refuse(TypeError, "dq: tessel.attention_backward allocates its result only for torch tensors and CuPy arrays",
           **without(problem(), "dq", "dk", "dv"))
    refuse(TypeError, "dv: tessel.attention_backward allocates its result only", **without(problem(), "dv"))


def test_gradients_left_none_still_report_the_inputs_own_errors_first():
    refuse(ValueError, "dout: shape (2, 37, 8, 64) is not out's",
           **without(problem(dout=dl((B, S_Q, H, 64), DOUT)), "dq", "dk", "dv"))
    refuse(ValueError, "head_dim: 80 is not supported", **without(problem(d=80), "dq"))


# ---- the mask and the scalars --------------------------------------------------------------------


def test_scalar_rules_are_the_forwards():
    refuse(ValueError, "softmax_scale: 0 is not a scale; pass None", **problem(), softmax_scale=0.0)
    refuse(TypeError, "causal: expected a bool, got <class 'str'>", **problem(), causal="yes")
    refuse(TypeError, "window: expected (left, right)", **problem(), window="left")
    refuse(ValueError, "align: 'center' is neither 'bottom-right'", **problem(), align="center")
    refuse(ValueError, "softcap: ", **problem(), softcap=-1.0)
    refuse(ValueError, "max_seqlen_q: 5 is given without cu_seqlens_q", **problem(), max_seqlen_q=5)


def test_deterministic_is_a_bool():
    refuse(TypeError, "deterministic: expected a bool, got <class 'str'>", **problem(), deterministic="yes")


def test_kernel_names_a_backward_kernel():
    refuse(TypeError, "kernel: expected a kernel name (str; tessel.attention_backward_kernels() lists them)",
           **problem(), kernel=3)
    forward = tessel.attention_kernels()[0]["name"]
    refuse(ValueError, f"kernel: '{forward}' is not a compiled attention-backward kernel", **problem(), kernel=forward)


def test_stream_rules():
    refuse(TypeError, "stream: expected a CUDA stream handle", **problem(), stream="default")


# ---- variable-length batches ---------------------------------------------------------------------


def test_varlen_gradients_are_packed_like_their_tensors():
    refuse(ValueError, "dq: shape (1, 100, 8, 128) is not q's (100, 8, 128)", **varlen(dq=dl((1, 100, H, D), DQ)))
    refuse(ValueError, "lse: shape (8, 99) is not (8, 100), [H, total_q] from q", **varlen(lse=dl((H, 99), LSE, "float32")))
    refuse(ValueError, "cu_seqlens_k: missing, but cu_seqlens_q is given", **without(varlen(), "cu_seqlens_k"))


@reaches_cuda
def test_varlen_call_passes_the_rules():
    with pytest.raises(RuntimeError):  # as far as CUDA
        call(**varlen(), max_seqlen_q=40, max_seqlen_k=64, causal=True, deterministic=True)


# ---- devices and DLPack --------------------------------------------------------------------------


def test_cpu_gradient_is_a_value_error():
    refuse(ValueError, "dv: lives on DLPack device type 1 (CPU); tessel needs CUDA device memory",
           **problem(dv=dl((B, S_K, H_KV, D), DV, device=(1, 0))))


def test_gradient_on_another_device_is_a_value_error():
    refuse(ValueError, "dk: is on CUDA device 1, but q is on device 0; all operands must be on one device",
           **problem(dk=dl((B, S_K, H_KV, D), DK, device=(2, 1))))


def test_dlpack_capsules_are_released_when_a_call_is_refused():
    args = varlen(dk=dl((120, H_KV, 64), DK))
    refuse(ValueError, "dk: shape (120, 2, 64) is not k's (120, 2, 128)", **args)
    for a in args.values():
        assert a.released == len(a.streams) == 1


def test_empty_batch_launches_nothing_and_asks_for_the_calls_stream():
    # B = 0: nothing to compute, so even a GPU machine launches nothing on the made-up pointers.
    args = {n: DLPack((0, *a.shape[1:]), "float32" if n == "lse" else "bfloat16", ptr=a.ptr)
            for n, a in problem().items()}
    for stream, asked in ((None, 1), (7, 7)):  # the default is the legacy stream, asked for as 1
        try:
            result = call(**args, stream=stream)
            assert result == (args["dq"], args["dk"], args["dv"])
        except RuntimeError as e:  # no driver: making device 0 current fails
            assert "cuda" in str(e).lower()
        assert all(a.streams[-1] == asked for a in args.values())


@reaches_cuda
@pytest.mark.parametrize("deterministic", [False, True])
def test_without_a_gpu_a_valid_call_is_a_runtime_error_with_cudas_text(deterministic):
    with pytest.raises(RuntimeError) as info:
        call(**problem(), causal=True, window=(16, -1), softcap=30.0, deterministic=deterministic)
    assert "cuda" in str(info.value).lower()
