"""tessel with PyTorch on a GPU: results against float64 references, layouts through views, the
documented refusals of real tensors, streams, a second device, CUDA-graph capture, and the
tessel::gemm custom op under torch.library.opcheck, autograd and torch.compile(fullgraph=True).

Inputs are random (never zeros), outputs are poisoned with NaN before a call, and every result is
judged by max |D - R| / (|alpha| |A||B| + |beta C|) against a float64 reference R from torch: NaN
where R is finite fails (the rule of tessel/reference/gemm_check.hpp)."""
import math

import pytest

torch = pytest.importorskip("torch", reason="the GPU tests of the torch layer need PyTorch")

import tessel  # noqa: E402
import tessel.torch  # noqa: E402,F401
from cuda_streams import capture, run_behind_a_busy_stream  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def tolerance(dtype, out_dtype, k):
    """tessel/reference/gemm_check.hpp's gemm_tolerance."""
    u_out = {torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}.get(out_dtype, 2.0**-24)
    u_in = 2.0**-11 if dtype == "tf32" else 0.0
    fp8 = 4 * 2.0**-24 + 2.0**-10 if dtype == "fp8" else 0.0
    return 8 * 2.0**-24 * math.sqrt(max(k, 1)) + 2 * u_in + 2 * u_out + fp8


def rel_err(d, a, b, alpha=1.0, beta=0.0, c=None):
    A, B = a.double(), b.double()
    R = alpha * (A @ B)
    S = abs(alpha) * (A.abs() @ B.abs())
    if c is not None:
        R = R + beta * c.double()
        S = S + abs(beta) * c.double().abs()
    D = d.double()
    assert D.shape == R.shape
    assert not (torch.isfinite(R) & ~torch.isfinite(D)).any(), "non-finite result where the reference is finite"
    diff = (D - R).abs()
    err = torch.where(S > 0, diff / S.clamp_min(1e-300), diff)
    return float(err.max()) if err.numel() else 0.0


def rand(*shape, dtype=torch.float32, device="cuda", gen=None):
    x = torch.rand(shape, device=device, generator=gen, dtype=torch.float32) * 2 - 1
    return x.to(dtype)


def poisoned(shape, dtype, device="cuda"):
    return torch.full(shape, float("nan"), dtype=dtype, device=device)


def operand(rows, cols, order, dtype, batch=None):
    """A rows x cols matrix (batch x ... when batch) stored row-major ("r") or column-major ("c")."""
    lead = () if batch is None else (batch,)
    if order == "r":
        return rand(*lead, rows, cols, dtype=dtype)
    return rand(*lead, cols, rows, dtype=dtype).mT


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(1234)
    torch.backends.cuda.matmul.allow_tf32 = False
    yield


# ---- tessel.gemm on torch tensors -----------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("orders", ["rr", "rc", "cr", "cc"])
@pytest.mark.parametrize("mnk", [(1, 1, 1), (17, 33, 65), (130, 260, 37), (256, 128, 512)])
def test_gemm_matches_float64(dtype, orders, mnk):
    m, n, k = mnk
    t = DTYPES[dtype]
    a, b = operand(m, k, orders[0], t), operand(k, n, orders[1], t)
    out = poisoned((m, n), t)
    assert tessel.gemm(a, b, out=out) is out
    torch.cuda.synchronize()
    assert rel_err(out, a, b) <= tolerance(dtype, t, k)


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_fp32_output_from_16_bit_inputs(dtype):
    a, b = rand(70, 90, dtype=DTYPES[dtype]), rand(90, 50, dtype=DTYPES[dtype])
    out = poisoned((70, 50), torch.float32)
    tessel.gemm(a, b, out=out)
    assert rel_err(out, a, b) <= tolerance(dtype, torch.float32, 90)


def test_tf32():
    a, b = rand(300, 200), rand(200, 100)
    out = tessel.gemm(a, b, tf32=True)
    assert rel_err(out, a, b) <= tolerance("tf32", torch.float32, 200)


def test_alpha_beta_and_c_in_place():
    a, b, c = rand(64, 48, dtype=torch.bfloat16), rand(48, 80, dtype=torch.bfloat16), rand(64, 80, dtype=torch.bfloat16)
    c0 = c.clone()
    out = tessel.gemm(a, b, alpha=-0.5, beta=2.0, c=c)
    assert rel_err(out, a, b, -0.5, 2.0, c0) <= tolerance("bf16", torch.bfloat16, 48)
    tessel.gemm(a, b, out=c, c=c, alpha=-0.5, beta=2.0)  # c is out: accumulate in place
    assert rel_err(c, a, b, -0.5, 2.0, c0) <= tolerance("bf16", torch.bfloat16, 48)


def test_batched_and_broadcast():
    a = rand(5, 40, 24, dtype=torch.float16)
    b = rand(24, 56, dtype=torch.float16)  # 2-D: shared by every batch
    out = tessel.gemm(a, b)
    assert out.shape == (5, 40, 56)
    assert rel_err(out, a, b) <= tolerance("fp16", torch.float16, 24)
    b1 = rand(1, 24, 56, dtype=torch.float16)  # batch 1 broadcasts too
    assert rel_err(tessel.gemm(a, b1), a, b1) <= tolerance("fp16", torch.float16, 24)


@pytest.mark.parametrize("bt", ["e4m3", "e5m2"])
def test_fp8(bt):
    e4m3 = torch.float8_e4m3fn
    a = (rand(96, 128) * 2).to(e4m3)
    b = (rand(64, 128) * 2).to(e4m3 if bt == "e4m3" else torch.float8_e5m2).t()  # K-major B
    out = tessel.gemm(a, b, alpha=0.25)
    assert out.dtype == torch.bfloat16
    assert rel_err(out, a.float(), b.float(), 0.25) <= tolerance("fp8", torch.bfloat16, 128)


def test_out_none_allocates_on_the_inputs_device_with_their_dtype():
    a, b = rand(8, 16, dtype=torch.bfloat16), rand(16, 4, dtype=torch.bfloat16)
    out = tessel.gemm(a, b)
    assert out.dtype == torch.bfloat16 and out.device == a.device and out.is_contiguous()
    c = rand(8, 4)
    assert tessel.gemm(rand(8, 16, dtype=torch.float16), rand(16, 4, dtype=torch.float16), c=c, beta=1).dtype == torch.float32


def test_kernel_name_and_forced_kernel():
    a, b = rand(128, 64), rand(64, 96)
    name = tessel.gemm_kernel(a, b)
    assert name in {k["name"] for k in tessel.gemm_kernels()}
    out = tessel.gemm(a, b, kernel="simt_64x64x8")
    assert rel_err(out, a, b) <= tolerance("fp32", torch.float32, 64)


def test_zero_sizes():
    out = tessel.gemm(rand(0, 8), rand(8, 5))
    assert out.shape == (0, 5)
    c = rand(3, 5)
    out = tessel.gemm(rand(3, 0), rand(0, 5), c=c, beta=2.0)  # K = 0: D = beta * C
    assert torch.allclose(out, 2 * c)


# ---- refusals of real tensors ----------------------------------------------------------------------


def test_non_contiguous_view_is_refused_and_the_torch_op_copies_it():
    a = rand(64, 96)[:, ::2]  # strides (96, 2): neither is 1
    b = rand(48, 32)
    with pytest.raises(ValueError, match="a: neither of its last two strides is 1"):
        tessel.gemm(a, b)
    out = tessel.torch.gemm(a, b)
    assert rel_err(out, a, b) <= tolerance("fp32", torch.float32, 48)


def test_expanded_view_is_refused_and_the_torch_op_copies_it():
    a = rand(1, 32).expand(16, 32)  # stride 0 rows
    b = rand(32, 8)
    with pytest.raises(ValueError, match="a: its rows overlap"):
        tessel.gemm(a, b)
    assert rel_err(tessel.torch.gemm(a, b), a, b) <= tolerance("fp32", torch.float32, 32)


def test_cpu_tensor_is_a_value_error():
    with pytest.raises(ValueError, match="a: is a torch tensor on cpu"):
        tessel.gemm(torch.ones(4, 4), rand(4, 4))


def test_unsupported_dtype_is_a_type_error():
    with pytest.raises(TypeError, match=r"b: dtype torch.float64 is not supported"):
        tessel.gemm(rand(4, 4), rand(4, 4, dtype=torch.float64))


def test_mixed_dtypes_are_a_type_error():
    with pytest.raises(TypeError, match="b: bf16 differs from a's dtype fp16"):
        tessel.gemm(rand(4, 4, dtype=torch.float16), rand(4, 4, dtype=torch.bfloat16))


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs a second CUDA device")
def test_second_device_works_and_mixing_devices_is_refused():
    a, b = rand(40, 30, device="cuda:1"), rand(30, 20, device="cuda:1")
    with torch.cuda.device(0):  # tessel makes the operands' device current itself
        out = tessel.gemm(a, b)
    assert out.device == torch.device("cuda:1")
    torch.cuda.synchronize(1)
    assert rel_err(out, a, b) <= tolerance("fp32", torch.float32, 30)
    assert torch.cuda.current_device() == 0
    with pytest.raises(ValueError, match="b: is on CUDA device 1, but a is on device 0"):
        tessel.gemm(rand(40, 30), b)


# ---- streams ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["current", "object", "int"])
def test_runs_on_a_non_default_stream_without_syncing(how):
    a, b = rand(512, 512, dtype=torch.bfloat16), rand(512, 512, dtype=torch.bfloat16)
    out = torch.empty(512, 512, dtype=torch.bfloat16, device="cuda")
    tessel.gemm(a, b, out=out)  # warm-up: first-call work (kernel loading, the workspace pool) out of the way
    out.fill_(float("nan"))
    torch.cuda.synchronize()
    run_behind_a_busy_stream(torch, how, lambda s: tessel.gemm(a, b, out=out, stream=s)).synchronize()
    assert rel_err(out, a, b) <= tolerance("bf16", torch.bfloat16, 512)


# ---- CUDA graphs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("via", ["tessel.gemm", "torch.ops.tessel.gemm"])
def test_cuda_graph_capture_and_replay(via):
    a, b = rand(256, 192, dtype=torch.bfloat16), rand(192, 320, dtype=torch.bfloat16)
    out = torch.empty(256, 320, dtype=torch.bfloat16, device="cuda")

    def step():
        if via == "tessel.gemm":
            return tessel.gemm(a, b, out=out)
        return torch.ops.tessel.gemm(a, b)

    g, result = capture(torch, step)
    for _ in range(2):
        a.copy_(rand(256, 192, dtype=torch.bfloat16))
        b.copy_(rand(192, 320, dtype=torch.bfloat16))
        result.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        assert rel_err(result, a, b) <= tolerance("bf16", torch.bfloat16, 192)


# ---- the custom op -----------------------------------------------------------------------------------


def _opcheck_cases():
    bf = torch.bfloat16
    return [
        ((rand(32, 48, dtype=bf).requires_grad_(), rand(48, 16, dtype=bf).requires_grad_()), {}),
        ((rand(3, 32, 48).requires_grad_(), rand(48, 24).t().contiguous().t().requires_grad_()), {"alpha": 0.5}),
        ((rand(20, 30), rand(30, 10)), {"beta": 2.0, "c": rand(20, 10).requires_grad_()}),
        ((rand(16, 8, dtype=bf), rand(8, 12, dtype=bf)), {"out_dtype": torch.float32}),
    ]


@pytest.mark.parametrize("case", range(4))
def test_opcheck(case):
    args, kwargs = _opcheck_cases()[case]
    torch.library.opcheck(torch.ops.tessel.gemm.default, args, kwargs)


def test_autograd_matches_torch():
    a = rand(4, 33, 47).requires_grad_()
    b = rand(47, 29).requires_grad_()  # broadcast over the batch: its grad sums over it
    c = rand(33, 29).requires_grad_()
    y = tessel.torch.gemm(a, b, alpha=0.75, beta=-1.5, c=c)
    g = rand(4, 33, 29)
    y.backward(g)
    a2, b2, c2 = (t.detach().double().requires_grad_() for t in (a, b, c))
    (0.75 * (a2 @ b2) - 1.5 * c2).backward(g.double())
    for mine, ref in ((a.grad, a2.grad), (b.grad, b2.grad), (c.grad, c2.grad)):
        assert mine.shape == ref.shape
        assert torch.allclose(mine.double(), ref, rtol=1e-4, atol=1e-4)


class _Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = tessel.torch.Linear(64, 128, dtype=torch.bfloat16, device="cuda")
        self.down = tessel.torch.Linear(128, 32, bias=False, dtype=torch.bfloat16, device="cuda")

    def forward(self, x):
        h = torch.nn.functional.gelu(self.up(x))
        return self.down(h) + tessel.torch.gemm(x, self.up.weight[:32].t())


def test_compile_fullgraph_matches_eager():
    torch._dynamo.reset()
    model = _Mlp()
    x = rand(4, 24, 64, dtype=torch.bfloat16)
    eager = model(x)
    compiled = torch.compile(model, fullgraph=True)
    y = compiled(x)
    assert torch.isfinite(y).all()
    torch.testing.assert_close(y, eager, rtol=2e-2, atol=2e-2)
    y.float().sum().backward()  # through the compiled graph, into tessel's backward
    assert model.up.weight.grad is not None and torch.isfinite(model.up.weight.grad).all()


def test_linear_is_a_drop_in_for_nn_linear():
    ref = torch.nn.Linear(96, 40, device="cuda")
    mine = tessel.torch.Linear(96, 40, device="cuda")
    mine.load_state_dict(ref.state_dict())
    x = rand(7, 5, 96)
    y = mine(x)
    assert y.shape == (7, 5, 40)
    expect = x.double() @ ref.weight.double().t() + ref.bias.double()
    assert (y.double() - expect).abs().max() <= 1e-4


# ---- tessel::linear: the bias and the activation in the GEMM's epilogue -------------------------------

_ACT = {
    None: lambda z: z,
    "relu": torch.relu,
    "gelu": torch.nn.functional.gelu,
    "gelu_tanh": lambda z: torch.nn.functional.gelu(z, approximate="tanh"),
    "silu": torch.nn.functional.silu,
}


@pytest.mark.parametrize("activation", list(_ACT))
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_linear_forward_matches_float64(activation, dtype):
    # 16-bit inputs run the tensor-core kernels' fused epilogue: act(x w^T + b) in float32, one rounding.
    x, w, b = rand(3, 41, 200, dtype=dtype), rand(136, 200, dtype=dtype), rand(136, dtype=dtype)
    y = tessel.torch.linear(x, w, b, activation)
    assert y.shape == (3, 41, 136) and y.dtype == dtype
    z = x.double() @ w.double().t() + b.double()
    ref = _ACT[activation](z)
    scale = x.double().abs() @ w.double().abs().t() + b.double().abs()  # what the products' rounding scales with
    assert not (torch.isfinite(ref) & ~torch.isfinite(y.double())).any()
    err = float(((y.double() - ref).abs() / scale).max())
    assert err <= 1.2 * tolerance("bf16", dtype, 200), err  # 1.2: the activations' slope is at most 1.13


@pytest.mark.parametrize("activation", list(_ACT))
def test_linear_gradients_match_torch(activation):
    # float32 (the CUDA-core kernels): the gradients against torch's own composite in float64.
    x = rand(5, 7, 48).requires_grad_()
    w = rand(24, 48).requires_grad_()
    b = rand(24).requires_grad_()
    y = tessel.torch.linear(x, w, b, activation)
    g = rand(5, 7, 24)
    y.backward(g)
    x2, w2, b2 = (t.detach().double().requires_grad_() for t in (x, w, b))
    _ACT[activation](torch.nn.functional.linear(x2, w2, b2)).backward(g.double())
    for mine, ref in ((x.grad, x2.grad), (w.grad, w2.grad), (b.grad, b2.grad)):
        assert mine.shape == ref.shape
        torch.testing.assert_close(mine.double(), ref, rtol=1e-4, atol=1e-4)


def test_linear_without_bias_and_with_2d_input():
    x, w = rand(33, 64, dtype=torch.bfloat16).requires_grad_(), rand(16, 64, dtype=torch.bfloat16).requires_grad_()
    y = tessel.torch.linear(x, w, None, "silu")
    y.float().sum().backward()
    assert y.shape == (33, 16) and x.grad.shape == x.shape and w.grad.shape == w.shape
    assert torch.isfinite(x.grad).all() and torch.isfinite(w.grad).all()


def _linear_opcheck_cases():
    bf = torch.bfloat16
    return [
        (rand(32, 48, dtype=bf).requires_grad_(), rand(16, 48, dtype=bf).requires_grad_(), None, None),
        (rand(2, 9, 48).requires_grad_(), rand(24, 48).requires_grad_(), rand(24).requires_grad_(), "gelu"),
        (rand(20, 64, dtype=bf).requires_grad_(), rand(32, 64, dtype=bf).requires_grad_(),
         rand(32, dtype=bf).requires_grad_(), "relu"),
    ]


@pytest.mark.parametrize("case", range(3))
def test_linear_opcheck(case):
    torch.library.opcheck(torch.ops.tessel.linear.default, _linear_opcheck_cases()[case])


def test_linear_refusals():
    with pytest.raises(ValueError, match="activation: 'tanh' is not one of"):
        tessel.torch.linear(rand(4, 8), rand(2, 8), None, "tanh")
    with pytest.raises(ValueError, match="weight: has 9 input features, but x has 8"):
        tessel.torch.linear(rand(4, 8), rand(2, 9))
    with pytest.raises(TypeError, match="bias"):  # the bias has out's dtype (tessel.gemm's rule)
        tessel.torch.linear(rand(4, 8, dtype=torch.bfloat16), rand(2, 8, dtype=torch.bfloat16), rand(2))
    with pytest.raises(ValueError, match="activation"):
        tessel.torch.Linear(8, 4, activation="tanh")


def test_linear_module_with_activation_compiles_and_matches_eager():
    torch._dynamo.reset()
    layer = tessel.torch.Linear(64, 96, dtype=torch.bfloat16, device="cuda", activation="gelu_tanh")
    assert "activation='gelu_tanh'" in repr(layer)
    x = rand(4, 10, 64, dtype=torch.bfloat16)
    eager = layer(x)
    ref = torch.nn.functional.gelu(torch.nn.functional.linear(x.float(), layer.weight.float(), layer.bias.float()),
                                   approximate="tanh")
    torch.testing.assert_close(eager.float(), ref, rtol=2e-2, atol=2e-2)
    compiled = torch.compile(layer, fullgraph=True)
    torch.testing.assert_close(compiled(x), eager, rtol=0, atol=0)
