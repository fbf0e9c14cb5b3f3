"""The extension's torch path (it reads torch tensors directly, not through DLPack), checked without
torch: a child process installs a stand-in `torch` module whose Tensor has the attributes tessel
reads, then calls tessel.gemm, tessel.attention and tessel.attention_backward. A child, so the stand-in never meets the real
torch."""
import json
import os
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    r"""
    import json, sys, types, warnings

    torch = types.ModuleType("torch")
    class dtype:
        def __init__(self, name): self.name = name
        def __str__(self): return "torch." + self.name
    for n in ("float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float64", "int32"):
        setattr(torch, n, dtype(n))
    class Device:
        def __init__(self, type): self.type = type
    class Tensor:
        def __init__(self, shape, dt="float32", device=0, strides=None, ptr=0x7f0000000000):
            self.shape, self.dtype, self._device, self._ptr = tuple(shape), getattr(torch, dt), device, ptr
            self._strides = strides or tuple(
                __import__("math").prod(shape[i + 1:]) for i in range(len(shape)))
            self.device = Device("cuda" if device >= 0 else "cpu")
        def get_device(self): return self._device
        def stride(self): return self._strides
        def data_ptr(self): return self._ptr
    torch.Tensor = Tensor
    streams_asked = []
    torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda d: streams_asked.append(d) or 0)
    sys.modules["torch"] = torch

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import tessel  # torch is "imported": tessel tries tessel.torch, which this stand-in cannot load
    out = {"warned": any("tessel.torch was not loaded" in str(w.message) for w in caught)}

    def attempt_with(fn, name, *args, **kwargs):
        try:
            fn(*args, **kwargs)
            out[name] = ["ok", ""]
        except Exception as e:
            out[name] = [type(e).__name__, str(e)]

    def attempt(name, *args, **kwargs):
        attempt_with(tessel.gemm, name, *args, **kwargs)

    attempt("cpu", Tensor((4, 5), device=-1), Tensor((5, 6)), out=Tensor((4, 6), ptr=0x7f0010000000))
    attempt("float64", Tensor((4, 5)), Tensor((5, 6), "float64"), out=Tensor((4, 6)))
    attempt("k", Tensor((4, 5)), Tensor((6, 6)), out=Tensor((4, 6)))
    attempt("device_of_b", Tensor((4, 5), strides=(1, 4)), Tensor((5, 6), device=1), out=Tensor((4, 6)))
    attempt("devices", Tensor((4, 5), device=1), Tensor((5, 6), device=0), out=Tensor((4, 6), device=1))
    attempt("e5m2_pair", Tensor((4, 5), "float8_e5m2"), Tensor((5, 6), "float8_e5m2"), out=Tensor((4, 6), "bfloat16"))
    # M = 0: valid, nothing to launch (a GPU machine runs it; without a driver the device switch fails)
    attempt("empty", Tensor((0, 5), ptr=0), Tensor((5, 6), device=0), out=Tensor((0, 6), ptr=0))

    def attempt_attention(name, *args, **kwargs):
        attempt_with(tessel.attention, name, *args, **kwargs)

    def bshd(shape, dt="bfloat16", i=0, **kw):
        return Tensor(shape, dt, ptr=0x7f0000000000 + i * 0x10000000, **kw)

    qkv = [bshd((10, 2, 64), i=i) for i in range(4)]
    attempt_attention("attn_cpu", bshd((1, 8, 2, 64), device=-1), bshd((1, 8, 2, 64), i=1), bshd((1, 8, 2, 64), i=2))
    attempt_attention("attn_int32_q", bshd((1, 8, 2, 64), "int32"), bshd((1, 8, 2, 64), i=1), bshd((1, 8, 2, 64), i=2),
                      out=bshd((1, 8, 2, 64), i=3))
    attempt_attention("attn_float_offsets", *qkv[:3], out=qkv[3], cu_seqlens_q=Tensor((3,), "float32"),
                      cu_seqlens_k=Tensor((3,), "int32"))
    # int32 offsets are read: the refusal is the next rule's (k's head dim)
    attempt_attention("attn_int32_offsets", qkv[0], bshd((10, 2, 128), i=1), qkv[2], out=qkv[3],
                      cu_seqlens_q=Tensor((3,), "int32", ptr=0x7f0050000000),
                      cu_seqlens_k=Tensor((3,), "int32", ptr=0x7f0060000000))
    fwd = [bshd((1, 8, 2, 64), i=i) for i in range(4)]
    attempt_with(tessel.attention_backward, "attn_bwd_cpu_dout", *fwd, bshd((1, 8, 2, 64), device=-1, i=4),
                 Tensor((1, 2, 8), ptr=0x7f0050000000))
    attempt_with(tessel.attention_backward, "attn_bwd_dq_shape", *fwd, bshd((1, 8, 2, 64), i=4),
                 Tensor((1, 2, 8), ptr=0x7f0050000000), dq=bshd((1, 8, 2, 128), i=6))
    out["streams_asked"] = streams_asked
    print(json.dumps(out))
    """
)


def run_child():
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_torch_tensors_are_read_directly_and_refused_with_the_documented_errors():
    out = run_child()
    assert out["warned"]
    assert out["cpu"] == ["ValueError", "a: is a torch tensor on cpu; tessel needs CUDA tensors"]
    assert out["float64"][0] == "TypeError" and out["float64"][1].startswith("b: dtype torch.float64 is not supported")
    assert out["k"][0] == "ValueError" and out["k"][1].startswith("b: has 6 rows, but a has 5 columns")
    assert out["device_of_b"] == ["ValueError", "b: is on CUDA device 1, but a is on device 0; all operands must be on one device"]
    assert out["devices"][0] == "ValueError" and out["devices"][1].startswith("b: is on CUDA device 0, but a is on device 1")
    assert out["e5m2_pair"][0] == "TypeError" and "e5m2 with a's dtype e5m2" in out["e5m2_pair"][1]
    assert out["empty"][0] in ("ok", "RuntimeError"), out["empty"]
    assert out["attn_cpu"] == ["ValueError", "q: is a torch tensor on cpu; tessel needs CUDA tensors"]
    assert out["attn_int32_q"][0] == "TypeError" and out["attn_int32_q"][1].startswith(
        "q: dtype torch.int32 is not supported; tessel takes float32")
    assert out["attn_float_offsets"] == [
        "TypeError", "cu_seqlens_q: dtype torch.float32 is not supported; sequence offsets are int32"]
    assert out["attn_int32_offsets"][0] == "ValueError"
    assert out["attn_int32_offsets"][1].startswith("k: head dim 128 differs from q's 64"), out["attn_int32_offsets"]
    assert out["attn_bwd_cpu_dout"] == ["ValueError", "dout: is a torch tensor on cpu; tessel needs CUDA tensors"]
    assert out["attn_bwd_dq_shape"][0] == "ValueError"
    assert out["attn_bwd_dq_shape"][1].startswith("dq: shape (1, 8, 2, 128) is not q's (1, 8, 2, 64)"), out["attn_bwd_dq_shape"]
    # the default stream is torch's current one on a's device, asked for once per call that gets that far
    assert out["streams_asked"] and set(out["streams_asked"]) == {0}
