"""tessel.dist: tensor-parallel GEMMs over NCCL, the communication overlapped with the GEMM
(docs/dist.md). With torch, ``tessel.torch.all_gather_matmul`` and ``matmul_reduce_scatter`` take
a ``torch.distributed`` process group and do the set-up below for you.

    ctx = tessel.dist.Context(unique_id, nranks, rank, device)   # collective; rank 0's Context.unique_id()
    tessel.dist.all_gather_gemm(ctx, a_shard, b, out=d)          # d = all_gather(a_shard) @ b, every rank
    tessel.dist.gemm_reduce_scatter(ctx, a, b, out=d_block)      # d_block = block `rank` of sum_ranks(a @ b)
    ctx.close()

all_gather_gemm: each of the P ranks holds a_shard, [M/P, K] (row-major), its own b [K, N_r]
(either order; ``w.t()`` of a Linear weight reads in place) and gets out [M, N_r] (row-major) =
the rows of every rank's shard, in rank order, times b. a_gathered (optional, [M, K]) receives
the gathered A as well. out has the bits of ``all_gather`` followed by tessel's GEMM of the whole
problem (same kernel, same K order).

gemm_reduce_scatter: each rank holds a [M, K_r] and b [K_r, N] (its K shard; K_r may differ
between ranks) and gets out [block_rows(M, P, rank), N] (row-major) = its row block of the sum
over ranks of a @ b: blocks of ceil(M / P) rows, the last ones shorter (or empty) when P does not
divide M. The partial sums travel in out's dtype and are added in float32. alpha scales every
partial (1 / P averages).

Both calls are collective (every rank, same order, same M, K / N and dtypes: a rank that passes
other shapes, or whose arguments are refused, makes every rank raise ValueError, and no data
moves); a, b: float16 or bfloat16, out their dtype or float32. They run on `stream` (default: a's
library's current stream, as in tessel.gemm) on the context's device, which must be a's.
chunk_rows: the rows per transfer (0: the library's choice).

Errors: TypeError (an argument that is not an array, a dtype), ValueError (a shape, a stride, a
rank that disagrees), RuntimeError (CUDA or NCCL, with their text; a timeout aborts the context).
A rank that never makes a call times the others out; their aborted context's communication stream
then stays blocked on NCCL's wait for that rank, so a device-wide synchronize (torch.cuda.synchronize)
would not return: synchronize the call's stream if needed, and end the process (docs/dist.md, Risks).
"""
import contextlib

from . import _C

__all__ = ["available", "Context", "all_gather_gemm", "gemm_reduce_scatter", "block_rows", "check_all_gather_gemm",
           "check_gemm_reduce_scatter"]


def available():
    """Whether this build of tessel has tessel::dist (it needs NCCL >= 2.28 at build time)."""
    return bool(getattr(_C, "DIST_AVAILABLE", False))


def _require():
    if not available():
        raise RuntimeError("tessel.dist: this build of tessel has no tessel::dist (NCCL >= 2.28 was not found when "
                           "it was built; see docs/dist.md)")


class Context:
    """A tessel::dist context: its own NCCL communicator (rank `rank` of `nranks` sharing
    `unique_id`, on CUDA device `device`), staging buffers and a communication stream. Collective.
    timeout_ms bounds every wait for the other ranks (0: ten minutes)."""

    def __init__(self, unique_id, nranks, rank, device, timeout_ms=0):
        _require()
        self._handle = _C.dist_context_create(bytes(unique_id), int(nranks), int(rank), int(device), int(timeout_ms))
        info = _C.dist_context_info(self._handle)
        self.nranks, self.rank, self.device, self.nccl_version = (info["nranks"], info["rank"], info["device"],
                                                                  info["nccl_version"])

    @staticmethod
    def unique_id():
        """A new NCCL unique id (bytes), made on one rank and sent to the others."""
        _require()
        return _C.dist_unique_id()

    def close(self):
        """Frees the context (after its work); later calls with it raise ValueError. Collective, like
        creation: every rank closes its context (a rank that waits past timeout_ms for the others
        aborts its communicator instead of hanging)."""
        handle, self._handle = getattr(self, "_handle", 0), 0
        _C.dist_context_destroy(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return (f"tessel.dist.Context(rank {self.rank} of {self.nranks}, device {self.device}, "
                f"NCCL {self.nccl_version})")


def _stream(stream, a):
    if stream is not None:
        return stream if isinstance(stream, int) else int(getattr(stream, "cuda_stream", 0))
    if type(a).__module__.split(".")[0] == "torch":
        import torch

        # A tensor that is not on a GPU is refused by the call itself (on every rank); its stream
        # is the current device's.
        return torch.cuda.current_stream(a.device if getattr(a, "is_cuda", False) else None).cuda_stream
    return 0


@contextlib.contextmanager
def _refusing(op, ctx):
    """Python work before a collective call `op` (tessel.torch's too): an exception inside joins
    the call's argument agreement as a rank that refused its arguments -- so that the other ranks
    raise as well instead of pairing their call with this rank's next one -- and then propagates."""
    try:
        yield
    except Exception:
        try:
            _C.dist_run(op, ctx._handle, None, None, None, None, 0, 1.0, 0)  # refused, on every rank
        except Exception:
            pass
        raise


def _run(op, ctx, a, b, out, a_gathered, stream, alpha, chunk_rows):
    with _refusing(op, ctx):
        args = (_stream(stream, a), float(alpha), int(chunk_rows))
    _C.dist_run(op, ctx._handle, a, b, out, a_gathered, *args)


def block_rows(m, nranks, rank):
    """The rows of rank `rank`'s reduce-scatter block of M rows: ceil(M / P), fewer (or 0) at the end."""
    stride = -(-int(m) // int(nranks))
    return max(0, min(stride, int(m) - int(rank) * stride))


def all_gather_gemm(ctx, a_shard, b, *, out, a_gathered=None, alpha=1.0, stream=None, chunk_rows=0):
    """out = all_gather(a_shard) @ b on every rank (module docstring); returns out."""
    _run("all_gather", ctx, a_shard, b, out, a_gathered, stream, alpha, chunk_rows)
    return out


def gemm_reduce_scatter(ctx, a, b, *, out, alpha=1.0, stream=None, chunk_rows=0):
    """out = block `rank` of the sum over ranks of alpha * a @ b (module docstring); returns out."""
    _run("reduce_scatter", ctx, a, b, out, None, stream, alpha, chunk_rows)
    return out


def check_all_gather_gemm(a_shard, b, out, nranks, rank, *, a_gathered=None, chunk_rows=0):
    """Raises what all_gather_gemm would for rank `rank` of `nranks`; needs no GPU and no NCCL."""
    _require()
    _C.dist_check("all_gather", a_shard, b, out, a_gathered, int(nranks), int(rank), int(chunk_rows))


def check_gemm_reduce_scatter(a, b, out, nranks, rank, *, chunk_rows=0):
    """Raises what gemm_reduce_scatter would for rank `rank` of `nranks`; needs no GPU and no NCCL."""
    _require()
    _C.dist_check("reduce_scatter", a, b, out, None, int(nranks), int(rank), int(chunk_rows))
