// src/attention/attention.cpp -- the attention-forward host API: the registry of compiled
// kernels, the choice among them, and the launch (tessel/attention/attention.hpp).
#include "attention_instances.hpp"
#include "../runtime/current_device.hpp"

#include <tessel/attention/attention.hpp>
#include <tessel/attention/attention_validate.hpp>

#include <cuda_runtime_api.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <set>
#include <utility>
#include <string>
#include <string_view>

namespace tessel {

namespace {

namespace d = kernel::detail;

struct AttentionEntry {
  char const* name;
  DType dtype;
  int d, dv;
  int min_sm;  // 80: every GPU from sm_80; 90: the sm_90a kernels (sm_90 only)
  d::AttentionInstance (*instance)();
  // The automatic choice takes it only with min_seqlen_k to max_seqlen_k keys (0: no bound), only
  // without a sliding window (no_window; a causal mask alone is none) and only with no mask at all
  // (unmasked: neither causal nor a window); else the next entry for the same head dims.
  std::int64_t min_seqlen_k = 0, max_seqlen_k = 0;
  bool no_window = false, unmasked = false;
};

#define TESSEL_ENTRY_FROM(arch_, dtype_, dims_, d_, dv_, min_seqlen_k_, max_seqlen_k_, no_window_, unmasked_)  \
  AttentionEntry {                                                                                            \
    "sm" #arch_ "_attention_" #dtype_ "_" #dims_, DType::dtype_, d_, dv_, arch_,                              \
        d::sm##arch_##_attention_instance_##dtype_##_##dims_, min_seqlen_k_, max_seqlen_k_, no_window_,       \
        unmasked_                                                                                             \
  }
#define TESSEL_ENTRY(arch_, dtype_, dims_, d_, dv_) TESSEL_ENTRY_FROM(arch_, dtype_, dims_, d_, dv_, 0, 0, false, false)
// Without a mask, the persistent kernels up to 1024 keys (D 64) and below 2048 (D 128); D 128's
// 192-key blocks from 2048 keys without a sliding window (causal or not), 128 below or with one
// (the kernels' files have the measurements).
#define TESSEL_SM90_ENTRIES(dtype_)                                                                            \
  TESSEL_ENTRY_FROM(90, dtype_, d64_persistent, 64, 64, 0, 1024, false, true),                                \
      TESSEL_ENTRY(90, dtype_, d64, 64, 64),                                                                  \
      TESSEL_ENTRY_FROM(90, dtype_, d128_k128_persistent, 128, 128, 0, 2047, false, true),                    \
      TESSEL_ENTRY_FROM(90, dtype_, d128, 128, 128, 2048, 0, true, false),                                    \
      TESSEL_ENTRY(90, dtype_, d128_k128, 128, 128), TESSEL_ENTRY(90, dtype_, d192, 192, 192),                 \
      TESSEL_ENTRY(90, dtype_, d192x128, 192, 128), TESSEL_ENTRY(90, dtype_, d256, 256, 256)
#define TESSEL_SM80_ENTRIES(dtype_)                                                                            \
  TESSEL_ENTRY(80, dtype_, d64, 64, 64), TESSEL_ENTRY(80, dtype_, d96, 96, 96),                                \
      TESSEL_ENTRY(80, dtype_, d128, 128, 128), TESSEL_ENTRY(80, dtype_, d192, 192, 192),                      \
      TESSEL_ENTRY(80, dtype_, d192x128, 192, 128), TESSEL_ENTRY(80, dtype_, d256, 256, 256)

// In the order the automatic choice prefers them (and `tessel list` prints them).
constexpr std::array kEntries{TESSEL_SM90_ENTRIES(bf16), TESSEL_SM90_ENTRIES(f16), TESSEL_SM80_ENTRIES(bf16),
                              TESSEL_SM80_ENTRIES(f16)};

#undef TESSEL_SM80_ENTRIES
#undef TESSEL_SM90_ENTRIES
#undef TESSEL_ENTRY
#undef TESSEL_ENTRY_FROM

constexpr int kSm80 = 80, kSm90 = 90;

// What the sm_90a kernels' tensor maps take: a fixed-length batch (TMA needs every extent on the
// host) and Q, K and V, which they load by TMA, and O, which they store by TMA, each a tensor map
// can describe (so an O with a zero stride over more than one head or batch runs the sm_80 kernel).
bool sm90_takes(AttentionArguments const& a) {
  AttentionOperand const o{a.o, a.o_batch_stride, a.o_row_stride, a.o_head_stride};
  return !attention_is_varlen(a) && d::sm90_tma_loads(a.q, a.heads, a.batch) && d::sm90_tma_loads(a.k, a.kv_heads, a.batch) &&
         d::sm90_tma_loads(a.v, a.kv_heads, a.batch) && d::sm90_tma_loads(o, a.heads, a.batch);
}

// The entry for the call's dtype and head dims, or the one it names. cc: the compute capability
// the choice is for (0: none known -- the sm_80 kernels).
Status select_entry(AttentionArguments const& a, int cc, AttentionEntry const** out) {
  int const dv = attention_head_dim_v(a);
  if (a.kernel != nullptr && std::string_view(a.kernel) != "auto") {
    for (auto const& e : kEntries) {
      if (std::string_view(a.kernel) != e.name) continue;
      if (e.dtype != a.dtype || e.d != a.head_dim || e.dv != dv)
        return Status::error(StatusCode::invalid_argument,
                             std::string("kernel: ") + e.name + " computes " + to_string(e.dtype) + " with head dims (" +
                                 std::to_string(e.d) + ", " + std::to_string(e.dv) + "); the call is " +
                                 to_string(a.dtype) + " (" + std::to_string(a.head_dim) + ", " + std::to_string(dv) + ")");
      if (e.min_sm == kSm90 && !sm90_takes(a))
        return Status::error(StatusCode::not_supported,
                             std::string("kernel: ") + e.name +
                                 " loads and stores by TMA: it takes fixed-length batches whose Q, K, V and O are 16-byte "
                                 "aligned with strides of whole 16-byte units, none zero over more than one row, head or batch");
      *out = &e;
      return Status::success();
    }
    return Status::error(StatusCode::invalid_argument,
                         std::string("kernel: '") + a.kernel + "' is not a compiled attention kernel (`tessel list` shows them)");
  }
  bool const hopper = cc == kSm90 && sm90_takes(a);
  bool const windowed = a.window_left >= 0 || a.window_right >= 0;  // (a causal mask alone is no window)
  for (auto const& e : kEntries) {
    if ((e.min_sm == kSm90 && !hopper) || a.seqlen_k < e.min_seqlen_k || (e.max_seqlen_k > 0 && a.seqlen_k > e.max_seqlen_k) ||
        (e.no_window && windowed) || (e.unmasked && (windowed || a.causal)))
      continue;
    if (e.dtype == a.dtype && e.d == a.head_dim && e.dv == dv) {
      *out = &e;
      return Status::success();
    }
  }
  return Status::error(StatusCode::not_supported, std::string("head_dim: no compiled kernel for ") + to_string(a.dtype) +
                                                      " with head dims (" + std::to_string(a.head_dim) + ", " +
                                                      std::to_string(dv) + ")");
}

// The compute capability of the current device, 0 when there is none.
int current_cc() {
  detail::Here h;
  return detail::current_device(&h) ? h.cc : 0;
}

}  // namespace

bool kernel::detail::sm90_tma_loads(AttentionOperand const& t, std::int64_t heads, std::int64_t batch) {
  constexpr std::int64_t kUnit = 8;  // 16-bit elements per 16 bytes
  auto const stride_ok = [](std::int64_t stride, std::int64_t extent) { return stride % kUnit == 0 && (stride > 0 || extent == 1); };
  return reinterpret_cast<std::uintptr_t>(t.ptr) % 16 == 0 && stride_ok(t.row_stride, 2) && stride_ok(t.head_stride, heads) &&
         stride_ok(t.batch_stride, batch);
}

Status kernel::detail::attention_kernel_runs_here(char const* name, int min_sm,
                                                  cudaError_t (*attributes)(cudaFuncAttributes*)) {
  tessel::detail::Here h;
  if (Status s = tessel::detail::current_device(&h); !s) return s;
  std::string const sm = "sm_" + std::to_string(h.cc);
  if (h.cc < kSm80)
    return Status::error(StatusCode::arch_mismatch, std::string("kernel ") + name + " needs sm_80 or newer; this GPU is " + sm);
  if (min_sm == kSm90 && h.cc != kSm90)
    return Status::error(StatusCode::arch_mismatch, std::string("kernel ") + name + " is built for sm_90a only; this GPU is " + sm);
  static std::mutex mu;
  static std::set<std::pair<void const*, int>> seen;  // (the kernel's probe, device) that loaded
  std::pair<void const*, int> const key{reinterpret_cast<void const*>(attributes), h.device};
  {
    std::lock_guard<std::mutex> lock(mu);
    if (seen.count(key) != 0) return Status::success();
  }
  cudaFuncAttributes attr{};
  if (cudaError_t const err = attributes(&attr); err != cudaSuccess) {
    (void)cudaGetLastError();
    return Status::error(StatusCode::arch_mismatch, std::string("kernel ") + name + " has no image this " + sm +
                                                        " GPU can run (" + cudaGetErrorName(err) +
                                                        "); rebuild tessel with CMAKE_CUDA_ARCHITECTURES including " +
                                                        std::to_string(h.cc));
  }
  std::lock_guard<std::mutex> lock(mu);
  seen.insert(key);
  return Status::success();
}

Status kernel::detail::attention_check_grid(AttentionArguments const& a) {
  if (a.heads > 65535)
    return Status::error(StatusCode::not_supported, "heads: " + std::to_string(a.heads) + " exceeds 65535 (the grid's y extent)");
  if (a.batch > 65535)
    return Status::error(StatusCode::not_supported, "batch: " + std::to_string(a.batch) + " exceeds 65535 (the grid's z extent)");
  return Status::success();
}

kernel::AttentionParams kernel::detail::attention_params(AttentionArguments const& a, int blk_m) {
  kernel::AttentionParams p{};
  p.q = a.q.ptr, p.k = a.k.ptr, p.v = a.v.ptr, p.o = a.o, p.lse = a.lse;
  p.q_batch_stride = a.q.batch_stride, p.q_row_stride = a.q.row_stride, p.q_head_stride = a.q.head_stride;
  p.k_batch_stride = a.k.batch_stride, p.k_row_stride = a.k.row_stride, p.k_head_stride = a.k.head_stride;
  p.v_batch_stride = a.v.batch_stride, p.v_row_stride = a.v.row_stride, p.v_head_stride = a.v.head_stride;
  p.o_batch_stride = a.o_batch_stride, p.o_row_stride = a.o_row_stride, p.o_head_stride = a.o_head_stride;
  p.lse_batch_stride = a.lse_batch_stride, p.lse_head_stride = a.lse_head_stride;
  p.cu_seqlens_q = a.cu_seqlens_q, p.cu_seqlens_k = a.cu_seqlens_k;
  p.seqlen_q = int(a.seqlen_q), p.seqlen_k = int(a.seqlen_k);
  p.heads = int(a.heads);
  p.kv_group = int(a.heads / a.kv_heads);
  p.m_blocks = int((a.seqlen_q + blk_m - 1) / blk_m);
  p.bottom_right = a.align == MaskAlign::bottom_right;
  p.window_left = attention_window_left(a), p.window_right = attention_window_right(a);
  float const scale = attention_softmax_scale(a);
  constexpr float kLog2e = 1.4426950408889634f;
  if (a.softcap > 0.0f) {
    p.softcap = a.softcap;
    p.softcap_scale = scale / a.softcap;
    p.score_log2 = kLog2e;
    p.lse_scale = 1.0f;
  } else {
    // softmax(scale * s) with scale < 0 is softmax(|scale| * (-s)): the kernel negates the scores.
    float const magnitude = scale < 0.0f ? -scale : scale;
    p.softcap = 0.0f, p.softcap_scale = 0.0f;
    p.negate_scores = scale < 0.0f;
    p.score_log2 = magnitude * kLog2e;
    p.lse_scale = magnitude;
  }
  // Later query tiles see more keys under a causal mask (and a right window bound): start them first.
  p.longest_first = p.window_right >= 0;
  return p;
}

namespace {

// What every entry point does first: the rules, then (unless there is nothing to write: *e stays
// null) the kernel and its image for this GPU.
Status entry_for_call(AttentionArguments const& a, AttentionEntry const** e, d::AttentionInstance* inst) {
  *e = nullptr;
  if (Status s = attention_validate(a); !s) return s;
  AttentionEntry const* picked = nullptr;
  if (Status s = select_entry(a, current_cc(), &picked); !s) return s;
  if (attention_is_noop(a)) return Status::success();
  if (Status s = d::attention_check_grid(a); !s) return s;
  *inst = picked->instance();
  if (Status s = d::attention_kernel_runs_here(picked->name, picked->min_sm, inst->attributes); !s) return s;
  *e = picked;
  return Status::success();
}

}  // namespace

Status attention_kernel_name_for(AttentionArguments const& a, int cc, char const** name) {
  *name = nullptr;
  if (Status s = attention_validate(a); !s) return s;
  AttentionEntry const* e = nullptr;
  if (Status s = select_entry(a, cc, &e); !s) return s;
  *name = e->name;
  return Status::success();
}

Status attention_kernel_name(AttentionArguments const& a, char const** name) {
  return attention_kernel_name_for(a, current_cc(), name);
}

Status can_implement(AttentionArguments const& a) {
  AttentionEntry const* e = nullptr;
  d::AttentionInstance inst{};
  return entry_for_call(a, &e, &inst);
}

Status attention_forward(AttentionArguments const& a, cudaStream_t stream) {
  AttentionEntry const* e = nullptr;
  d::AttentionInstance inst{};
  if (Status s = entry_for_call(a, &e, &inst); !s || e == nullptr) return s;
  // An error left by earlier work is reported, not attributed to this launch.
  if (cudaError_t const pending = cudaGetLastError(); pending != cudaSuccess)
    return Status::error(StatusCode::cuda_error, std::string("pending CUDA error before attention_forward: ") +
                                                     cudaGetErrorName(pending) + ": " + cudaGetErrorString(pending));
  kernel::AttentionParams const p = d::attention_params(a, inst.blk_m);
  if (Status s = inst.launch(a, p, stream); !s)
    return Status::error(s.code, std::string("launch of ") + e->name + ": " + s.reason);
  return Status::success();
}

int attention_kernel_count() { return int(kEntries.size()); }

AttentionKernelInfo attention_kernel_info(int i) {
  static std::array<std::string, kEntries.size()> descriptions = [] {
    std::array<std::string, kEntries.size()> out;
    for (std::size_t j = 0; j < kEntries.size(); ++j) {
      d::AttentionInstance const inst = kEntries[j].instance();
      std::string const how = kEntries[j].min_sm == kSm90 ? "TMA + wgmma, producer and " +
                                                                std::to_string(inst.threads / 128 - 1) +
                                                                " consumer warpgroups"
                                                          : "mma.sync + ldmatrix + cp.async";
      out[j] = std::string(to_string(kEntries[j].dtype)) + " head dims (" + std::to_string(inst.d) + ", " +
               std::to_string(inst.dv) + "): " + how + ", query tile " + std::to_string(inst.blk_m) +
               ", key tile " + std::to_string(inst.blk_n) + ", " + std::to_string(inst.threads) + " threads, " +
               std::to_string(inst.smem_bytes / 1024) + " KiB shared memory";
    }
    return out;
  }();
  if (i < 0 || i >= attention_kernel_count()) return {"", "", 0};
  return {kEntries[std::size_t(i)].name, descriptions[std::size_t(i)].c_str(), kEntries[std::size_t(i)].min_sm};
}

}  // namespace tessel
