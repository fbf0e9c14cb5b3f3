"""tessel.grouped_mm and torch.ops.tessel.grouped_mm on a GPU: every group against a per-group
torch.matmul in float32, both layouts of b, empty groups and groups of one row, poisoned outputs
(rows past offs[-1] stay as they were), alpha / beta / c, torch._grouped_mm where this torch has it,
the refusals of real tensors, and the custom op under torch.library.opcheck, torch.compile and
CUDA-graph capture. The grouped kernel is sm_90 only: elsewhere the module skips."""
import math

import pytest

torch = pytest.importorskip("torch", reason="the GPU tests of tessel.grouped_mm need PyTorch")

import tessel  # noqa: E402
import tessel.torch  # noqa: E402,F401
from cuda_streams import capture  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
    pytest.mark.skipif(torch.cuda.is_available() and torch.cuda.get_device_capability() != (9, 0),
                       reason="the grouped GEMM kernel is sm_90 only"),
]

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
U_OUT = {torch.bfloat16: 2.0**-8, torch.float16: 2.0**-11, torch.float32: 2.0**-24}


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(4321)
    torch.backends.cuda.matmul.allow_tf32 = False
    yield


def rand(*shape, dtype=torch.float32):
    return (torch.rand(shape, device="cuda") * 2 - 1).to(dtype)


def offsets(sizes):
    ends, total = [], 0
    for s in sizes:
        total += s
        ends.append(total)
    return torch.tensor(ends, dtype=torch.int32, device="cuda")


def weights(groups, k, n, layout, dtype):
    """b [G, K, N]: "nk" the transposed view of [G, N, K] weights (K contiguous), "kn" a [G, K, N] array."""
    if layout == "nk":
        return rand(groups, n, k, dtype=dtype).transpose(1, 2)
    return rand(groups, k, n, dtype=dtype)


def check_groups(out, a, b, sizes, alpha=1.0, beta=0.0, c=None, extra_rows=0):
    """Every group's rows of out against alpha a_g @ b[g] + beta c_g from torch.matmul in float32,
    as max |D - R| / (|alpha| |a_g||b_g| + |beta c_g|) within the GEMM tolerance of out's dtype;
    the `extra_rows` rows past the last group must still be NaN (not written)."""
    k = a.shape[1]
    tol = 8 * 2.0**-24 * math.sqrt(max(k, 1)) + 2 * U_OUT[out.dtype] + 4 * 2.0**-24 * k  # + fp32 reference's error
    start = 0
    for g, rows in enumerate(sizes):
        end = start + rows
        ag, bg = a[start:end].float(), b[g].float()
        ref = alpha * (ag @ bg)
        scale = abs(alpha) * (ag.abs() @ bg.abs())
        if c is not None:
            ref = ref + beta * c[start:end].float()
            scale = scale + abs(beta) * c[start:end].float().abs()
        d = out[start:end].float()
        assert torch.isfinite(d).all() or not torch.isfinite(ref).all(), f"group {g}: non-finite result"
        err = ((d - ref).abs() / scale.clamp_min(1e-30)).max().item() if rows else 0.0
        assert err <= tol, f"group {g} ({rows} rows): error {err:.3g} above {tol:.3g}"
        start = end
    if extra_rows:
        assert torch.isnan(out[start:].float()).all(), "rows past offs[-1] were written"


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
@pytest.mark.parametrize("layout", ["nk", "kn"])
@pytest.mark.parametrize("out_dtype", [None, torch.float32])
def test_groups_match_float32_matmul_with_empty_and_one_row_groups(dtype, layout, out_dtype):
    t = DTYPES[dtype]
    sizes = [5, 0, 130, 1, 0, 64, 257, 1]
    k, n = 136, 264  # neither a tile multiple
    a = rand(sum(sizes) + 7, k, dtype=t)  # 7 rows past the last group
    b = weights(len(sizes), k, n, layout, t)
    out = torch.full((a.shape[0], n), float("nan"), dtype=out_dtype or t, device="cuda")
    assert tessel.grouped_mm(a, b, offsets(sizes), out=out) is out
    torch.cuda.synchronize()
    check_groups(out, a, b, sizes, extra_rows=7)


def test_out_none_allocates_and_out_dtype_picks_its_dtype():
    sizes = [3, 0, 40]
    a, b = rand(43, 64, dtype=torch.bfloat16), weights(3, 64, 80, "nk", torch.bfloat16)
    out = tessel.grouped_mm(a, b, offsets(sizes))
    assert out.shape == (43, 80) and out.dtype == torch.bfloat16 and out.is_contiguous()
    check_groups(out, a, b, sizes)
    out = tessel.grouped_mm(a, b, offsets(sizes), out_dtype=torch.float32)
    assert out.dtype == torch.float32
    check_groups(out, a, b, sizes)


def test_alpha_beta_and_c():
    sizes = [17, 0, 33, 1]
    a, b = rand(51, 96, dtype=torch.bfloat16), weights(4, 96, 128, "kn", torch.bfloat16)
    c = rand(51, 128, dtype=torch.bfloat16)
    out = tessel.grouped_mm(a, b, offsets(sizes), c=c, alpha=-0.5, beta=2.0)
    check_groups(out, a, b, sizes, alpha=-0.5, beta=2.0, c=c)


def test_many_skewed_groups():
    g = 64
    sizes = [0 if i % 9 == 0 else max(1, int(600 / (i + 1))) for i in range(g)]
    a, b = rand(sum(sizes), 256, dtype=torch.bfloat16), weights(g, 256, 512, "nk", torch.bfloat16)
    out = torch.full((sum(sizes), 512), float("nan"), dtype=torch.bfloat16, device="cuda")
    tessel.grouped_mm(a, b, offsets(sizes), out=out)
    check_groups(out, a, b, sizes)


def test_all_rows_in_one_group_or_no_rows_at_all():
    a, b = rand(300, 64, dtype=torch.bfloat16), weights(4, 64, 64, "nk", torch.bfloat16)
    out = tessel.grouped_mm(a, b, offsets([0, 0, 300, 0]))
    check_groups(out, a, b, [0, 0, 300, 0])
    empty = tessel.grouped_mm(a[:0], b, offsets([0, 0, 0, 0]))
    assert empty.shape == (0, 64)


@pytest.mark.skipif(not hasattr(torch, "_grouped_mm"), reason="this torch has no torch._grouped_mm")
@pytest.mark.parametrize("layout", ["nk", "kn"])
def test_matches_torch_grouped_mm(layout):
    sizes = [64, 0, 130, 1, 200]
    a, b = rand(sum(sizes), 128, dtype=torch.bfloat16), weights(5, 128, 256, layout, torch.bfloat16)
    offs = offsets(sizes)
    ours = tessel.grouped_mm(a, b, offs)
    theirs = torch._grouped_mm(a, b, offs)
    check_groups(ours, a, b, sizes)
    check_groups(theirs, a, b, sizes)


def test_refusals_of_real_tensors():
    a, b = rand(40, 64, dtype=torch.bfloat16), weights(2, 64, 64, "nk", torch.bfloat16)
    with pytest.raises(TypeError, match="offs: dtype torch.int64 is not supported"):
        tessel.grouped_mm(a, b, offsets([10, 30]).long())
    with pytest.raises(ValueError, match="offs: has 3 values, but b has 2 groups"):
        tessel.grouped_mm(a, b, offsets([10, 20, 10]))
    with pytest.raises(ValueError, match="offs: is a torch tensor on cpu"):
        tessel.grouped_mm(a, b, offsets([10, 30]).cpu())
    with pytest.raises(ValueError, match="pad K to a multiple of 8"):
        tessel.grouped_mm(rand(40, 60, dtype=torch.bfloat16), weights(2, 60, 64, "nk", torch.bfloat16),
                          offsets([10, 30]))


# ---- torch.ops.tessel.grouped_mm -------------------------------------------------------------------


def test_op_matches_and_copies_views_it_cannot_read():
    sizes = [20, 0, 44]
    a, b = rand(64, 64, dtype=torch.bfloat16), weights(3, 64, 96, "nk", torch.bfloat16)
    out = tessel.torch.grouped_mm(a, b, offsets(sizes))
    check_groups(out, a, b, sizes)
    a_cm = a.t().contiguous().t()  # column-major a: copied to row-major by the op
    check_groups(tessel.torch.grouped_mm(a_cm, b, offsets(sizes)), a, b, sizes)
    out = tessel.torch.grouped_mm(a, b, offsets(sizes), out_dtype=torch.float32)
    assert out.dtype == torch.float32


# No backward is registered: the autograd checks are left out.
_OPCHECK_UTILS = ("test_schema", "test_faketensor", "test_aot_dispatch_static", "test_aot_dispatch_dynamic")


@pytest.mark.parametrize("layout", ["nk", "kn"])
def test_opcheck(layout):
    sizes = [20, 0, 44]  # offs[-1] == total_m: every row written, so repeated runs agree
    a, b = rand(64, 64, dtype=torch.bfloat16), weights(3, 64, 96, layout, torch.bfloat16)
    op = torch.ops.tessel.grouped_mm.default
    torch.library.opcheck(op, (a, b, offsets(sizes)), test_utils=_OPCHECK_UTILS)
    torch.library.opcheck(op, (a, b, offsets(sizes)), {"out_dtype": torch.float32}, test_utils=_OPCHECK_UTILS)


def test_torch_compile_fullgraph_matches_eager():
    sizes = [20, 0, 44]
    a, b = rand(64, 64, dtype=torch.bfloat16), weights(3, 64, 96, "nk", torch.bfloat16)
    offs = offsets(sizes)

    def f(x, w, o):
        return torch.relu(tessel.torch.grouped_mm(x, w, o))

    compiled = torch.compile(f, fullgraph=True)
    torch.testing.assert_close(compiled(a, b, offs), f(a, b, offs))


def test_cuda_graph_capture_and_replay():
    sizes = [20, 0, 44]
    a, b = rand(64, 64, dtype=torch.bfloat16), weights(3, 64, 96, "nk", torch.bfloat16)
    offs = offsets(sizes)
    g, out = capture(torch, lambda: torch.ops.tessel.grouped_mm(a, b, offs))
    a.copy_(rand(64, 64, dtype=torch.bfloat16))
    offs.copy_(offsets([0, 64, 0]))  # the kernel reads the offsets on the device: new sizes replay too
    g.replay()
    torch.cuda.synchronize()
    check_groups(out, a, b, [0, 64, 0])


def test_no_autograd_formula():
    a = rand(64, 64, dtype=torch.bfloat16).requires_grad_()
    b = weights(3, 64, 96, "nk", torch.bfloat16)
    out = torch.ops.tessel.grouped_mm(a, b, offsets([20, 0, 44]))
    with pytest.raises(RuntimeError):
        out.sum().backward()
