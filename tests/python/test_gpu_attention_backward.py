"""Attention backward with PyTorch on a GPU: the gradients of torch.ops.tessel.attention (through
tessel.torch.attention and tessel.torch.scaled_dot_product_attention) and of
tessel.attention_backward against float32 autograd references -- MHA/GQA/MQA, no mask, causal in
both alignments, windows, softcap, ragged lengths down to S_q = 1 and S_k = 1, variable-length
batches with empty sequences, a gradient through lse -- plus torch.compile(fullgraph=True) of a
training step, the deterministic mode bitwise equal over reruns (its flag and
torch.use_deterministic_algorithms), NaN-poisoned gradient buffers, strided views, CUDA-graph
capture, and torch.library.opcheck of both custom ops.

Each gradient g is judged by FlashAttention-3's rule (DESIGN.md section 5): max |g - ref| <=
2 max |low - ref| + floor, where ref is autograd through a float32 attention of the same inputs,
low is autograd through a straightforward attention in the input dtype (S, softcap, P and O
rounded to it, softmax in float32; torch's bf16/fp16 matmuls), and floor is one ulp of the dtype
at max |ref| plus 1e-5. Inputs are random; rows that see no key must get dq = 0 and keys no row
sees dk = dv = 0, exactly."""
import math

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
FLOOR_ABSOLUTE = 1e-5


def rand(*shape, dtype=BF16):
    return (torch.rand(shape, device="cuda") * 2 - 1).to(dtype)


def keep_mask(s_q, s_k, causal=False, window=(-1, -1), align="bottom-right"):
    """[S_q, S_k] bool: key j kept for query i (attention_arguments.hpp's definition)."""
    i = torch.arange(s_q, device="cuda")[:, None]
    j = torch.arange(s_k, device="cuda")[None, :]
    p = i + (s_k - s_q if align == "bottom-right" else 0)
    left, right = window
    if causal:
        right = 0
    keep = torch.ones(s_q, s_k, dtype=torch.bool, device="cuda")
    if left >= 0:
        keep &= j >= p - left
    if right >= 0:
        keep &= j <= p + right
    return keep


def attention_ref(q, k, v, softmax_scale=None, causal=False, window=(-1, -1), softcap=0.0, align="bottom-right",
                  low=False):
    """(out [B, S_q, H, D_v], lse [B, H, S_q]) of [B, S, H, D] inputs by plain torch ops, so that
    autograd differentiates it: in float32 (q, k, v float32), or with low=True in the inputs' dtype
    (S, softcap, P and O rounded to it; softmax and LSE in float32). Rows that see no key: out 0,
    lse -inf."""
    b, s_q, h, d = q.shape
    s_k, h_kv = k.shape[1], k.shape[2]
    scale = 1.0 / math.sqrt(d) if softmax_scale is None else softmax_scale
    qh = q.transpose(1, 2)
    kh = k.repeat_interleave(h // h_kv, dim=2).transpose(1, 2)
    vh = v.repeat_interleave(h // h_kv, dim=2).transpose(1, 2)
    s = (qh @ kh.transpose(-1, -2)) * scale
    if softcap > 0:
        s = softcap * torch.tanh(s / softcap)
    keep = keep_mask(s_q, s_k, causal, window, align)
    seen = keep.any(-1)  # [S_q]
    s = s.float().masked_fill(~keep, -math.inf)
    s = torch.where(seen[:, None], s, torch.zeros_like(s))  # finite rows for softmax; zeroed below
    p = torch.softmax(s, dim=-1) * seen[:, None]
    lse = torch.where(seen, torch.logsumexp(s, dim=-1), torch.full_like(s[..., 0], -math.inf))
    o = p.to(v.dtype) @ vh
    return o.transpose(1, 2), lse


def reference_grads(q, k, v, dout, dlse=None, **mask):
    """(dq, dk, dv) of sum(out * dout) (+ sum(lse * dlse)) by autograd: float32, and low precision."""
    result = []
    for low in (False, True):
        leaves = [(x if low else x.float()).detach().requires_grad_() for x in (q, k, v)]
        out, lse = attention_ref(*leaves, low=low, **mask)
        loss = (out.float() * dout.float()).sum()
        if dlse is not None:
            loss = loss + (lse * dlse).sum()
        loss.backward()
        result.append(tuple(x.grad.float() for x in leaves))
    return result


def judge(name, g, ref, low, dtype):
    """FlashAttention-3's rule for one gradient; returns err / bound."""
    assert g.shape == ref.shape, f"{name}: shape {tuple(g.shape)} != {tuple(ref.shape)}"
    assert torch.isfinite(g).all(), f"{name}: non-finite where the reference is finite"
    if ref.numel() == 0:
        return 0.0
    floor = ULP[dtype] * float(ref.abs().max()) + FLOOR_ABSOLUTE
    err, low_err = float((g.float() - ref).abs().max()), float((low - ref).abs().max())
    bound = 2 * low_err + floor
    assert err <= bound, f"{name}: max |g - ref| = {err:.3g} > 2 * {low_err:.3g} + {floor:.3g}"
    return err / bound


def check_grads(grads, q, k, v, dout, dlse=None, **mask):
    """The rule on (dq, dk, dv), and exact zeros where nothing flows: rows with no key (dq), keys no
    row sees (dk, dv)."""
    exact, low = reference_grads(q, k, v, dout, dlse, **mask)
    for name, g, r, lo in zip(("dq", "dk", "dv"), grads, exact, low):
        assert g.dtype == q.dtype, f"{name}: dtype {g.dtype}"
        judge(name, g, r, lo, q.dtype)
    keep = keep_mask(q.shape[1], k.shape[1], mask.get("causal", False), mask.get("window", (-1, -1)),
                     mask.get("align", "bottom-right"))
    no_key, unseen = ~keep.any(1), ~keep.any(0)
    if no_key.any():
        assert (grads[0][:, no_key] == 0).all(), "dq of rows that see no key must be 0"
    if unseen.any():
        assert (grads[1][:, unseen] == 0).all() and (grads[2][:, unseen] == 0).all(), "dk/dv of unseen keys must be 0"


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(1234)
    yield


def leaves(*tensors):
    return [t.detach().clone().requires_grad_() for t in tensors]


# (B, S_q, S_k, H, H_kv, D, D_v, dtype, mask and scalars)
CASES = [
    (2, 128, 128, 4, 4, 64, 64, BF16, {}),
    (2, 77, 133, 4, 2, 128, 128, FP16, {"causal": True}),
    (1, 200, 200, 8, 1, 128, 128, BF16, {"window": (32, 16)}),
    (2, 150, 90, 4, 4, 96, 96, BF16, {"causal": True, "align": "top-left", "softcap": 30.0}),
    (1, 64, 100, 2, 2, 192, 128, BF16, {"softmax_scale": 0.2}),
    (2, 100, 60, 2, 2, 128, 128, BF16, {"causal": True}),  # bottom-right, S_q > S_k: 40 rows see no key
    (1, 33, 65, 2, 2, 256, 256, FP16, {"window": (8, -1), "softcap": 5.0}),
    (3, 1, 257, 2, 1, 128, 128, BF16, {"causal": True}),  # one query row (decoding)
    (2, 239, 1, 4, 2, 64, 64, BF16, {}),  # one key
    (1, 96, 80, 6, 3, 192, 192, BF16, {"window": (5, 3), "align": "top-left"}),  # rows 85.. see no key
]


@pytest.mark.parametrize("deterministic", [False, True])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_torch_op_gradients_match_the_float32_reference(case, deterministic):
    b, s_q, s_k, h, h_kv, d, d_v, dtype, mask = CASES[case]
    q, k, v = leaves(rand(b, s_q, h, d, dtype=dtype), rand(b, s_k, h_kv, d, dtype=dtype),
                     rand(b, s_k, h_kv, d_v, dtype=dtype))
    dout = rand(b, s_q, h, d_v, dtype=dtype)
    out = tessel.torch.attention(q, k, v, deterministic=deterministic, **mask)
    out.backward(dout)
    check_grads((q.grad, k.grad, v.grad), q, k, v, dout, **mask)


def test_varlen_gradients_with_empty_sequences():
    h, h_kv, d = 4, 2, 128
    lens_q, lens_k = [0, 17, 64, 1, 9, 30], [5, 0, 80, 33, 9, 30]  # sequence 1 has queries but no key
    cu_q = torch.tensor([0, *torch.tensor(lens_q).cumsum(0).tolist()], dtype=torch.int32, device="cuda")
    cu_k = torch.tensor([0, *torch.tensor(lens_k).cumsum(0).tolist()], dtype=torch.int32, device="cuda")
    for mask in ({}, {"causal": True}, {"window": (4, 4)}):
        q, k, v = leaves(rand(sum(lens_q), h, d), rand(sum(lens_k), h_kv, d), rand(sum(lens_k), h_kv, d))
        dout = rand(sum(lens_q), h, d)
        out = tessel.torch.attention(q, k, v, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_q=max(lens_q),
                                     max_seqlen_k=max(lens_k), **mask)
        out.backward(dout)
        for i in range(len(lens_q)):
            rq = slice(int(cu_q[i]), int(cu_q[i + 1]))
            rk = slice(int(cu_k[i]), int(cu_k[i + 1]))
            if lens_q[i] == 0 and lens_k[i] > 0:  # keys no query sees
                assert (k.grad[rk] == 0).all() and (v.grad[rk] == 0).all()
                continue
            if lens_k[i] == 0:  # queries that see no key
                assert (q.grad[rq] == 0).all()
                continue
            grads = (q.grad[rq][None], k.grad[rk][None], v.grad[rk][None])
            check_grads(grads, q[rq][None], k[rk][None], v[rk][None], dout[rq][None], **mask)


@pytest.mark.parametrize("loss", ["out and lse", "lse only"])
def test_a_gradient_through_lse_is_exact(loss):
    # every row sees a key here (lse finite), so sum(lse * dlse) is a finite loss
    b, s_q, s_k, h, h_kv, d = 2, 70, 90, 4, 2, 128
    mask = {"causal": True, "window": (20, -1), "softcap": 15.0}
    q, k, v = leaves(rand(b, s_q, h, d), rand(b, s_k, h_kv, d), rand(b, s_k, h_kv, d))
    dout, dlse = rand(b, s_q, h, d), torch.rand(b, h, s_q, device="cuda") * 2 - 1
    out, lse = tessel.torch.attention(q, k, v, return_lse=True, **mask)
    total = (lse * dlse).sum()
    if loss == "out and lse":
        total = total + (out.float() * dout.float()).sum()
    total.backward()
    check_grads((q.grad, k.grad, v.grad), q, k, v, dout if loss == "out and lse" else torch.zeros_like(dout),
                dlse=dlse, **mask)


@pytest.mark.parametrize("shape_q,shape_kv,is_causal,gqa", [
    ((2, 4, 100, 64), (2, 4, 100, 64), False, False),
    ((2, 4, 100, 128), (2, 4, 70, 128), True, False),  # top-left causal with S_q > S_k, as torch aligns it
    ((1, 8, 64, 128), (1, 2, 96, 128), True, True),
])
def test_sdpa_gradients_match_the_float32_reference(shape_q, shape_kv, is_causal, gqa):
    q, k, v = leaves(rand(*shape_q), rand(*shape_kv), rand(*shape_kv))
    dout = rand(*shape_q)
    tessel.torch.scaled_dot_product_attention(q, k, v, is_causal=is_causal, enable_gqa=gqa).backward(dout)
    # torch's [B, H, S, D] as tessel's [B, S, H, D] views; SDPA's is_causal is top-left
    bshd = [t.transpose(1, 2) for t in (q, k, v)]
    grads = [t.grad.transpose(1, 2) for t in (q, k, v)]
    check_grads(grads, *bshd, dout.transpose(1, 2), causal=is_causal, align="top-left")


# ---- tessel.attention_backward: caller buffers, strides ------------------------------------------------------


def test_poisoned_gradient_buffers_are_overwritten():
    b, s_q, s_k, h, h_kv, d = 2, 91, 120, 4, 1, 128
    mask = {"causal": True, "softcap": 20.0}
    q, k, v = rand(b, s_q, h, d), rand(b, s_k, h_kv, d), rand(b, s_k, h_kv, d)
    out, lse = tessel.attention(q, k, v, return_lse=True, **mask)
    dout = rand(b, s_q, h, d)
    for deterministic in (False, True):
        dq, dk, dv = (torch.full_like(t, float("nan")) for t in (q, k, v))
        r = tessel.attention_backward(q, k, v, out, dout, lse, dq=dq, dk=dk, dv=dv, deterministic=deterministic, **mask)
        assert r[0] is dq and r[1] is dk and r[2] is dv
        torch.cuda.synchronize()
        check_grads((dq, dk, dv), q, k, v, dout, **mask)


def test_strided_views_are_read_and_written_in_place():
    # every tensor a transposed view of a [B, H, S, D] array; lse with padded rows
    b, s, h, d = 2, 96, 4, 64
    q, k, v, dout = (rand(b, h, s, d).transpose(1, 2) for _ in range(4))
    out = torch.empty(b, h, s, d, dtype=BF16, device="cuda").transpose(1, 2)
    lse = torch.empty(b, h, s + 8, device="cuda")[:, :, :s]
    tessel.attention(q, k, v, out=out, lse=lse, causal=True)
    dq, dk, dv = (torch.full((b, h, s, d), float("nan"), dtype=BF16, device="cuda").transpose(1, 2) for _ in range(3))
    tessel.attention_backward(q, k, v, out, dout, lse, dq=dq, dk=dk, dv=dv, causal=True)
    torch.cuda.synchronize()
    check_grads((dq, dk, dv), q, k, v, dout, causal=True)


def test_gradients_left_none_are_allocated_packed():
    q, k, v = rand(2, 40, 4, 64), rand(2, 50, 2, 64), rand(2, 50, 2, 64)
    out, lse = tessel.attention(q, k, v, return_lse=True)
    dq, dk, dv = tessel.attention_backward(q, k, v, out, rand(2, 40, 4, 64), lse)
    for g, t in ((dq, q), (dk, k), (dv, v)):
        assert isinstance(g, torch.Tensor) and g.shape == t.shape and g.dtype == t.dtype and g.is_contiguous()


def test_refusals_of_real_tensors():
    q = rand(1, 8, 2, 64)
    out, lse = tessel.attention(q, q, q, return_lse=True)
    with pytest.raises(ValueError, match="dq: shape"):
        tessel.attention_backward(q, q, q, out, out, lse, dq=rand(1, 8, 2, 128))
    with pytest.raises(TypeError, match="dout: fp32 differs from q's bf16"):
        tessel.attention_backward(q, q, q, out, out.float(), lse)
    with pytest.raises(ValueError, match="kernel: sm80_attention_bwd_bf16_d128 computes bf16 with head dims"):
        tessel.attention_backward(q, q, q, out, out, lse, kernel="sm80_attention_bwd_bf16_d128")


# ---- determinism ------------------------------------------------------------------------------------------------


def test_deterministic_mode_is_bitwise_repeatable():
    q, k, v = rand(2, 517, 8, 128), rand(2, 700, 2, 128), rand(2, 700, 2, 128)
    out, lse = tessel.attention(q, k, v, causal=True, return_lse=True)
    dout = rand(2, 517, 8, 128)
    first = tessel.attention_backward(q, k, v, out, dout, lse, causal=True, deterministic=True)
    for _ in range(10):
        again = tessel.attention_backward(q, k, v, out, dout, lse, causal=True, deterministic=True)
        assert all(torch.equal(x, y) for x, y in zip(first, again))


def test_torch_op_deterministic_flag_and_torch_determinism_are_bitwise_repeatable():
    q0, k0, v0, dout = rand(1, 300, 8, 128), rand(1, 400, 2, 128), rand(1, 400, 2, 128), rand(1, 300, 8, 128)

    def grads(**kw):
        q, k, v = leaves(q0, k0, v0)
        tessel.torch.attention(q, k, v, causal=True, **kw).backward(dout)
        return q.grad, k.grad, v.grad

    first = grads(deterministic=True)
    for _ in range(4):
        assert all(torch.equal(x, y) for x, y in zip(first, grads(deterministic=True)))
    before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        for _ in range(3):  # the same kernels as deterministic=True: the same bits
            assert all(torch.equal(x, y) for x, y in zip(first, grads()))
    finally:
        torch.use_deterministic_algorithms(before)


# ---- torch.compile, CUDA graphs, opcheck ------------------------------------------------------------------


class _Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(128, 3 * 128, dtype=BF16, device="cuda")

    def forward(self, x, cu, max_len):
        q, k, v = self.proj(x).view(-1, 3, 2, 64).unbind(1)  # [total, 2, 64] each
        dense = tessel.torch.attention(q[None], k[None], v[None], causal=True)[0]
        packed = tessel.torch.attention(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=max_len,
                                        max_seqlen_k=max_len)
        sdpa = tessel.torch.scaled_dot_product_attention(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1),
                                                         is_causal=True).transpose(0, 1)
        return (dense + packed + sdpa).reshape(x.shape)


def test_compiled_training_step_matches_eager():
    torch._dynamo.reset()
    x = rand(48, 128)
    cu = torch.tensor([0, 20, 48], dtype=torch.int32, device="cuda")
    target = rand(48, 128)

    def step(model, x):
        loss = ((model(x, cu, 28).float() - target.float()) ** 2).mean()
        loss.backward()
        return loss.detach(), [p.grad.clone() for p in model.parameters()]

    eager_model = _Block()
    compiled_model = _Block()
    compiled_model.load_state_dict(eager_model.state_dict())
    eager_loss, eager_grads = step(eager_model, x)
    compiled = torch.compile(compiled_model, fullgraph=True)
    compiled_loss, compiled_grads = step(compiled, x)
    assert torch.isfinite(compiled_loss)
    torch.testing.assert_close(compiled_loss, eager_loss, rtol=2e-2, atol=2e-2)
    for g, e in zip(compiled_grads, eager_grads):
        assert torch.isfinite(g).all()
        torch.testing.assert_close(g.float(), e.float(), rtol=5e-2, atol=5e-2)


def test_compiled_function_gradients_match_the_reference():
    torch._dynamo.reset()
    mask = {"causal": True, "window": (40, -1), "softcap": 25.0}

    @torch.compile(fullgraph=True)
    def loss_of(q, k, v, dout):
        return (tessel.torch.attention(q, k, v, **mask).float() * dout.float()).sum()

    q, k, v = leaves(rand(2, 130, 4, 128), rand(2, 150, 2, 128), rand(2, 150, 2, 128))
    dout = rand(2, 130, 4, 128)
    loss_of(q, k, v, dout).backward()
    check_grads((q.grad, k.grad, v.grad), q, k, v, dout, **mask)


def test_cuda_graph_capture_of_the_backward():
    q, k, v = rand(2, 128, 4, 64), rand(2, 160, 2, 64), rand(2, 160, 2, 64)
    out, lse = tessel.attention(q, k, v, causal=True, return_lse=True)
    dout = rand(2, 128, 4, 64)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)

    def step():
        tessel.attention(q, k, v, out=out, lse=lse, causal=True)
        return tessel.attention_backward(q, k, v, out, dout, lse, dq=dq, dk=dk, dv=dv, causal=True)

    g, _ = capture(torch, step)
    for _ in range(2):
        q.copy_(rand(2, 128, 4, 64))
        dout.copy_(rand(2, 128, 4, 64))
        for t in (dq, dk, dv):
            t.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        check_grads((dq, dk, dv), q, k, v, dout, causal=True)


def _opcheck_cases():
    cu = torch.tensor([0, 10, 10, 31], dtype=torch.int32, device="cuda")
    return [
        ((rand(2, 33, 4, 64), rand(2, 40, 2, 64), rand(2, 40, 2, 64)), {"deterministic": True}),
        ((rand(1, 50, 2, 128, dtype=FP16), rand(1, 50, 2, 128, dtype=FP16), rand(1, 50, 2, 128, dtype=FP16)),
         {"causal": True, "softmax_scale": 0.1, "softcap": 20.0, "deterministic": True}),
        ((rand(1, 24, 2, 192), rand(1, 30, 2, 192), rand(1, 30, 2, 128)),
         {"window_left": 5, "top_left": True, "deterministic": True}),
        ((rand(31, 2, 64), rand(31, 2, 64), rand(31, 2, 64)),
         {"cu_seqlens_q": cu, "cu_seqlens_k": cu, "max_seqlen_q": 21, "max_seqlen_k": 21, "causal": True,
          "deterministic": True}),
    ]


@pytest.mark.parametrize("case", range(4))
def test_opcheck_with_autograd(case):
    args, kwargs = _opcheck_cases()[case]
    args = tuple(leaves(*args))
    torch.library.opcheck(torch.ops.tessel.attention.default, args, kwargs)


@pytest.mark.parametrize("case", range(4))
def test_opcheck_of_the_backward_op(case):
    (q, k, v), kwargs = _opcheck_cases()[case]
    out, lse = torch.ops.tessel.attention(q, k, v, **kwargs)
    dout = torch.rand_like(out) * 2 - 1
    torch.library.opcheck(torch.ops.tessel.attention_backward.default, (dout, q, k, v, out, lse), kwargs,
                          test_utils=("test_schema", "test_faketensor", "test_aot_dispatch_static",
                                      "test_aot_dispatch_dynamic"))
