"""tessel.torch.all_gather_matmul and matmul_reduce_scatter on 2+ GPUs, one process per GPU:

    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \\
        torchrun --nproc_per_node 2 -m pytest -p no:cacheprovider -q -rs -m gpu tests/python/test_gpu_dist.py

Skipped (visibly) outside torchrun or with fewer than two ranks. Random data, outputs compared
with the sequential NCCL + torch.matmul result (ragged shapes, bf16 and fp16), the gathered A
exactly, a bad shape on one rank raised on every rank."""
import os

import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def group():
    torch = pytest.importorskip("torch")
    import torch.distributed as dist

    import tessel
    import tessel.dist

    if int(os.environ.get("WORLD_SIZE", "1")) < 2:
        pytest.skip("tessel.dist's Python tests run under torchrun with 2 or more ranks (WORLD_SIZE < 2 here)")
    if not tessel.dist.available():
        pytest.skip("this build has no tessel::dist (NCCL >= 2.28 not found at build time)")
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    if not dist.is_initialized():
        dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    yield dist.group.WORLD
    dist.barrier()


def _rand(torch, shape, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.empty(shape, dtype=dtype, device="cuda").uniform_(-1, 1, generator=g)


def _close(torch, got, want, dtype, k):
    assert bool(torch.isfinite(got).all()), "non-finite values in the result"
    eps = 2.0 ** -8 if dtype == torch.bfloat16 else 2.0 ** -11
    err = (got.float() - want.float()).abs().max().item()
    bound = 4 * eps * k ** 0.5 + 4 * eps * want.float().abs().max().item()
    assert err <= bound, f"max |tessel - torch| = {err:.3g} > {bound:.3g}"


@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16"])
@pytest.mark.parametrize("m_shard,n,k,chunk_rows", [(1000, 384, 520, 256), (777, 200, 64, 0), (2048, 1024, 1024, 0)])
def test_all_gather_matmul(group, dtype_name, m_shard, n, k, chunk_rows):
    import torch
    import torch.distributed as dist

    import tessel.torch

    dtype = getattr(torch, dtype_name)
    r, P = dist.get_rank(group), dist.get_world_size(group)
    a_shard = _rand(torch, (m_shard, k), dtype, 10 + r)
    w = _rand(torch, (n, k), dtype, 20 + r)  # this rank's Linear weight [N, K]
    a_full = torch.empty(m_shard * P, k, dtype=dtype, device="cuda")
    dist.all_gather_into_tensor(a_full, a_shard, group=group)
    want = a_full @ w.t()
    gathered, d = tessel.torch.all_gather_matmul(a_shard, w.t(), group, return_a=True, chunk_rows=chunk_rows)
    # Without return_a, on a side stream: the same bits. (Every collective call comes before the
    # first assertion, so that a failure on one rank never leaves the others waiting.)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        d2 = tessel.torch.all_gather_matmul(a_shard, w.t(), group, chunk_rows=chunk_rows)
    torch.cuda.synchronize()
    assert torch.equal(gathered, a_full)
    _close(torch, d, want, dtype, k)
    assert torch.equal(d, d2)


@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16"])
@pytest.mark.parametrize("m,n,k_shard,chunk_rows,reduce_op", [(1001, 384, 256, 128, "sum"), (4096, 512, 1024, 0, "avg"),
                                                               (3, 40, 24, 0, "sum")])
def test_matmul_reduce_scatter(group, dtype_name, m, n, k_shard, chunk_rows, reduce_op):
    import torch
    import torch.distributed as dist

    import tessel.dist
    import tessel.torch

    dtype = getattr(torch, dtype_name)
    r, P = dist.get_rank(group), dist.get_world_size(group)
    a = _rand(torch, (m, k_shard), dtype, 30 + r)
    w = _rand(torch, (n, k_shard), dtype, 40 + r)
    partial = (a @ w.t()).float()
    total = partial.clone()
    dist.all_reduce(total, group=group)  # float32 sum of the ranks' partials: the reference
    if reduce_op == "avg":
        total /= P
    start = sum(tessel.dist.block_rows(m, P, q) for q in range(r))
    rows = tessel.dist.block_rows(m, P, r)
    d = tessel.torch.matmul_reduce_scatter(a, w.t(), group, reduce_op=reduce_op, chunk_rows=chunk_rows)
    torch.cuda.synchronize()
    assert tuple(d.shape) == (rows, n)
    _close(torch, d, total[start:start + rows], dtype, k_shard * P)


def test_a_bad_shape_on_one_rank_raises_on_every_rank(group):
    import torch
    import torch.distributed as dist

    import tessel.torch

    r, P = dist.get_rank(group), dist.get_world_size(group)
    rows = 48 if r == P - 1 else 64  # unequal shards
    a_shard = _rand(torch, (rows, 64), torch.bfloat16, 50 + r)
    w = _rand(torch, (64, 64), torch.bfloat16, 60 + r)
    with pytest.raises(ValueError, match="m_shard: rank"):
        tessel.torch.all_gather_matmul(a_shard, w.t(), group)
    # A CPU tensor on rank 0 only: rank 0 raises its own error, the others learn that it refused.
    a = _rand(torch, (64, 64), torch.bfloat16, 70 + r)
    bad = a.cpu() if r == 0 else a
    with pytest.raises((ValueError, TypeError)) as info:
        tessel.torch.matmul_reduce_scatter(bad, w.t(), group)
    if r != 0:
        assert "rank 0 refused its arguments" in str(info.value)
    # The context still works afterwards.
    d = tessel.torch.matmul_reduce_scatter(a, w.t(), group)
    torch.cuda.synchronize()
    assert d.shape[1] == 64
