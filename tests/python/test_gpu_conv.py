"""tessel.conv, conv_dgrad and conv_wgrad with PyTorch on a GPU: results against torch's
convolution (F.conv2d / F.conv3d, torch.nn.grad.conv*_input / conv*_weight) on ragged shapes
(C = 3, C = 33 / K = 65, N = 1, H = W = 1, padding larger than the filter, strides, dilation,
groups, depthwise, 3-D), channels_last tensors read in place, the fused bias, activations and
alpha / beta / residual, fp16; and the tessel::conv custom op under torch.library.opcheck,
torch.compile(fullgraph=True) and CUDA-graph capture.

Each result is judged against a float32 reference (the same torch op on float32 copies, TF32 off):
max |out - ref| <= 2 max |torch - ref| + one ulp of the dtype at max |ref|, where torch is torch's
own low-precision result on the same inputs (the benchmark's rule). Inputs are random, outputs
poisoned with NaN before a call."""
import pytest

torch = pytest.importorskip("torch", reason="the GPU tests of the torch layer need PyTorch")

import tessel  # noqa: E402
import tessel.torch  # noqa: E402,F401
from cuda_streams import capture  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

BF16, FP16 = torch.bfloat16, torch.float16
ULP = {BF16: 2.0**-7, FP16: 2.0**-10}  # one unit in the last place at 1.0
F = torch.nn.functional


@pytest.fixture(autouse=True)
def _seed_and_no_tf32():
    torch.manual_seed(1234)
    allow = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False  # the float32 references
    yield
    torch.backends.cudnn.allow_tf32 = allow


def fmt(dims):
    return torch.channels_last_3d if dims == 3 else torch.channels_last


def rand(*shape, dtype=BF16):
    """uniform(-1, 1) in channels_last (channels_last_3d) memory format for 4-D (5-D) shapes."""
    t = (torch.rand(shape, device="cuda") * 2 - 1).to(dtype)
    return t.contiguous(memory_format=fmt(len(shape) - 2)) if len(shape) in (4, 5) else t


def poisoned(shape, dtype, dims):
    return torch.full(shape, float("nan"), dtype=dtype, device="cuda").contiguous(memory_format=fmt(dims))


def last(t):
    """The channels-last view tessel reads: [N, C, *sp] -> [N, *sp, C]."""
    return t.movedim(1, -1)


ACT = {None: lambda v: v, "relu": F.relu, "gelu": lambda v: F.gelu(v, approximate="tanh"), "silu": F.silu}


def torch_pass(op, x, w, dy, steps):
    d = x.dim() - 2
    if op == "fprop":
        return (F.conv3d if d == 3 else F.conv2d)(x, w, None, **steps)
    if op == "dgrad":
        return (torch.nn.grad.conv3d_input if d == 3 else torch.nn.grad.conv2d_input)(x.shape, w, dy, **steps)
    return (torch.nn.grad.conv3d_weight if d == 3 else torch.nn.grad.conv2d_weight)(x, w.shape, dy, **steps)


def check(out, op, x, w, dy, steps, bias=None, activation=None, alpha=1.0, beta=0.0, residual=None):
    """out (torch layout) against act(alpha * pass + beta * residual + bias), judged by the rule above."""
    def epilogue(acc, dtype):
        v = alpha * acc.float()
        if residual is not None:
            v = v + beta * residual.float()
        if bias is not None:
            v = v + bias.float().view(1, -1, *([1] * (acc.dim() - 2)))
        return ACT[activation](v).to(dtype).float() if dtype != torch.float32 else ACT[activation](v)

    ref = epilogue(torch_pass(op, x.float(), w.float(), dy.float(), steps), torch.float32)
    low = epilogue(torch_pass(op, x, w, dy, steps), x.dtype)
    assert out.shape == ref.shape and out.dtype == x.dtype
    assert torch.isfinite(out).all(), "non-finite output where the reference is finite"
    scale = float(ref.abs().max()) if ref.numel() else 0.0
    err = float((out.float() - ref).abs().max()) if ref.numel() else 0.0
    bound = 2 * float((low - ref).abs().max()) + ULP[x.dtype] * max(scale, 1e-3) if ref.numel() else 0.0
    assert err <= bound, f"{op}: max |out - ref| = {err:.3g} > {bound:.3g}"


# (N, C, H, W, K, R, S, stride, padding, dilation, groups, dtype)
CASES = [
    (2, 64, 16, 16, 64, 3, 3, 1, 1, 1, 1, BF16),
    (2, 3, 31, 29, 64, 7, 7, 2, 3, 1, 1, BF16),  # the stem's shape, ragged
    (3, 33, 17, 19, 65, 3, 3, 1, 1, 1, 1, BF16),  # odd channel counts
    (1, 9, 1, 1, 5, 1, 1, 1, 0, 1, 1, BF16),  # N = 1, H = W = 1
    (2, 16, 5, 6, 24, 3, 3, 1, 4, 1, 1, BF16),  # padding larger than the filter
    (2, 32, 20, 20, 16, 3, 3, 3, 0, 1, 1, BF16),  # stride larger than the filter
    (2, 16, 23, 21, 32, 3, 3, 1, 2, 2, 1, FP16),  # dilation
    (2, 64, 14, 14, 256, 1, 1, 1, 0, 1, 1, BF16),  # 1x1 (the GEMM route)
    (2, 64, 14, 14, 128, 1, 1, 2, 0, 1, 1, FP16),  # 1x1 stride 2
    (2, 32, 12, 12, 48, 3, 3, 1, 1, 1, 4, BF16),  # groups
    (2, 128, 13, 13, 128, 3, 3, 1, 1, 1, 128, BF16),  # depthwise
    (2, 7, 9, 9, 5, 2, 3, 1, (1, 0), 1, 1, FP16),  # C = 7, K = 5, per-dimension padding
]


def _steps(stride, padding, dilation, groups):
    return {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}


def _tensors(case):
    n, c, h, w, k, r, s, stride, padding, dilation, groups, dtype = case
    x, wt = rand(n, c, h, w, dtype=dtype), rand(k, c // groups, r, s, dtype=dtype)
    steps = _steps(stride, padding, dilation, groups)
    y_shape = F.conv2d(x.float()[:1, :, :, :], wt.float(), None, **steps).shape[2:]
    dy = rand(n, k, *y_shape, dtype=dtype)
    return x, wt, dy, steps


@pytest.mark.parametrize("op", ["fprop", "dgrad", "wgrad"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_each_pass_matches_torch(op, case):
    x, w, dy, steps = _tensors(CASES[case])
    target = {"fprop": dy, "dgrad": x, "wgrad": w}[op]
    out = poisoned(target.shape, x.dtype, x.dim() - 2)
    if op == "fprop":
        r = tessel.conv(last(x), last(w), out=last(out), **steps)
    elif op == "dgrad":
        r = tessel.conv_dgrad(last(dy), last(w), out=last(out), **steps)
    else:
        r = tessel.conv_wgrad(last(x), last(dy), out=last(out), **steps)
    assert r.data_ptr() == out.data_ptr()
    torch.cuda.synchronize()
    check(out, op, x, w, dy, steps)


@pytest.mark.parametrize("activation", [None, "relu", "gelu", "silu"])
def test_fprop_epilogue_bias_activation_and_residual(activation):
    x, w, dy, steps = _tensors(CASES[2])
    bias = torch.randn(w.shape[0], device="cuda")
    residual = rand(*dy.shape)
    out = poisoned(dy.shape, x.dtype, 2)
    tessel.conv(last(x), last(w), out=last(out), bias=bias, activation=activation, alpha=0.5, beta=2.0,
                residual=last(residual), **steps)
    check(out, "fprop", x, w, dy, steps, bias=bias, activation=activation, alpha=0.5, beta=2.0, residual=residual)


def test_residual_may_be_out_itself():
    x, w, dy, steps = _tensors(CASES[0])
    residual = rand(*dy.shape)
    out = residual.clone(memory_format=torch.channels_last)
    tessel.conv(last(x), last(w), out=last(out), residual=last(out), beta=1.0, **steps)
    check(out, "fprop", x, w, dy, steps, beta=1.0, residual=residual)


def test_dgrad_bias_and_wgrad_alpha_beta():
    x, w, dy, steps = _tensors(CASES[9])
    bias = torch.randn(x.shape[1], device="cuda")
    dx = tessel.conv_dgrad(last(dy), last(w), x_shape=last(x).shape, bias=bias, activation="relu", **steps)
    assert dx.shape == last(x).shape and dx.is_contiguous()
    check(dx.movedim(-1, 1), "dgrad", x, w, dy, steps, bias=bias, activation="relu")
    residual = rand(*w.shape)
    dw = tessel.conv_wgrad(last(x), last(dy), w_shape=last(w).shape, alpha=-1.0, beta=0.5, residual=last(residual),
                           **steps)
    check(dw.movedim(-1, 1), "wgrad", x, w, dy, steps, alpha=-1.0, beta=0.5, residual=residual)


@pytest.mark.parametrize("op", ["fprop", "dgrad", "wgrad"])
def test_3d(op):
    x, w = rand(2, 16, 5, 9, 10, dtype=BF16), rand(24, 4, 3, 3, 2, dtype=BF16)
    steps = _steps((1, 2, 3), (1, 1, 0), (2, 1, 1), 4)
    dy = rand(2, 24, *F.conv3d(x.float(), w.float(), None, **steps).shape[2:])
    fn = {"fprop": lambda: tessel.conv(last(x), last(w), **steps),
          "dgrad": lambda: tessel.conv_dgrad(last(dy), last(w), x_shape=last(x).shape, **steps),
          "wgrad": lambda: tessel.conv_wgrad(last(x), last(dy), w_shape=last(w).shape, **steps)}[op]
    check(fn().movedim(-1, 1), op, x, w, dy, steps)


def test_outputs_left_none_are_allocated_packed_channels_last():
    x, w, dy, steps = _tensors(CASES[2])
    y = tessel.conv(last(x), last(w), **steps)
    assert isinstance(y, torch.Tensor) and y.shape == last(dy).shape and y.is_contiguous() and y.dtype == BF16
    check(y.movedim(-1, 1), "fprop", x, w, dy, steps)
    assert isinstance(tessel.conv_kernel("fprop", last(x), last(w), **steps), str)
    assert isinstance(tessel.conv_kernel("wgrad", last(x), last(dy), w_shape=last(w).shape, **steps), str)


def test_refusals_of_real_tensors():
    x, w = rand(1, 8, 6, 6), rand(4, 8, 3, 3)
    with pytest.raises(ValueError, match="^x: the channel dimension's stride is 36"):
        tessel.conv(last(x.contiguous()), last(w))  # NCHW memory seen as NHWC
    with pytest.raises(TypeError, match="^x: fp32 is not supported"):
        tessel.conv(last(x.float()), last(w.float()))
    with pytest.raises(ValueError, match="^x: is a torch tensor on cpu"):
        tessel.conv(last(x.cpu()), last(w))


# ---- the custom op -------------------------------------------------------------------------------


@pytest.mark.parametrize("case", [0, 2, 9, 10])
def test_torch_conv2d_matches_F_conv2d(case):
    n, c, h, w_, k, r, s, stride, padding, dilation, groups, dtype = CASES[case]
    x, w = rand(n, c, h, w_, dtype=dtype), rand(k, c // groups, r, s, dtype=dtype)
    bias = torch.randn(k, device="cuda", dtype=dtype)
    y = tessel.torch.conv2d(x, w, bias, stride, padding, dilation, groups)
    assert y.is_contiguous(memory_format=torch.channels_last)
    steps = _steps(stride, padding, dilation, groups)
    check(y, "fprop", x, w, F.conv2d(x, w, None, **steps), steps, bias=bias)


def test_torch_op_copies_inputs_it_cannot_read_in_place():
    x, w = rand(2, 16, 10, 10).contiguous(), rand(8, 16, 3, 3).contiguous()  # NCHW memory
    y = tessel.torch.conv2d(x, w, padding=1, activation="silu")
    steps = _steps(1, 1, 1, 1)
    check(y, "fprop", x, w, y, steps, activation="silu")


def test_torch_conv3d():
    x, w = rand(1, 8, 4, 6, 6), rand(8, 8, 3, 3, 3)
    y = tessel.torch.conv3d(x, w, padding=1)
    assert y.is_contiguous(memory_format=torch.channels_last_3d)
    check(y, "fprop", x, w, y, _steps(1, 1, 1, 1))


def _opcheck_cases():
    return [
        ((rand(2, 16, 9, 9), rand(8, 16, 3, 3), None, [1, 1], [1, 1], [1, 1]), {}),
        ((rand(1, 33, 7, 8, dtype=FP16), rand(66, 11, 3, 3, dtype=FP16), torch.randn(66, device="cuda"), [2, 1],
          [1, 0], [1, 1], 3), {"activation": "relu"}),
        ((rand(1, 8, 3, 5, 5), rand(8, 8, 1, 3, 3), None, [1, 1, 1], [0, 1, 1], [1, 1, 1]),
         {"alpha": 2.0, "beta": 1.0, "residual": rand(1, 8, 3, 5, 5)}),
    ]


# No backward is registered: the autograd checks are left out.
_OPCHECK_UTILS = ("test_schema", "test_faketensor", "test_aot_dispatch_static", "test_aot_dispatch_dynamic")


@pytest.mark.parametrize("case", range(3))
def test_opcheck(case):
    args, kwargs = _opcheck_cases()[case]
    torch.library.opcheck(torch.ops.tessel.conv.default, args, kwargs, test_utils=_OPCHECK_UTILS)


def test_backward_is_not_available():
    x = rand(1, 8, 6, 6).requires_grad_()
    with pytest.raises(RuntimeError):
        tessel.torch.conv2d(x, rand(8, 8, 3, 3), padding=1).float().sum().backward()


class _Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(32, 32, 3, padding=1, device="cuda", dtype=BF16).to(memory_format=torch.channels_last)

    def forward(self, x):
        return tessel.torch.conv2d(x, self.conv.weight, self.conv.bias, padding=1, activation="relu", beta=1.0,
                                   residual=x)


def test_compile_fullgraph_matches_eager():
    torch._dynamo.reset()
    model = _Block()
    x = rand(2, 32, 14, 14)
    with torch.no_grad():
        eager = model(x)
        y = torch.compile(model, fullgraph=True)(x)
    torch.testing.assert_close(y, eager, rtol=2e-2, atol=2e-2)


def test_cuda_graph_capture_and_replay():
    x, w = rand(2, 16, 12, 12), rand(32, 16, 3, 3)
    out = poisoned((2, 32, 12, 12), BF16, 2)

    def step():
        tessel.conv(last(x), last(w), out=last(out), padding=1)
        return out

    g, o = capture(torch, step)
    for _ in range(2):
        x.copy_(rand(2, 16, 12, 12))
        o.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        check(o, "fprop", x, w, o, _steps(1, 1, 1, 1))
