"""tessel.gemm's block-scaled fp8 (scale_a, scale_b arrays) on a GPU, against a float64 reference of
the dequantized inputs: ragged M, N, K (partial blocks), every output dtype, padded and batched
scales, alpha / beta, poisoned outputs; and per-tensor float scales. The block-scaled kernel is
sm_90 only: elsewhere the module skips."""
import math

import pytest

torch = pytest.importorskip("torch", reason="the GPU tests of block-scaled fp8 need PyTorch")

import tessel  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
    pytest.mark.skipif(torch.cuda.is_available() and torch.cuda.get_device_capability() != (9, 0),
                       reason="the block-scaled fp8 kernel is sm_90 only"),
    pytest.mark.skipif(not hasattr(torch, "float8_e4m3fn"), reason="this torch has no float8_e4m3fn"),
]

BLOCK = 128
U_OUT = {torch.bfloat16: 2.0**-8, torch.float16: 2.0**-11, torch.float32: 2.0**-24}


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(97)
    yield


def blocks(x):
    return (x + BLOCK - 1) // BLOCK


def fp8(*shape):
    return ((torch.rand(shape, device="cuda") * 2 - 1) * 2).to(torch.float8_e4m3fn)


def scales(*shape):
    return torch.rand(shape, device="cuda") * 1.5 + 0.25  # positive, varied, never 0


def m_major(s):
    """s [..., M, KB] stored M-major: the first of its last two strides 1."""
    return s.transpose(-2, -1).contiguous().transpose(-2, -1)


def dequantized(a, b, sa, sb):
    """float64 a * scale_a (per row and K block) and b * scale_b (per 128 x 128 block); b is [..., K, N]."""
    k, n = b.shape[-2], b.shape[-1]
    A = a.float().double() * sa.double().repeat_interleave(BLOCK, dim=-1)[..., :k]
    sb_kn = sb.double().transpose(-2, -1).repeat_interleave(BLOCK, dim=-2)[..., :k, :]
    B = b.float().double() * sb_kn.repeat_interleave(BLOCK, dim=-1)[..., :n]
    return A, B


def check(out, A, B, alpha=1.0, beta=0.0, c=None):
    R = alpha * (A @ B)
    S = abs(alpha) * (A.abs() @ B.abs())
    if c is not None:
        R = R + beta * c.double()
        S = S + abs(beta) * c.double().abs()
    D = out.double()
    assert not (torch.isfinite(R) & ~torch.isfinite(D)).any(), "non-finite result where the reference is finite"
    err = ((D - R).abs() / S.clamp_min(1e-300)).max().item()
    k = A.shape[-1]
    tol = 8 * 2.0**-24 * math.sqrt(k) + 2 * U_OUT[out.dtype] + 4 * 2.0**-24 + 2.0**-10
    assert err <= tol, f"error {err:.3g} above {tol:.3g}"


@pytest.mark.parametrize("mnk", [(1, 64, 100), (200, 300, 300), (256, 256, 512), (257, 129, 1000), (128, 512, 4096)])
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_block_scaled_matches_float64_of_the_dequantized_inputs(mnk, out_dtype):
    m, n, k = mnk
    a, b = fp8(m, k), fp8(n, k).t()  # tn: b [K, N] column-major
    sa, sb = scales(m, blocks(k)), scales(blocks(n), blocks(k))
    out = torch.full((m, n), float("nan"), dtype=out_dtype, device="cuda")
    assert tessel.gemm(a, b, out=out, scale_a=m_major(sa), scale_b=sb) is out
    torch.cuda.synchronize()
    check(out, *dequantized(a, b, sa, sb))


def test_padded_scales_alpha_beta_and_c():
    m, n, k = 200, 300, 300
    a, b = fp8(m, k), fp8(n, k).t()
    sa_store = torch.empty(blocks(k), 256, device="cuda")  # ld 256 >= M
    sa = sa_store[:, :m].t()
    sa.copy_(scales(m, blocks(k)))
    sb_store = torch.empty(blocks(n), 4, device="cuda")  # ld 4 >= ceil(K/128)
    sb = sb_store[:, : blocks(k)]
    sb.copy_(scales(blocks(n), blocks(k)))
    c = (torch.rand(m, n, device="cuda") * 2 - 1).to(torch.bfloat16)
    out = tessel.gemm(a, b, c=c, alpha=0.5, beta=-1.0, scale_a=sa, scale_b=sb)
    check(out, *dequantized(a, b, sa, sb), alpha=0.5, beta=-1.0, c=c)


def test_batched_block_scales():
    batch, m, n, k = 3, 130, 260, 384
    a, b = fp8(batch, m, k), fp8(batch, n, k).mT
    sa, sb = scales(batch, m, blocks(k)), scales(batch, blocks(n), blocks(k))
    out = tessel.gemm(a, b, scale_a=m_major(sa), scale_b=sb)
    assert out.shape == (batch, m, n) and out.dtype == torch.bfloat16
    check(out, *dequantized(a, b, sa, sb))


def test_per_tensor_float_scales_still_apply():
    a, b = fp8(96, 128), fp8(64, 128).t()
    out = tessel.gemm(a, b, scale_a=0.5, scale_b=4.0)
    check(out, a.float().double() * 0.5, b.float().double() * 4.0)


def test_scales_the_kernel_reads_must_be_m_major_and_fp32():
    m, n, k = 200, 300, 300
    a, b = fp8(m, k), fp8(n, k).t()
    sa, sb = scales(m, blocks(k)), scales(blocks(n), blocks(k))
    with pytest.raises(ValueError, match="scale_a: strides .* do not make it"):
        tessel.gemm(a, b, scale_a=sa, scale_b=sb)  # row-major scale_a (K-major): refused, not misread
    with pytest.raises(TypeError, match="scale_b: fp16 is not supported"):
        tessel.gemm(a, b, scale_a=m_major(sa), scale_b=sb.half())
