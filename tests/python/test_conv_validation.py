"""tessel.conv, conv_dgrad and conv_wgrad's argument rules, with fake arrays: every refusal is the
documented exception (TypeError for a dtype or an argument's type, ValueError for a shape, a
stride, a device or a rule) and its message is the C ABI's or the host API validator's reason,
starting with the argument's name. No GPU or torch needed: every rule is checked before the first
CUDA call (the tests marked reaches_cuda get that far on purpose)."""
import math

import pytest

import tessel
from fake_arrays import CAI, DLPack, address

N, H, W, C, K, R, S = 2, 9, 11, 33, 65, 3, 3  # padding 1: P = 9, Q = 11

# A call that passes every rule reaches CUDA; with made-up pointers only a machine without a GPU
# may let it (there the first CUDA call fails with RuntimeError).
reaches_cuda = pytest.mark.skipif(tessel.device_count() > 0,
                                  reason="passes every rule and would launch on made-up pointers: no-GPU machines only")


def dl(shape, i, dtype="bfloat16", **kw):
    return DLPack(shape, dtype=dtype, ptr=address(i), **kw)


def fprop(dtype="bfloat16", **over):
    """Fake x, w, out of a 2-D fprop with padding 1, as keyword arguments of tessel.conv."""
    args = {"x": dl((N, H, W, C), 0, dtype), "w": dl((K, R, S, C), 1, dtype), "out": dl((N, H, W, K), 2, dtype),
            "padding": 1}
    args.update(over)
    return args


def refuse(exc, starts, call=tessel.conv, **kwargs):
    """call(**kwargs) raises exc whose message starts with `starts`; x (or dy) and w are passed by
    position."""
    args = dict(kwargs)
    first = [args.pop(n) for n in ("x", "dy", "w") if n in args]
    with pytest.raises(exc) as info:
        call(*first, **args)
    msg = str(info.value)
    assert msg.startswith(starts), f"expected {starts!r} at the start of {msg!r}"
    return msg


def test_module_exports_the_convolutions():
    for name in ("conv", "conv_dgrad", "conv_wgrad", "conv_kernel", "conv_kernels"):
        assert callable(getattr(tessel, name)) and name in tessel.__all__
    kernels = tessel.conv_kernels()
    assert isinstance(kernels, list) and kernels
    for k in kernels:
        assert isinstance(k["name"], str) and isinstance(k["description"], str) and k["min_cc"] in (80, 90)
    assert tessel._C.C_API_VERSION >= 4  # convolution since version 4


# ---- what the arguments are ----------------------------------------------------------------------


@pytest.mark.parametrize("which", ["x", "w", "out", "residual", "bias"])
def test_non_array_is_a_type_error_naming_the_argument(which):
    args = fprop()
    args[which] = [[1.0, 2.0]]
    msg = refuse(TypeError, f"{which}: expected a CUDA array", **args)
    assert "list" in msg


def test_float32_operands_are_a_type_error():
    refuse(TypeError, "x: fp32 is not supported; convolution takes fp16 and bf16", **fprop("float32"))
    f4 = {n: CAI(a.shape, "<f4", ptr=a.ptr) for n, a in fprop().items() if n != "padding"}
    refuse(TypeError, "x: fp32 is not supported", **f4, padding=1)


def test_operands_of_two_dtypes_are_a_type_error():
    refuse(TypeError, "w: fp16 differs from x's bf16", **fprop(w=dl((K, R, S, C), 1, "float16")))
    refuse(TypeError, "out: fp16 differs from x's bf16", **fprop(out=dl((N, H, W, K), 2, "float16")))
    refuse(TypeError, "residual: fp16 differs from x's bf16",
           **fprop(residual=dl((N, H, W, K), 3, "float16")), beta=1.0)


def test_bias_that_is_not_float32_is_a_type_error():
    refuse(TypeError, "bias: bf16 is not fp32; the bias is fp32", **fprop(bias=dl((K,), 4, "bfloat16")))


@reaches_cuda
def test_fp16_through_cuda_array_interface_is_accepted_until_cuda():
    f2 = {n: CAI(a.shape, "<f2", ptr=a.ptr) for n, a in fprop().items() if n != "padding"}
    with pytest.raises(RuntimeError) as info:  # no driver
        tessel.conv(f2.pop("x"), f2.pop("w"), **f2, padding=1)
    assert "cuda" in str(info.value).lower()


# ---- shapes --------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,words", [((N, H * W, C), "3 dimensions"), ((1, N, 2, H, W, C), "6 dimensions")])
def test_x_that_is_not_4d_or_5d_is_a_value_error(shape, words):
    refuse(ValueError, f"x: has {words}; convolution activations are 4-D [N, H, W, C] (2-D) or 5-D [N, D, H, W, C]",
           **fprop(x=dl(shape, 0)))


def test_filters_of_another_rank_are_a_value_error():
    refuse(ValueError, "w: has 5 dimensions, but x has 4; a 2-D convolution's filters are 4-D [K, R, S, C/groups]",
           **fprop(w=dl((K, 1, R, S, C), 1)))


def test_shapes_that_disagree_are_value_errors():
    refuse(ValueError, "out: batch 3 differs from x's 2", **fprop(out=dl((3, H, W, K), 2)))
    refuse(ValueError, "out: has 64 channels, but w has 65 filters", **fprop(out=dl((N, H, W, 64), 2)))
    refuse(ValueError, "w: has 32 channels per filter, but x has 33 channels in 1 group",
           **fprop(w=dl((K, R, S, 32), 1)))
    refuse(ValueError, "out: shape (2, 9, 10, 65) is not (2, 9, 11, 65), [N, P, Q, K] from x, w and the padding",
           **fprop(out=dl((N, H, 10, K), 2)))
    refuse(ValueError, "bias: has 64 values, but out has 65 channels", **fprop(bias=dl((64,), 4, "float32")))
    refuse(ValueError, "residual: shape (2, 9, 11, 64) is not out's (2, 9, 11, 65)",
           **fprop(residual=dl((N, H, W, 64), 3)), beta=1.0)


def test_grouped_filters_take_c_over_groups_channels():
    refuse(ValueError, "w: has 33 channels per filter, but x has 33 channels in 3 groups",
           **fprop(), groups=3)
    refuse(ValueError, "c: 33 is not divisible by groups 2", **fprop(), groups=2)
    refuse(ValueError, "k: 65 is not divisible by groups 3", **fprop(w=dl((K, R, S, 11), 1)), groups=3)


def test_steps_that_leave_no_output_are_the_validators_value_error():
    refuse(ValueError, "r: the dilated filter extent dilation*(r-1)+1 = 30 exceeds the padded input h+2*pad = 11",
           **fprop(w=dl((K, 30, S, C), 1)))


@pytest.mark.parametrize("name,value,starts", [
    ("padding", -1, "pad_h: -1 is negative"),
    ("padding", (1, -2), "pad_w: -2 is negative"),
    ("stride", 0, "stride_h: 0 must be >= 1"),
    ("dilation", (1, 0), "dilation_w: 0 must be >= 1"),
    ("groups", 0, "groups: 0 must be >= 1"),
])
def test_step_rules_are_the_validators_value_error(name, value, starts):
    refuse(ValueError, starts, **{**fprop(), name: value})


@pytest.mark.parametrize("name,value,exc,starts", [
    ("padding", (1, 1, 1), ValueError, "padding: has 3 values, but the convolution is 2-D; give one int or 2"),
    ("stride", "2", TypeError, "stride: expected an int or 2 ints, got <class 'str'>"),
    ("dilation", (1, 1.5), TypeError, "dilation[1]: expected an int"),
    ("groups", 1.0, TypeError, "groups: expected an int"),
    ("activation", "tanh", ValueError, "activation: 'tanh' is not one of None, 'relu', 'gelu' (tanh form) or 'silu'"),
    ("activation", 1, TypeError, "activation: expected None, 'relu', 'gelu' or 'silu'"),
    ("alpha", "1", TypeError, "alpha: expected a real number"),
    ("alpha", math.nan, ValueError, "alpha: nan is not finite"),
    ("beta", 1.0, ValueError, "beta: 1 with no residual"),
    ("kernel", 3, TypeError, "kernel: expected a kernel name (str; tessel.conv_kernels() lists them)"),
    ("kernel", "nope", ValueError, "kernel: 'nope' is not a compiled convolution kernel"),
    ("stream", "default", TypeError, "stream: expected a CUDA stream handle"),
])
def test_scalar_argument_rules(name, value, exc, starts):
    refuse(exc, starts, **{**fprop(), name: value})


def test_3d_problems_take_three_steps():
    x, w, out = dl((N, 5, H, W, C), 0), dl((K, 3, R, S, C), 1), dl((N, 3, H, W, K), 2)
    refuse(ValueError, "out: shape (2, 3, 9, 11, 65) is not (2, 5, 9, 11, 65), [N, Z, P, Q, K]", x=x, w=w, out=out,
           padding=1)
    refuse(ValueError, "padding: has 2 values, but the convolution is 3-D", x=x, w=w, out=out, padding=(1, 1))
    refuse(ValueError, "out: shape (2, 3, 9, 11, 65) is not (2, 3, 5, 6, 65)", x=x, w=w, out=out,
           padding=(0, 1, 1), stride=(1, 2, 2))


# ---- strides -------------------------------------------------------------------------------------


def test_channels_not_contiguous_is_a_value_error():
    # an NCHW array seen as NHWC: channels H W apart
    x = dl((N, H, W, C), 0, strides=(C * H * W, W, 1, H * W))
    msg = refuse(ValueError, "x: the channel dimension's stride is 99", **fprop(x=x))
    assert "channels_last" in msg


def test_filter_taps_not_dense_is_a_value_error():
    w = dl((K, R, S, C), 1, strides=(R * S * 40, S * 40, 40, 1))  # channels padded to 40
    refuse(ValueError, "w: the taps of a filter are not dense", **fprop(w=w))


def test_overlapping_and_negative_strides_are_the_validators_value_error():
    refuse(ValueError, "out.stride_w: 32 is below 65",
           **fprop(out=dl((N, H, W, K), 2, strides=(H * W * K, W * K, 32, 1))))
    refuse(ValueError, "x.stride_h: -363 is negative",
           **fprop(x=dl((N, H, W, C), 0, strides=(H * W * C, -W * C, C, 1))))
    refuse(ValueError, "w.stride_k: 200 is below t*r*s*c/groups = 297",
           **fprop(w=dl((K, R, S, C), 1, strides=(200, S * C, C, 1))))


def test_residual_with_other_strides_than_out_is_a_value_error():
    res = dl((N, H, W, K), 3, strides=(H * W * 72, W * 72, 72, 1))
    refuse(ValueError, "residual: strides (7128, 792, 72, 1) differ from out's (6435, 715, 65, 1)",
           **fprop(residual=res), beta=1.0)


@reaches_cuda
def test_padded_pixels_and_filters_pass_the_rules():
    x = dl((N, H, W, C), 0, strides=(H * 16 * 40, 16 * 40, 40, 1))
    w = dl((K, R, S, C), 1, strides=(300, S * C, C, 1))
    with pytest.raises(RuntimeError):  # as far as CUDA
        tessel.conv(x, w, out=dl((N, H, W, K), 2), padding=1)


def test_unaligned_pointer_is_the_validators_value_error():
    refuse(ValueError, "x: the pointer is not 2-byte aligned", **fprop(x=DLPack((N, H, W, C), "bfloat16",
                                                                                ptr=address(0) + 1)))


def test_read_only_out_and_out_over_an_input_are_value_errors():
    f2 = {n: CAI(a.shape, "<f2", ptr=a.ptr) for n, a in fprop().items() if n != "padding"}
    f2["out"] = CAI((N, H, W, K), "<f2", ptr=address(2), readonly=True)
    refuse(ValueError, "out: is read-only", **f2, padding=1)
    refuse(ValueError, "out: starts at the same address as x", **fprop(out=dl((N, H, W, K), 0)))


# ---- dgrad and wgrad -----------------------------------------------------------------------------


def test_dgrad_names_dy_and_needs_x_shape_or_out():
    dy, w = dl((N, H, W, K), 0), dl((K, R, S, C), 1)
    refuse(ValueError, "x_shape: needed when out is None; tessel.conv_dgrad cannot tell dx's extents",
           call=tessel.conv_dgrad, dy=dy, w=w, padding=1)
    refuse(TypeError, "dy: fp16 differs from out's bf16", call=tessel.conv_dgrad, dy=dl((N, H, W, K), 0, "float16"),
           w=w, out=dl((N, H, W, C), 2), padding=1)
    refuse(ValueError, "dy: shape (2, 9, 11, 65) is not (2, 5, 6, 65)", call=tessel.conv_dgrad, dy=dy, w=w,
           out=dl((N, H, W, C), 2), padding=1, stride=2)
    refuse(ValueError, "x_shape: (2, 9, 11, 32) differs from out's (2, 9, 11, 33)", call=tessel.conv_dgrad, dy=dy,
           w=w, out=dl((N, H, W, C), 2), x_shape=(N, H, W, 32), padding=1)
    refuse(ValueError, "bias: has 65 values, but out has 33 channels", call=tessel.conv_dgrad, dy=dy, w=w,
           out=dl((N, H, W, C), 2), bias=dl((K,), 4, "float32"), padding=1)
    refuse(TypeError, "out: tessel.conv_dgrad allocates its result only for torch tensors and CuPy arrays",
           call=tessel.conv_dgrad, dy=dy, w=w, x_shape=(N, H, W, C), padding=1)
    refuse(ValueError, "w: has 33 channels per filter, but out has 32 channels", call=tessel.conv_dgrad, dy=dy, w=w,
           x_shape=(N, H, W, 32), padding=1)


def test_wgrad_names_dy_and_takes_no_bias():
    x, dy = dl((N, H, W, C), 0), dl((N, H, W, K), 1)
    with pytest.raises(ValueError, match="^w_shape: needed when out is None"):
        tessel.conv_wgrad(x, dy, padding=1)
    with pytest.raises(ValueError, match=r"^dy: has 64 channels, but out has 65 filters"):
        tessel.conv_wgrad(x, dl((N, H, W, 64), 1), out=dl((K, R, S, C), 2), padding=1)
    with pytest.raises(TypeError, match="bias"):  # not an argument of conv_wgrad
        tessel.conv_wgrad(x, dy, out=dl((K, R, S, C), 2), padding=1, bias=dl((K,), 4, "float32"))
    with pytest.raises(ValueError, match="^bias: wgrad takes none"):
        tessel._C.conv("wgrad", x, dy, dl((K, R, S, C), 2), None, dl((K,), 4, "float32"), None, 1, 1, 1, 1, None,
                       1.0, 0.0, None, None)
    with pytest.raises(ValueError, match=r"^out: the taps of a filter are not dense"):
        tessel.conv_wgrad(x, dy, out=dl((K, R, S, C), 2, strides=(R * S * 40, S * 40, 40, 1)), padding=1)


def test_op_and_conv_kernel_rules():
    with pytest.raises(ValueError, match="^op: 'bprop' is not 'fprop', 'dgrad' or 'wgrad'"):
        tessel.conv_kernel("bprop", dl((N, H, W, C), 0), dl((K, R, S, C), 1))
    with pytest.raises(TypeError, match="^pad: not an argument of tessel.conv_kernel"):
        tessel.conv_kernel("fprop", dl((N, H, W, C), 0), dl((K, R, S, C), 1), pad=1)
    with pytest.raises(ValueError, match="^groups: 0 must be >= 1"):
        tessel.conv_kernel("fprop", dl((N, H, W, C), 0), dl((K, R, S, C), 1), padding=1, groups=0)


# ---- devices and DLPack --------------------------------------------------------------------------


def test_cpu_array_is_a_value_error():
    refuse(ValueError, "x: lives on DLPack device type 1 (CPU); tessel needs CUDA device memory",
           **fprop(x=dl((N, H, W, C), 0, device=(1, 0))))


def test_bias_on_another_device_is_a_value_error():
    refuse(ValueError, "bias: is on CUDA device 1, but x is on device 0; all operands must be on one device",
           **fprop(bias=dl((K,), 4, "float32", device=(2, 1))))


def test_dlpack_capsules_are_released_when_a_call_is_refused():
    args = fprop(w=dl((K, R, S, 32), 1))
    refuse(ValueError, "w: has 32 channels per filter", **args)
    for name in ("x", "w", "out"):
        assert args[name].released == len(args[name].streams) == 1


def test_empty_batch_launches_nothing_and_asks_producers_for_the_calls_stream():
    # N = 0: nothing to compute, so even a GPU machine launches nothing on the made-up pointers.
    args = fprop(x=dl((0, H, W, C), 0), out=dl((0, H, W, K), 2))
    for stream, asked in ((None, 1), (0, 1), (7, 7)):
        try:
            tessel.conv(args["x"], args["w"], out=args["out"], padding=1, stream=stream)
        except RuntimeError as e:  # no driver: making device 0 current fails
            assert "cuda" in str(e).lower()
        assert all(args[n].streams[-1] == asked for n in ("x", "w", "out"))
