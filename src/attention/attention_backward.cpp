// src/attention/attention_backward.cpp -- the attention-backward host API: its registry of
// compiled kernels, the workspace, the launch (tessel/attention/attention_backward.hpp).
#include "attention_backward_instances.hpp"
#include "attention_instances.hpp"
#include "../runtime/current_device.hpp"

#include <tessel/attention/attention_backward.hpp>

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessel {

namespace {

namespace d = kernel::detail;

struct BackwardEntry {
  char const* name;
  int min_sm;  // 80: every GPU from sm_80; 90: sm_90a only
  DType dtype;
  int d, dv;
  d::AttentionBackwardInstance (*instance)();
  bool ordered = false;  // sm_90a: the deterministic mode only (dQ added in key-block order); else its default mode only
  bool takes_softcap = true;  // false: the sm_90a D 256 kernel whose consumers share the score tiles
};

#define TESSEL_ENTRY(sm_, dtype_, dims_, d_, dv_)                                                                       \
  BackwardEntry {                                                                                                      \
    "sm" #sm_ "_attention_bwd_" #dtype_ "_" #dims_, sm_, DType::dtype_, d_, dv_, d::sm##sm_##_attention_bwd_instance_##dtype_##_##dims_ \
  }
#define TESSEL_ORDERED_ENTRY(dtype_, d_)                                                                               \
  BackwardEntry {                                                                                                      \
    "sm90_attention_bwd_" #dtype_ "_d" #d_ "_deterministic", 90, DType::dtype_, d_, d_,                                \
        d::sm90_attention_bwd_instance_##dtype_##_d##d_##_deterministic, true                                        \
  }
#define TESSEL_SM90_ENTRIES(dtype_)                                                                                  \
  TESSEL_ENTRY(90, dtype_, d64, 64, 64), TESSEL_ENTRY(90, dtype_, d128, 128, 128),                                   \
      BackwardEntry{"sm90_attention_bwd_" #dtype_ "_d256", 90, DType::dtype_, 256, 256,                              \
                    d::sm90_attention_bwd_instance_##dtype_##_d256, false, false},                                   \
      TESSEL_ENTRY(90, dtype_, d256_softcap, 256, 256)
#define TESSEL_SM80_ENTRIES(dtype_)                                                                                   \
  TESSEL_ENTRY(80, dtype_, d64, 64, 64), TESSEL_ENTRY(80, dtype_, d96, 96, 96), TESSEL_ENTRY(80, dtype_, d128, 128, 128), \
      TESSEL_ENTRY(80, dtype_, d192, 192, 192), TESSEL_ENTRY(80, dtype_, d192x128, 192, 128),                        \
      TESSEL_ENTRY(80, dtype_, d256, 256, 256)
// In the order the automatic choice prefers them (and `tessel list` prints them).
constexpr std::array kEntries{TESSEL_ORDERED_ENTRY(bf16, 64), TESSEL_ORDERED_ENTRY(bf16, 128), TESSEL_SM90_ENTRIES(bf16),
                              TESSEL_ORDERED_ENTRY(f16, 64), TESSEL_ORDERED_ENTRY(f16, 128), TESSEL_SM90_ENTRIES(f16), TESSEL_SM80_ENTRIES(bf16),
                              TESSEL_SM80_ENTRIES(f16)};
#undef TESSEL_SM80_ENTRIES
#undef TESSEL_SM90_ENTRIES
#undef TESSEL_ORDERED_ENTRY
#undef TESSEL_ENTRY

constexpr int kSm90 = 90;

// What an sm_90a backward entry takes, beyond what attention_backward_validate already holds every
// call to: a fixed-length batch (its tensor maps need every extent on the host); Q, K, V and dO,
// which it loads by TMA, and dK and dV, which it stores by TMA, each a tensor map can describe; and its mode -- the default (its dQ additions in no fixed order),
// or for an ordered entry the deterministic mode (its workspace then holds the turns,
// attention_backward_ordered_dq).
std::string sm90_refusal(AttentionBackwardArguments const& b, bool ordered, bool takes_softcap = true) {
  AttentionArguments const& a = b.problem;
  if (attention_is_varlen(a)) return "variable-length batches";
  if (!takes_softcap && a.softcap > 0.0f) return "a softcap (its consumers share the score tiles; the _d256_softcap kernel takes one)";
  if (ordered && !b.deterministic) return "the default mode (it is the deterministic mode's kernel)";
  if (!ordered && b.deterministic) return "the deterministic mode";
  auto const operand = [](AttentionGradient const& g) { return AttentionOperand{g.ptr, g.batch_stride, g.row_stride, g.head_stride}; };
  if (!d::sm90_tma_loads(a.q, a.heads, a.batch) || !d::sm90_tma_loads(a.k, a.kv_heads, a.batch) ||
      !d::sm90_tma_loads(a.v, a.kv_heads, a.batch) || !d::sm90_tma_loads(b.d_o, a.heads, a.batch) ||
      !d::sm90_tma_loads(operand(b.dk), a.kv_heads, a.batch) || !d::sm90_tma_loads(operand(b.dv), a.kv_heads, a.batch))
    return "Q, K, V, dO, dK or dV with a zero stride (TMA's tensor maps take none)";
  return {};
}

// The entry for the call's dtype and head dims, or the one it names. cc: the compute capability
// the choice is for (0: none known -- the sm_80 kernels).
Status select_entry(AttentionBackwardArguments const& b, int cc, BackwardEntry const** out) {
  AttentionArguments const& a = b.problem;
  int const dv = attention_head_dim_v(a);
  bool const named = b.kernel != nullptr && std::string_view(b.kernel) != "auto";
  for (auto const& e : kEntries) {
    bool const hopper = cc == kSm90 && sm90_refusal(b, e.ordered, e.takes_softcap).empty();
    if (named && std::string_view(b.kernel) != e.name) continue;
    if (e.dtype != a.dtype || e.d != a.head_dim || e.dv != dv) {
      if (!named) continue;
      return Status::error(StatusCode::invalid_argument,
                           std::string("kernel: ") + e.name + " computes " + to_string(e.dtype) + " with head dims (" +
                               std::to_string(e.d) + ", " + std::to_string(e.dv) + "); the call is " + to_string(a.dtype) +
                               " (" + std::to_string(a.head_dim) + ", " + std::to_string(dv) + ")");
    }
    if (e.min_sm == kSm90) {
      if (named) {
        if (std::string const why = sm90_refusal(b, e.ordered, e.takes_softcap); !why.empty())
          return Status::error(StatusCode::not_supported, std::string("kernel: ") + e.name + " does not take " + why);
      } else if (!hopper) {
        continue;
      }
    }
    *out = &e;
    return Status::success();
  }
  if (named)
    return Status::error(StatusCode::invalid_argument, std::string("kernel: '") + b.kernel +
                                                           "' is not a compiled attention-backward kernel");
  return Status::error(StatusCode::not_supported, std::string("head_dim: no compiled backward kernel for ") +
                                                      to_string(a.dtype) + " with head dims (" +
                                                      std::to_string(a.head_dim) + ", " + std::to_string(dv) + ")");
}

// The compute capability of the current device, 0 when there is none.
int current_cc() {
  tessel::detail::Here h;
  return tessel::detail::current_device(&h) ? h.cc : 0;
}

// The entry a call runs (nullptr when it reads nothing) and its instance; `sms`, where given, the
// current device's SM count (0 with none).
Status entry_for_call(AttentionBackwardArguments const& b, BackwardEntry const** e, d::AttentionBackwardInstance* inst,
                      int* sms = nullptr) {
  *e = nullptr;
  if (Status s = attention_backward_validate(b); !s) return s;
  tessel::detail::Here h;
  bool const here = tessel::detail::current_device(&h).ok();
  if (sms != nullptr) *sms = here ? h.sms : 0;
  BackwardEntry const* picked = nullptr;
  if (Status s = select_entry(b, here ? h.cc : 0, &picked); !s) return s;
  if (attention_backward_is_noop(b.problem)) return Status::success();
  if (Status s = d::attention_check_grid(b.problem); !s) return s;
  *inst = picked->instance();
  if (Status s = d::attention_kernel_runs_here(picked->name, picked->min_sm, inst->attributes); !s) return s;
  *e = picked;
  return Status::success();
}

Status cuda_status(cudaError_t err, char const* what) {
  if (err == cudaSuccess) return Status::success();
  return Status::error(StatusCode::cuda_error, std::string(what) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

}  // namespace

Status attention_backward_workspace_size(AttentionBackwardArguments const& b, std::size_t* bytes) {
  *bytes = 0;
  if (Status s = attention_backward_validate(b); !s) return s;
  *bytes = attention_backward_workspace_layout(b.problem, b.deterministic).bytes;
  return Status::success();
}

Status attention_backward_kernel_name_for(AttentionBackwardArguments const& b, int cc, char const** name) {
  *name = nullptr;
  if (Status s = attention_backward_validate(b); !s) return s;
  BackwardEntry const* picked = nullptr;
  if (Status s = select_entry(b, cc, &picked); !s) return s;
  *name = picked->name;
  return Status::success();
}

Status attention_backward_kernel_name(AttentionBackwardArguments const& b, char const** name) {
  return attention_backward_kernel_name_for(b, current_cc(), name);
}

Status can_implement(AttentionBackwardArguments const& b) {
  BackwardEntry const* e = nullptr;
  d::AttentionBackwardInstance inst{};
  return entry_for_call(b, &e, &inst);
}

Status attention_backward(AttentionBackwardArguments const& b, cudaStream_t stream) {
  BackwardEntry const* e = nullptr;
  d::AttentionBackwardInstance inst{};
  int sms = 0;
  if (Status s = entry_for_call(b, &e, &inst, &sms); !s || e == nullptr) return s;
  if (cudaError_t const pending = cudaGetLastError(); pending != cudaSuccess)
    return Status::error(StatusCode::cuda_error, std::string("pending CUDA error before attention_backward: ") +
                                                     cudaGetErrorName(pending) + ": " + cudaGetErrorString(pending));
  AttentionArguments const& a = b.problem;
  AttentionBackwardWorkspace const w = attention_backward_workspace_layout(a, b.deterministic);

  kernel::AttentionBackwardParams p{};
  p.fwd = d::attention_params(a, inst.blk_m);
  p.d_o = b.d_o.ptr;
  p.do_batch_stride = b.d_o.batch_stride, p.do_row_stride = b.d_o.row_stride, p.do_head_stride = b.d_o.head_stride;
  p.dq = b.dq.ptr;
  p.dq_batch_stride = b.dq.batch_stride, p.dq_row_stride = b.dq.row_stride, p.dq_head_stride = b.dq.head_stride;
  p.dk = b.dk.ptr;
  p.dk_batch_stride = b.dk.batch_stride, p.dk_row_stride = b.dk.row_stride, p.dk_head_stride = b.dk.head_stride;
  p.dv = b.dv.ptr;
  p.dv_batch_stride = b.dv.batch_stride, p.dv_row_stride = b.dv.row_stride, p.dv_head_stride = b.dv.head_stride;
  p.rows = a.batch * a.seqlen_q;
  p.stat_seqlen = attention_backward_stat_seqlen(a);
  p.stat_rows = a.batch * p.stat_seqlen;
  p.head_dim = a.head_dim, p.head_dim_v = attention_head_dim_v(a);
  p.kv_heads = int(a.kv_heads);
  p.n_blocks = int((a.seqlen_k + inst.blk_n - 1) / inst.blk_n);
  p.grad_scale = attention_softmax_scale(a);

  // The workspace: the caller's, or one allocated and freed in stream order.
  char* ws = static_cast<char*>(b.workspace);
  bool const owned = ws == nullptr && w.bytes > 0;
  if (owned) {
    void* raw = nullptr;
    if (Status s = cuda_status(cudaMallocAsync(&raw, w.bytes, stream), "cudaMallocAsync (attention_backward workspace)"); !s)
      return s;
    ws = static_cast<char*>(raw);
  }
  Status s = Status::success();
  if (w.bytes > 0) {
    p.lse_log2 = reinterpret_cast<float*>(ws + w.lse_log2);
    p.dsum = reinterpret_cast<float*>(ws + w.dsum);
    if (!b.deterministic || e->ordered) {  // (an ordered entry's workspace has them: attention_backward_ordered_dq)
      p.dq_accum = reinterpret_cast<float*>(ws + w.dq_accum);
      if (e->min_sm == 90 && !e->ordered)
        p.block_group = kernel::attention_bwd_block_group(p.fwd, std::int64_t(p.n_blocks) * a.kv_heads * a.batch, sms);
      if (e->ordered) {
        p.dq_turns = reinterpret_cast<unsigned*>(ws + w.dq_turns);
        std::int64_t const m = (a.seqlen_q + inst.blk_m - 1) / inst.blk_m;  // query blocks; p.n_blocks key blocks
        p.dq_rotated = kernel::attention_bwd_dq_rotates(p.fwd, m, p.n_blocks, sms);
      }
      s = cuda_status(cudaMemsetAsync(p.dq_accum, 0, w.bytes - w.dq_accum, stream), "cudaMemsetAsync (dQ accumulator)");
    }
  }
  if (s) s = inst.launch(b, p, stream);
  if (!s) s = Status::error(s.code, std::string("launch of ") + e->name + ": " + s.reason);
  if (owned) {
    Status const freed = cuda_status(cudaFreeAsync(ws, stream), "cudaFreeAsync (attention_backward workspace)");
    if (s) s = freed;
  }
  return s;
}

int attention_backward_kernel_count() { return int(kEntries.size()); }

AttentionBackwardKernelInfo attention_backward_kernel_info(int i) {
  static std::array<std::string, kEntries.size()> descriptions = [] {
    std::array<std::string, kEntries.size()> out;
    for (std::size_t j = 0; j < kEntries.size(); ++j) {
      d::AttentionBackwardInstance const inst = kEntries[j].instance();
      std::string const how = kEntries[j].min_sm == kSm90
                                  ? "TMA + wgmma, producer and " + std::to_string(inst.threads / 128 - 1) + " consumer warpgroups"
                                  : "mma.sync + ldmatrix + cp.async";
      out[j] = std::string(to_string(kEntries[j].dtype)) + " head dims (" + std::to_string(inst.d) + ", " +
               std::to_string(inst.dv) + "): backward, " + how + ", query tile " +
               std::to_string(inst.blk_m) + ", key tile " + std::to_string(inst.blk_n) + ", " +
               std::to_string(inst.threads) + " threads, " + std::to_string(inst.smem_bytes / 1024) + " KiB shared memory";
    }
    return out;
  }();
  if (i < 0 || i >= attention_backward_kernel_count()) return {"", "", 0};
  return {kEntries[std::size_t(i)].name, descriptions[std::size_t(i)].c_str(), kEntries[std::size_t(i)].min_sm};
}

}  // namespace tessel
