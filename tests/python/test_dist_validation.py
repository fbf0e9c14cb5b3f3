"""tessel.dist's argument rules with fake arrays (no GPU, no NCCL communicator, no torch): every
refusal is the documented exception and names the argument and the rule."""
import pytest

import tessel
import tessel.dist
from fake_arrays import CAI, address

F2 = 2  # bytes of a float16

pytestmark = pytest.mark.skipif(not tessel.dist.available(),
                                reason="this build has no tessel::dist (NCCL >= 2.28 not found at build time)")


def f16(shape, i=0, strides_el=None, typestr="<f2"):
    size = int(typestr[-1])
    strides = None if strides_el is None else [s * size for s in strides_el]
    return CAI(shape, typestr=typestr, strides=strides, ptr=address(i))


def refuse(exc, match, check, *args, **kwargs):
    with pytest.raises(exc) as info:
        check(*args, **kwargs)
    assert match in str(info.value), f"expected {match!r} in {str(info.value)!r}"


def test_all_gather_accepts_a_good_call_and_a_weight_transpose():
    # a_shard [500, 256], b = w.t() of a [384, 256] weight, out [1000, 384] over 2 ranks
    tessel.dist.check_all_gather_gemm(f16((500, 256)), f16((256, 384), 1, strides_el=(1, 256)), f16((1000, 384), 2),
                                      2, 1, a_gathered=f16((1000, 256), 3), chunk_rows=300)


def test_all_gather_refusals():
    a, b, out = f16((500, 256)), f16((256, 384), 1), f16((1000, 384), 2)
    check = tessel.dist.check_all_gather_gemm
    refuse(ValueError, "out: is [1000, 384], but it must be [P x a's rows, b's columns] = [1500, 384]", check, a, b, out,
           3, 0)
    refuse(ValueError, "a: is column-major", check, f16((500, 256), strides_el=(1, 500)), b, out, 2, 0)
    refuse(ValueError, "out: is column-major", check, a, b, f16((1000, 384), 2, strides_el=(1, 1000)), 2, 0)
    refuse(ValueError, "b: has 255 rows, but a has 256 columns", check, a, f16((255, 384), 1), out, 2, 0)
    refuse(TypeError, "b: dtype fp32 differs from a's fp16", check, a, f16((256, 384), 1, typestr="<f4"), out, 2, 0)
    refuse(TypeError, "a: dtype fp32", check, f16((500, 256), typestr="<f4"), f16((256, 384), 1, typestr="<f4"),
           f16((1000, 384), 2, typestr="<f4"), 2, 0)
    refuse(ValueError, "a: has 3 dimensions", check, f16((1, 500, 256)), b, out, 2, 0)
    refuse(ValueError, "rank: 2 is outside 0..1", check, a, b, out, 2, 2)
    refuse(ValueError, "a_gathered: is [1000, 255]", check, a, b, out, 2, 0, a_gathered=f16((1000, 255), 3))
    refuse(ValueError, "chunk_rows: -1 is negative", check, a, b, out, 2, 0, chunk_rows=-1)
    refuse(TypeError, "a:", check, object(), b, out, 2, 0)


def test_reduce_scatter_blocks_are_ceil_m_over_p():
    assert [tessel.dist.block_rows(10, 4, r) for r in range(4)] == [3, 3, 3, 1]
    assert [tessel.dist.block_rows(5, 4, r) for r in range(4)] == [2, 2, 1, 0]
    assert [tessel._C.dist_block_rows(1001, 2, r) for r in range(2)] == [501, 500]
    check = tessel.dist.check_gemm_reduce_scatter
    a, b = f16((1001, 128)), f16((128, 384), 1, strides_el=(1, 128))
    check(a, b, f16((501, 384), 2), 2, 0)
    check(a, b, f16((500, 384), 2), 2, 1)
    check(f16((1001, 128), strides_el=(1, 1001)), b, f16((500, 384), 2), 2, 1)  # A column-major is fine here
    refuse(ValueError, "out: is [500, 384], but rank 0's block of 1001 rows over 2 ranks is [501, 384]", check, a, b,
           f16((500, 384), 2), 2, 0)
    refuse(ValueError, "b: has 127 rows, but a has 128 columns", check, a, f16((127, 384), 1), f16((501, 384), 2), 2, 0)


def test_a_closed_context_is_refused():
    ctx = tessel.dist.Context.__new__(tessel.dist.Context)
    ctx._handle = 0
    with pytest.raises(ValueError, match="ctx: closed"):
        tessel.dist.all_gather_gemm(ctx, f16((1, 1)), f16((1, 1), 1), out=f16((1, 1), 2))


class RecordingC:
    """Stands in for tessel._C in tessel.dist: records each dist_run call's arguments."""

    def __init__(self):
        self.calls = []

    def dist_run(self, *args):
        self.calls.append(args)


def test_an_error_before_the_call_still_joins_the_agreement(monkeypatch):
    # A rank whose call fails in Python before reaching tessel (here chunk_rows that is not a
    # number) must still take part in the call's agreement as a refusal -- else the other ranks,
    # already in the collective, would pair their call with this rank's next one.
    fake = RecordingC()
    monkeypatch.setattr(tessel.dist, "_C", fake)
    ctx = tessel.dist.Context.__new__(tessel.dist.Context)
    ctx._handle = 7
    a, b, out = f16((500, 256)), f16((256, 384), 1), f16((1000, 384), 2)
    with pytest.raises(ValueError, match="invalid literal"):
        tessel.dist.all_gather_gemm(ctx, a, b, out=out, chunk_rows="many")
    assert fake.calls == [("all_gather", 7, None, None, None, None, 0, 1.0, 0)]
    fake.calls.clear()
    with pytest.raises(TypeError):
        tessel.dist.gemm_reduce_scatter(ctx, a, b, out=out, alpha=object())
    assert fake.calls == [("reduce_scatter", 7, None, None, None, None, 0, 1.0, 0)]
    # A call that gets through Python reaches tessel once, with its own arguments.
    fake.calls.clear()
    tessel.dist.gemm_reduce_scatter(ctx, a, b, out=out, stream=5, alpha=0.5, chunk_rows=64)
    assert fake.calls == [("reduce_scatter", 7, a, b, out, None, 5, 0.5, 64)]
