// tessel/gemm/device/grouped_gemm_arguments.hpp -- the problems a grouped GEMM call describes, and
// their argument rules.
//
// Contiguous form (GroupedGemmArguments; torch._grouped_mm, a mixture-of-experts layer):
//   for g in [0, groups):  D[s_g:e_g, :] = alpha * A[s_g:e_g, :] * B[g]^T + beta * C[s_g:e_g, :]
// A is total_m x K row-major (lda; tokens sorted by group), C and D total_m x N row-major (ldc,
// ldd), B[g] the N x K matrix of group g: b_layout nk stores B as [G, N, K] (K contiguous, a
// Linear layer's weight: B[g](j, k) at b + g * batch_stride_b + j * ldb + k), kn as [G, K, N]
// (N contiguous: at b + g * batch_stride_b + k * ldb + j). Group g's rows are [s_g, e_g) with
// e_g = offsets[g] and s_0 = 0, s_g = offsets[g - 1]: `offsets` is a DEVICE array of G int32
// cumulative row ends, read by the kernel itself, so the host never waits for the sizes.
// What the kernel does with offsets that break the rules (they are not checked on the host, which
// never reads them): each end is clamped into [0, total_m], and a group whose end lies below its
// start is empty; so no row outside [0, total_m) is touched, and rows [offsets[G-1], total_m) are
// left as they were. Decreasing offsets can make groups overlap; overlapping rows are then
// written by more than one group, in no defined order.
//
// Array form (GroupedGemmArrayArguments; cublasGemmGroupedBatchedEx's problem): groups with their
// own m, n, k, pointers and leading dimensions, all in HOST arrays (the pointers are device
// addresses): D_g (m_g x n_g row-major) = alpha * A_g (m_g x k_g row-major) * op(B_g) + beta * C_g,
// with B_g n_g x k_g (nk, ldb_g >= k_g) or k_g x n_g (kn, ldb_g >= n_g).
//
// dtypes: A and B bf16 or fp16; C and D the same type or fp32; fp32 accumulation.
// Plain C++: no CUDA headers needed.
#pragma once

#include <tessel/core/dtype.hpp>
#include <tessel/core/status.hpp>
#include <tessel/gemm/device/gemm_validate.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace tessel {

// How each group's B is stored (see the file comment).
enum class GroupedLayoutB { nk, kn };

constexpr char const* to_string(GroupedLayoutB l) { return l == GroupedLayoutB::nk ? "nk" : "kn"; }

// Groups one grouped_gemm launch takes (each CTA keeps every group's rows in shared memory).
inline constexpr int kGroupedGemmMaxGroups = 1024;

struct GroupedGemmArguments {
  int groups = 0;
  std::int64_t total_m = 0, n = 0, k = 0;
  DType ab_type = DType::bf16;  // A and B
  DType d_type = DType::bf16;   // C and D
  int const* offsets = nullptr;  // device memory: [groups] cumulative row ends
  void const* a = nullptr; std::int64_t lda = 0;
  void const* b = nullptr; std::int64_t ldb = 0; std::int64_t batch_stride_b = 0;
  GroupedLayoutB b_layout = GroupedLayoutB::nk;
  void const* c = nullptr; std::int64_t ldc = 0;  // read only when beta != 0
  void* d = nullptr; std::int64_t ldd = 0;
  float alpha = 1.0f, beta = 0.0f;
};

// A packed contiguous problem: lda = K, B's rows and groups back to back, ldc = ldd = N. Pointers unset.
inline GroupedGemmArguments make_grouped_gemm(int groups, std::int64_t total_m, std::int64_t n, std::int64_t k, DType ab,
                                              DType d, GroupedLayoutB layout = GroupedLayoutB::nk) {
  GroupedGemmArguments g;
  g.groups = groups, g.total_m = total_m, g.n = n, g.k = k, g.ab_type = ab, g.d_type = d, g.b_layout = layout;
  g.lda = k > 1 ? k : 1;
  g.ldb = layout == GroupedLayoutB::nk ? (k > 1 ? k : 1) : (n > 1 ? n : 1);
  g.batch_stride_b = g.ldb * (layout == GroupedLayoutB::nk ? n : k);
  g.ldc = g.ldd = n > 1 ? n : 1;
  return g;
}

struct GroupedGemmArrayArguments {
  int groups = 0;
  DType ab_type = DType::bf16, d_type = DType::bf16;
  GroupedLayoutB b_layout = GroupedLayoutB::nk;
  // Host arrays of `groups` entries each (C's may be null when beta == 0).
  std::int64_t const* m = nullptr;
  std::int64_t const* n = nullptr;
  std::int64_t const* k = nullptr;
  void const* const* a = nullptr; std::int64_t const* lda = nullptr;
  void const* const* b = nullptr; std::int64_t const* ldb = nullptr;
  void const* const* c = nullptr; std::int64_t const* ldc = nullptr;
  void* const* d = nullptr; std::int64_t const* ldd = nullptr;
  float alpha = 1.0f, beta = 0.0f;
};

namespace detail {

inline Status grouped_unsupported(std::string why) { return Status::error(StatusCode::not_supported, std::move(why)); }

inline Status grouped_check_dtypes(DType ab, DType d) {
  if (ab != DType::bf16 && ab != DType::f16)
    return gemm_invalid(std::string("ab_type: ") + to_string(ab) + " is not supported; grouped GEMM takes bf16 or fp16 A and B");
  if (d != ab && d != DType::f32)
    return gemm_invalid(std::string("d_type: ") + to_string(d) + " output with " + to_string(ab) + " inputs; " +
                           to_string(ab) + " inputs write " + to_string(ab) + " or fp32");
  return Status::success();
}

}  // namespace detail

// True when the call writes nothing (no rows or no columns).
constexpr bool grouped_gemm_is_noop(GroupedGemmArguments const& g) { return g.total_m == 0 || g.n == 0; }

// Every host-side rule of the contiguous form (see the file comment); reads no device memory and
// makes no CUDA call. invalid_argument for a broken rule; not_supported for a valid call the
// kernel cannot take (its TMA reads need 16-byte aligned rows: pad K, or N for kn, to a multiple of 8).
inline Status grouped_gemm_validate(GroupedGemmArguments const& g) {
  using detail::gemm_invalid;
  using detail::gemm_num;
  using detail::grouped_unsupported;
  if (g.groups <= 0)
    return gemm_invalid("groups: " + gemm_num(std::int64_t(g.groups)) + " must be >= 1");
  if (g.groups > kGroupedGemmMaxGroups)
    return grouped_unsupported("groups: " + gemm_num(std::int64_t(g.groups)) + " is above the " +
                               gemm_num(std::int64_t(kGroupedGemmMaxGroups)) + " one launch takes; split the call");
  struct Size { char const* name; std::int64_t v; };
  for (Size s : {Size{"total_m", g.total_m}, Size{"n", g.n}, Size{"k", g.k}}) {
    if (s.v < 0) return gemm_invalid(std::string(s.name) + ": " + gemm_num(s.v) + " is negative; sizes must be >= 0");
    if (s.v > 0x7fffffff)
      return grouped_unsupported(std::string(s.name) + ": " + gemm_num(s.v) + " is above 2^31 - 1 (the kernel's TMA coordinates are 32-bit)");
  }
  if (Status s = detail::grouped_check_dtypes(g.ab_type, g.d_type); !s) return s;
  if (g.b_layout != GroupedLayoutB::nk && g.b_layout != GroupedLayoutB::kn)
    return gemm_invalid("b_layout: " + gemm_num(std::int64_t(g.b_layout)) + " is not nk or kn");

  bool const nk = g.b_layout == GroupedLayoutB::nk;
  std::int64_t const b_inner = nk ? g.k : g.n, b_outer = nk ? g.n : g.k;
  struct Ld { char const* name; std::int64_t v, need; char const* rule; };
  for (Ld l : {Ld{"lda", g.lda, g.k, "A is total_m x K row-major, so lda >= max(1, K)"},
               Ld{"ldb", g.ldb, b_inner, nk ? "B is [G, N, K] (nk), so ldb >= max(1, K)" : "B is [G, K, N] (kn), so ldb >= max(1, N)"},
               Ld{"ldc", g.ldc, g.n, "C is total_m x N row-major, so ldc >= max(1, N)"},
               Ld{"ldd", g.ldd, g.n, "D is total_m x N row-major, so ldd >= max(1, N)"}}) {
    std::int64_t const need = l.need > 1 ? l.need : 1;
    if (l.v < need) return gemm_invalid(std::string(l.name) + ": " + gemm_num(l.v) + " is below the minimum " + gemm_num(need) + " (" + l.rule + ")");
  }
  if (g.groups > 1 && g.batch_stride_b < b_outer * g.ldb)
    return gemm_invalid("batch_stride_b: " + gemm_num(g.batch_stride_b) + " is below " + gemm_num(b_outer * g.ldb) +
                           " (" + (nk ? "N" : "K") + " * ldb): the groups' B matrices would overlap");
  if (grouped_gemm_is_noop(g)) return Status::success();

  std::size_t const in = size_of(g.ab_type), out = size_of(g.d_type);
  bool const reads_ab = g.k > 0 && !(g.alpha == 0.0f);
  if (g.offsets == nullptr) return gemm_invalid("offsets: null, but the groups' row ends are read (total_m, N > 0)");
  if (reinterpret_cast<std::uintptr_t>(g.offsets) % 4 != 0) return gemm_invalid("offsets: not aligned to its 4-byte int32 elements");
  if (g.d == nullptr) return gemm_invalid("d: null, but D is written (total_m, N > 0)");
  if (reinterpret_cast<std::uintptr_t>(g.d) % out != 0)
    return gemm_invalid("d: not aligned to its " + gemm_num(std::int64_t(out)) + "-byte " + to_string(g.d_type) + " elements");
  if (!(g.beta == 0.0f)) {
    if (g.c == nullptr) return gemm_invalid("c: null, but C is read (beta != 0)");
    if (reinterpret_cast<std::uintptr_t>(g.c) % out != 0)
      return gemm_invalid("c: not aligned to its " + gemm_num(std::int64_t(out)) + "-byte " + to_string(g.d_type) + " elements");
  }
  if (reads_ab) {
    if (g.a == nullptr) return gemm_invalid("a: null, but A is read (total_m, N, K > 0 and alpha != 0)");
    if (g.b == nullptr) return gemm_invalid("b: null, but B is read (total_m, N, K > 0 and alpha != 0)");
    // TMA: the base 16-byte aligned, every row (and B's group) stride a multiple of 16 bytes.
    struct Al { char const* name; void const* p; };
    for (Al a : {Al{"a", g.a}, Al{"b", g.b}})
      if (reinterpret_cast<std::uintptr_t>(a.p) % 16 != 0)
        return grouped_unsupported(std::string(a.name) + ": not 16-byte aligned; the grouped kernel reads A and B by TMA, "
                                   "which needs 16-byte aligned bases (cudaMalloc's are)");
    struct St { char const* name; std::int64_t v; char const* fix; };
    for (St s : {St{"lda", g.lda, "pad K to a multiple of 8"},
                 St{"ldb", g.ldb, nk ? "pad K to a multiple of 8" : "pad N to a multiple of 8"},
                 St{"batch_stride_b", g.groups > 1 ? g.batch_stride_b : 0, "pad each group's B"}})
      if (std::int64_t(s.v * std::int64_t(in)) % 16 != 0)
        return grouped_unsupported(std::string(s.name) + ": " + gemm_num(s.v) + " elements (" + gemm_num(s.v * std::int64_t(in)) +
                                   " bytes) is not a multiple of 16 bytes; the grouped kernel reads A and B by TMA, whose "
                                   "rows must start 16-byte aligned; " + s.fix);
  }
  return Status::success();
}

// The array form's rules: per group, the argument named with its group ("lda[3]: ...").
inline Status grouped_gemm_validate(GroupedGemmArrayArguments const& g) {
  using detail::gemm_invalid;
  using detail::gemm_num;
  if (g.groups < 0) return gemm_invalid("groups: " + gemm_num(std::int64_t(g.groups)) + " is negative");
  if (Status s = detail::grouped_check_dtypes(g.ab_type, g.d_type); !s) return s;
  if (g.groups == 0) return Status::success();
  struct Arr { char const* name; void const* p; };
  for (Arr a : {Arr{"m", g.m}, Arr{"n", g.n}, Arr{"k", g.k}, Arr{"a", g.a}, Arr{"lda", g.lda}, Arr{"b", g.b},
                Arr{"ldb", g.ldb}, Arr{"d", g.d}, Arr{"ldd", g.ldd}})
    if (a.p == nullptr) return gemm_invalid(std::string(a.name) + ": null; the array form needs a host array of `groups` entries");
  if (!(g.beta == 0.0f) && (g.c == nullptr || g.ldc == nullptr))
    return gemm_invalid("c: null, but C is read (beta != 0); pass host arrays c and ldc");
  bool const nk = g.b_layout == GroupedLayoutB::nk;
  for (int i = 0; i < g.groups; ++i) {
    std::string const at = std::string(1, '[').append(gemm_num(std::int64_t(i))).append(1, ']');
    struct Size { char const* name; std::int64_t v; };
    for (Size s : {Size{"m", g.m[i]}, Size{"n", g.n[i]}, Size{"k", g.k[i]}})
      if (s.v < 0) return gemm_invalid(std::string(s.name) + at + ": " + gemm_num(s.v) + " is negative; sizes must be >= 0");
    std::int64_t const m = g.m[i], n = g.n[i], k = g.k[i];
    auto const at_least_1 = [](std::int64_t v) { return v > 1 ? v : std::int64_t(1); };
    struct Ld { char const* name; std::int64_t v, need; };
    for (Ld l : {Ld{"lda", g.lda[i], at_least_1(k)}, Ld{"ldb", g.ldb[i], at_least_1(nk ? k : n)}, Ld{"ldd", g.ldd[i], at_least_1(n)}})
      if (l.v < l.need)
        return gemm_invalid(std::string(l.name) + at + ": " + gemm_num(l.v) + " is below the minimum " + gemm_num(l.need));
    if (m == 0 || n == 0) continue;
    if (g.d[i] == nullptr) return gemm_invalid(std::string("d") + at + ": null, but D is written (m, n > 0)");
    if (!(g.beta == 0.0f)) {
      if (g.c[i] == nullptr) return gemm_invalid(std::string("c") + at + ": null, but C is read (beta != 0)");
      if (g.ldc[i] < at_least_1(n)) return gemm_invalid(std::string("ldc") + at + ": " + gemm_num(g.ldc[i]) + " is below the minimum " + gemm_num(at_least_1(n)));
    }
    if (k > 0 && !(g.alpha == 0.0f)) {
      if (g.a[i] == nullptr) return gemm_invalid(std::string("a") + at + ": null, but A is read (m, n, k > 0 and alpha != 0)");
      if (g.b[i] == nullptr) return gemm_invalid(std::string("b") + at + ": null, but B is read (m, n, k > 0 and alpha != 0)");
    }
  }
  return Status::success();
}

}  // namespace tessel
