"""tessel.attention with PyTorch on a GPU: O and LSE against float32 references (masks, windows,
softcap, GQA, head-dim pairs, variable-length batches with empty sequences, strided views), the
tessel::attention custom op under torch.library.opcheck, torch.compile(fullgraph=True), CUDA-graph
capture and a non-default stream, and tessel.torch.scaled_dot_product_attention against
F.scaled_dot_product_attention.

Each result is judged by FlashAttention-3's rule (DESIGN.md section 5): max |out - ref| <=
2 max |low - ref| + one ulp of the dtype at the output's magnitude, where ref computes in float32
and low rounds S, P and O to the input dtype as a plain low-precision attention would. Inputs are
random, outputs poisoned with NaN before a call; rows whose keys are all masked must be exactly 0
with LSE -inf."""
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

BF16, FP16 = torch.bfloat16, torch.float16
ULP = {BF16: 2.0**-7, FP16: 2.0**-10}  # one unit in the last place at 1.0


def rand(*shape, dtype=BF16):
    return (torch.rand(shape, device="cuda") * 2 - 1).to(dtype)


def poisoned(shape, dtype):
    return torch.full(shape, float("nan"), dtype=dtype, device="cuda")


def keep_mask(s_q, s_k, causal=False, window=(-1, -1), align="bottom-right", device="cuda"):
    """[S_q, S_k] bool: key j kept for query i (attention_arguments.hpp's definition)."""
    i = torch.arange(s_q, device=device)[:, None]
    j = torch.arange(s_k, device=device)[None, :]
    p = i + (s_k - s_q if align == "bottom-right" else 0)
    left, right = window
    if causal:
        right = 0
    keep = torch.ones(s_q, s_k, dtype=torch.bool, device=device)
    if left >= 0:
        keep &= j >= p - left
    if right >= 0:
        keep &= j <= p + right
    return keep


def reference(q, k, v, softmax_scale=None, causal=False, window=(-1, -1), softcap=0.0, align="bottom-right",
              low=False):
    """(out [B, S_q, H, D_v], lse [B, H, S_q]) in float32 for [B, S, H, D] inputs; low=True rounds S,
    P and O to the input dtype."""
    b, s_q, h, d = q.shape
    s_k, h_kv = k.shape[1], k.shape[2]
    scale = 1.0 / math.sqrt(d) if softmax_scale is None else softmax_scale
    rnd = (lambda x: x.to(q.dtype).float()) if low else (lambda x: x)
    qf = q.float().transpose(1, 2)
    kf = k.float().repeat_interleave(h // h_kv, dim=2).transpose(1, 2)
    vf = v.float().repeat_interleave(h // h_kv, dim=2).transpose(1, 2)
    s = rnd(qf @ kf.transpose(-1, -2)) * scale
    if softcap > 0:
        s = softcap * torch.tanh(s / softcap)
    keep = keep_mask(s_q, s_k, causal, window, align)
    s = s.masked_fill(~keep, -math.inf)
    lse = torch.logsumexp(s, dim=-1)  # -inf where every key is masked
    p = torch.where(torch.isfinite(lse)[..., None], torch.exp(s - lse[..., None]), torch.zeros_like(s))
    o = rnd(rnd(p) @ vf)
    return o.transpose(1, 2), lse


def check(out, lse, q, k, v, **mask):
    """FlashAttention-3's rule for out (and lse when given); fully masked rows exactly 0 / -inf."""
    o_ref, lse_ref = reference(q, k, v, **mask)
    o_low, lse_low = reference(q, k, v, low=True, **mask)
    assert out.shape == o_ref.shape and out.dtype == q.dtype
    assert torch.isfinite(out).all(), "non-finite output where the reference is finite"
    ulp = ULP[q.dtype]
    floor = ulp * max(1.0, float(o_ref.abs().max())) if o_ref.numel() else ulp
    err, low = float((out.float() - o_ref).abs().max()), float((o_low - o_ref).abs().max())
    assert err <= 2 * low + floor, f"max |out - ref| = {err:.3g} > 2 * {low:.3g} + {floor:.3g}"
    empty_rows = ~torch.isfinite(lse_ref)  # [B, H, S_q]
    if empty_rows.any():
        assert (out.float().transpose(1, 2)[empty_rows] == 0).all(), "rows with no key must be 0"
    if lse is None:
        return
    assert lse.shape == lse_ref.shape and lse.dtype == torch.float32
    assert torch.equal(torch.isneginf(lse), empty_rows), "LSE must be -inf exactly where every key is masked"
    finite = ~empty_rows
    if finite.any():
        err = float((lse - lse_ref)[finite].abs().max())
        low = float((lse_low - lse_ref)[finite].abs().max())
        floor = ulp * max(1.0, float(lse_ref[finite].abs().max()))
        assert err <= 2 * low + floor, f"max |lse - ref| = {err:.3g} > 2 * {low:.3g} + {floor:.3g}"


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(4321)
    yield


# (B, S_q, S_k, H, H_kv, D, D_v, dtype, mask and scalars)
CASES = [
    (2, 128, 128, 4, 4, 64, 64, BF16, {}),
    (2, 77, 133, 4, 2, 128, 128, FP16, {"causal": True}),
    (1, 200, 200, 8, 1, 256, 256, BF16, {"window": (32, 16)}),
    (2, 150, 90, 4, 4, 96, 96, BF16, {"causal": True, "align": "top-left", "softcap": 30.0}),
    (1, 64, 100, 2, 2, 192, 128, BF16, {"softmax_scale": 0.2}),
    (2, 100, 60, 2, 2, 128, 128, BF16, {"causal": True}),  # bottom-right, S_q > S_k: 40 rows see no key
    (1, 33, 65, 2, 2, 192, 192, FP16, {"window": (8, -1), "softcap": 5.0}),
    (3, 1, 257, 2, 1, 128, 128, BF16, {"causal": True}),  # one query row (decoding)
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_attention_matches_the_float32_reference(case):
    b, s_q, s_k, h, h_kv, d, d_v, dtype, mask = CASES[case]
    q, k, v = rand(b, s_q, h, d, dtype=dtype), rand(b, s_k, h_kv, d, dtype=dtype), rand(b, s_k, h_kv, d_v, dtype=dtype)
    out, lse = poisoned((b, s_q, h, d_v), dtype), poisoned((b, h, s_q), torch.float32)
    assert tessel.attention(q, k, v, out=out, lse=lse, **mask) is out
    torch.cuda.synchronize()
    check(out, lse, q, k, v, **mask)


def test_outputs_left_none_are_allocated_on_qs_device():
    q, k, v = rand(2, 40, 4, 64), rand(2, 50, 2, 64), rand(2, 50, 2, 64)
    out = tessel.attention(q, k, v)
    assert isinstance(out, torch.Tensor) and out.shape == (2, 40, 4, 64) and out.dtype == BF16 and out.is_contiguous()
    out, lse = tessel.attention(q, k, v, return_lse=True, causal=True)
    assert lse.shape == (2, 4, 40) and lse.dtype == torch.float32
    check(out, lse, q, k, v, causal=True)


def test_strided_views_are_read_in_place():
    # q, k, v and out as transposed views of [B, H, S, D] arrays; lse with padded rows.
    b, s, h, d = 2, 96, 4, 128
    q, k, v = (rand(b, h, s, d).transpose(1, 2) for _ in range(3))
    out = poisoned((b, h, s, d), BF16).transpose(1, 2)
    lse = poisoned((b, h, s + 8), torch.float32)[:, :, :s]
    tessel.attention(q, k, v, out=out, lse=lse, causal=True)
    check(out, lse, q, k, v, causal=True)
    # k with padded heads
    k2 = rand(b, s, h, d + 64)[..., :d]
    out2 = tessel.attention(q, k2, v)
    check(out2, None, q, k2, v)


def test_variable_length_batches_with_empty_sequences():
    h, h_kv, d = 4, 2, 128
    lens_q, lens_k = [0, 17, 64, 1, 9], [5, 0, 80, 33, 9]  # sequence 1 has queries but no key
    cu_q = torch.tensor([0, *torch.tensor(lens_q).cumsum(0).tolist()], dtype=torch.int32, device="cuda")
    cu_k = torch.tensor([0, *torch.tensor(lens_k).cumsum(0).tolist()], dtype=torch.int32, device="cuda")
    q, k, v = rand(sum(lens_q), h, d), rand(sum(lens_k), h_kv, d), rand(sum(lens_k), h_kv, d)
    for mask in ({}, {"causal": True}, {"window": (4, 4)}):
        for max_q, max_k in ((None, None), (max(lens_q), max(lens_k))):
            out, lse = poisoned((sum(lens_q), h, d), BF16), poisoned((h, sum(lens_q)), torch.float32)
            tessel.attention(q, k, v, out=out, lse=lse, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_q=max_q,
                             max_seqlen_k=max_k, **mask)
            torch.cuda.synchronize()
            for i in range(len(lens_q)):
                rq = slice(int(cu_q[i]), int(cu_q[i + 1]))
                rk = slice(int(cu_k[i]), int(cu_k[i + 1]))
                if lens_q[i] == 0:
                    continue
                check(out[rq][None], lse[:, rq][None], q[rq][None], k[rk][None], v[rk][None], **mask)


def test_refusals_of_real_tensors():
    q = rand(1, 8, 2, 80)
    with pytest.raises(ValueError, match="head_dim: 80 is not supported"):
        tessel.attention(q, q, q)
    with pytest.raises(TypeError, match="q: fp32 is not supported"):
        x = torch.rand(1, 8, 2, 64, device="cuda")
        tessel.attention(x, x, x)
    x = rand(1, 8, 2, 128)[..., ::2]  # the last dimension strided
    with pytest.raises(ValueError, match="q: the last dimension's stride is 2"):
        tessel.attention(x, x, x)
    out = tessel.torch.attention(x, x, x)  # the torch op copies what tessel cannot read in place
    check(out, None, x, x, x)
    with pytest.raises(ValueError, match="q: is a torch tensor on cpu"):
        tessel.attention(torch.ones(1, 8, 2, 64, dtype=BF16), x, x)


# ---- streams and CUDA graphs ---------------------------------------------------------------------


@pytest.mark.parametrize("how", ["current", "object", "int"])
def test_runs_on_a_non_default_stream_without_syncing(how):
    q, k, v = rand(2, 512, 8, 128), rand(2, 512, 8, 128), rand(2, 512, 8, 128)
    out = torch.empty_like(q)
    tessel.attention(q, k, v, out=out)  # warm-up: first-call work out of the way
    out.fill_(float("nan"))
    torch.cuda.synchronize()
    run_behind_a_busy_stream(torch, how, lambda s: tessel.attention(q, k, v, out=out, stream=s)).synchronize()
    check(out, None, q, k, v)


@pytest.mark.parametrize("via", ["tessel.attention", "torch.ops.tessel.attention"])
def test_cuda_graph_capture_and_replay(via):
    q, k, v = rand(2, 128, 4, 64), rand(2, 160, 2, 64), rand(2, 160, 2, 64)
    out = torch.empty(2, 128, 4, 64, dtype=BF16, device="cuda")
    lse = torch.empty(2, 4, 128, dtype=torch.float32, device="cuda")

    def step():
        if via == "tessel.attention":
            tessel.attention(q, k, v, out=out, lse=lse, causal=True)
            return out, lse
        return torch.ops.tessel.attention(q, k, v, causal=True)

    g, (o, l) = capture(torch, step)
    for _ in range(2):
        q.copy_(rand(2, 128, 4, 64))
        k.copy_(rand(2, 160, 2, 64))
        o.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        check(o, l, q, k, v, causal=True)


# ---- the custom op -------------------------------------------------------------------------------


def _opcheck_cases():
    cu = torch.tensor([0, 10, 10, 31], dtype=torch.int32, device="cuda")
    return [
        ((rand(2, 33, 4, 64), rand(2, 40, 2, 64), rand(2, 40, 2, 64)), {}),
        ((rand(1, 50, 2, 128, dtype=FP16), rand(1, 50, 2, 128, dtype=FP16), rand(1, 50, 2, 128, dtype=FP16)),
         {"causal": True, "softmax_scale": 0.1, "softcap": 20.0}),
        ((rand(1, 24, 2, 192), rand(1, 30, 2, 192), rand(1, 30, 2, 128)), {"window_left": 5, "top_left": True}),
        ((rand(31, 2, 64), rand(31, 2, 64), rand(31, 2, 64)),
         {"cu_seqlens_q": cu, "cu_seqlens_k": cu, "max_seqlen_q": 21, "max_seqlen_k": 21, "causal": True}),
    ]


# The forward alone here; test_gpu_attention_backward.py runs opcheck with the autograd checks.
_OPCHECK_UTILS = ("test_schema", "test_faketensor", "test_aot_dispatch_static", "test_aot_dispatch_dynamic")


@pytest.mark.parametrize("case", range(4))
def test_opcheck(case):
    args, kwargs = _opcheck_cases()[case]
    torch.library.opcheck(torch.ops.tessel.attention.default, args, kwargs, test_utils=_OPCHECK_UTILS)


def test_custom_op_matches_tessel_attention():
    q, k, v = rand(2, 70, 4, 128), rand(2, 90, 1, 128), rand(2, 90, 1, 128)
    out, lse = torch.ops.tessel.attention(q, k, v, None, True, 16, -1, 0.0, False)
    check(out, lse, q, k, v, causal=True, window=(16, -1))
    out2, lse2 = tessel.attention(q, k, v, causal=True, window=(16, -1), return_lse=True)
    assert torch.equal(out, out2) and torch.equal(lse, lse2)


class _Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(128, 128, dtype=BF16, device="cuda")

    def forward(self, x, cu, max_len):
        h = self.proj(x)  # [total, 2 * 64]
        q = h.view(-1, 2, 64)
        dense = tessel.torch.attention(q[None], q[None], q[None], causal=True)[0]
        packed = tessel.torch.attention(q, q, q, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=max_len,
                                        max_seqlen_k=max_len)
        return (dense + packed).reshape(x.shape) * 0.5 + x


def test_compile_fullgraph_matches_eager():
    torch._dynamo.reset()
    model = _Block()
    x = rand(48, 128)
    cu = torch.tensor([0, 20, 48], dtype=torch.int32, device="cuda")
    with torch.no_grad():
        eager = model(x, cu, 28)
        compiled = torch.compile(model, fullgraph=True)
        y = compiled(x, cu, 28)
    assert torch.isfinite(y).all()
    torch.testing.assert_close(y, eager, rtol=2e-2, atol=2e-2)


# ---- tessel.torch.scaled_dot_product_attention ---------------------------------------------------


@pytest.mark.parametrize("shape_q,shape_kv,is_causal,gqa", [
    ((2, 4, 100, 64), (2, 4, 100, 64), False, False),
    ((2, 4, 100, 128), (2, 4, 70, 128), True, False),  # top-left causal with S_q > S_k, as torch aligns it
    ((1, 8, 64, 128), (1, 2, 96, 128), True, True),
    ((4, 50, 64), (4, 60, 64), False, False),  # [N, S, D]
])
def test_sdpa_matches_torch(shape_q, shape_kv, is_causal, gqa):
    F = torch.nn.functional
    q, k, v = rand(*shape_q), rand(*shape_kv), rand(*shape_kv)
    mine = tessel.torch.scaled_dot_product_attention(q, k, v, is_causal=is_causal, enable_gqa=gqa)
    kwargs = {"enable_gqa": True} if gqa else {}
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=is_causal, **kwargs)
    assert mine.shape == ref.shape and mine.dtype == q.dtype
    torch.testing.assert_close(mine.float(), ref, rtol=0, atol=2e-2)
    theirs = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal, **kwargs)
    torch.testing.assert_close(mine, theirs, rtol=0, atol=2e-2)


def test_sdpa_refuses_head_mismatch_without_enable_gqa():
    q, kv = rand(1, 8, 16, 64), rand(1, 2, 16, 64)
    with pytest.raises(ValueError, match="pass enable_gqa=True"):
        tessel.torch.scaled_dot_product_attention(q, kv, kv)
