// tests/sm90_pick_cases.hpp -- what the sm_90a heuristic (sm90_select_gemm_kernel) must pick, each
// pick measured on an H100 or H200 (docs/sm90_gemm.md, "Choosing"; docs/PERF.md). Two tests run the
// table: tests/gpu/sm90_gemm_test.cpp through select_gemm_kernel on the GPU in hand (the cases
// whose round counts assume 132 SMs only where it has 132), and tests/host/sm90_heuristic_test.cpp
// on an assumed 132-SM GPU (one CTA per SM for every entry, as on the H100 and H200), so that a
// change of the rules shows without a GPU.
//
// Column-major D: the canonical M is the BLAS N. At most 128 wide or tall -> 128x64 where its
// tiles fit one round and fill most SMs (or K is short), else one tile row -> no cluster and one
// narrow tile column -> 128x128 in 2x1 clusters; at most 64 wide -> 64x64 where its tiles fit one
// round (64 of them for 4096 rows), else 128x64 (12288 rows: 192 tiles of 64); 129 to 256 wide
// or tall -> 128x128 in 2x1 clusters where they fit one round; otherwise 128x256 in 2x1 clusters
// unless the 1x1 kernel needs fewer rounds of tiles (enough fewer to make up for its slower
// tile), or 128x192 ones need enough fewer (below).
#pragma once

#include <tessel/gemm/device/gemm_arguments.hpp>

#include <cstdint>

namespace tessel::test {

struct Sm90PickCase {
  std::int64_t m, n, k;
  char const* layout;  // op(A), op(B): 't' row-major, 'n' column-major
  DType ab;            // A and B (fp8: D is bf16; tf32: fp32; otherwise D and C are ab)
  char const* entry;   // the name, or the start of it
  bool any_gpu;        // false: the round counts assume 132 SMs
  float beta = -0.5f;  // C is read unless 0
  int ldc_pad = 0;     // elements past C's packed leading dimension (D's stays packed)
  int ldd_pad = 0;     // elements past D's (and C's) packed leading dimension
};

// The D (and C) type the sm90 tests give inputs of type ab: bf16 for fp8, fp32 for tf32 (what
// tf32 inputs write), else ab.
inline DType sm90_test_output(DType ab) { return is_fp8(ab) ? DType::bf16 : ab == DType::tf32 ? DType::f32 : ab; }

// The problem of a case: packed operands, column-major D, alpha 1.25, null pointers (the
// heuristic reads only their alignment, and 0 is aligned).
inline GemmArguments sm90_pick_problem(Sm90PickCase const& c) {
  MatrixOrder const ao = c.layout[0] == 't' ? MatrixOrder::row_major : MatrixOrder::col_major;
  MatrixOrder const bo = c.layout[1] == 't' ? MatrixOrder::row_major : MatrixOrder::col_major;
  GemmArguments g = make_packed_gemm(c.m, c.n, c.k, 1, c.ab, sm90_test_output(c.ab), ao, bo, MatrixOrder::col_major);
  g.alpha = 1.25f, g.beta = c.beta;
  g.ldd += c.ldd_pad;
  g.ldc = g.ldd + c.ldc_pad;
  g.batch_stride_c = g.ldc * g.n, g.batch_stride_d = g.ldd * g.n;
  return g;
}

constexpr DType bf16 = DType::bf16, f16 = DType::f16, e4m3 = DType::e4m3, tf32 = DType::tf32;

inline constexpr Sm90PickCase kSm90Picks[] = {
    {4096, 4096, 1024, "tn", bf16, "sm90_bf16_128x256x64_c2_tmac", true},
    // 4095 x 4097 (canonical 4097 x 4095): 2x1 clusters of 128 x 256 tiles need 17 x 16 cluster
    // tiles, 5 rounds on 66 clusters, 1x2 clusters 33 x 8 = 4 rounds, as many as the slower 1x1
    // kernel's 33 x 16 tiles on 132 SMs: 1x2.
    {4095, 4097, 1024, "tn", bf16, "sm90_bf16_128x256x64_c1x2", false},
    {128, 8192, 1024, "tn", bf16, "sm90_bf16_128x64x64", false},        // 128 tiles of 128x64
    {8192, 100, 1024, "tn", bf16, "sm90_bf16_128x64x64", false},        // one tile row of 128 tiles
    {8192, 120, 1024, "tn", bf16, "sm90_bf16_128x64x64", false},
    {128, 28672, 1024, "tn", bf16, "sm90_bf16_128x128x64_c2", true},    // 448 tiles of 128x64: several rounds
    // Few tiles and a long K: 128x64 where it puts at least as many CTAs to work as the wider
    // tiles in their K slices (128 x 128: 2 tiles in 16 slices, against one 128x256 tile in 8;
    // 128 x 4096, canonical 4096 x 128: 64 tiles in 2 slices against 16 cluster tiles of 128x128
    // in 4, 128 CTAs either way); with a short K, 128x64 where its tiles fit one round. Where its
    // tiles take two rounds, 128x128 in 2x1 clusters.
    // Where 64x64 tiles fit one round and put at least 1.5x as many CTAs to work (128 x 128: 4
    // tiles in 16 slices against 2), those instead; not at 1024 x 128 (32 tiles in
    // 4 slices against 16 in 8).
    {128, 128, 8192, "tn", bf16, "sm90_bf16_64x64x64", false},
    {192, 128, 16384, "tn", bf16, "sm90_bf16_64x64x64", false},
    {1024, 128, 8192, "tn", bf16, "sm90_bf16_128x64x64", false},
    {128, 1024, 8192, "tn", bf16, "sm90_bf16_128x64x64", false},
    {128, 4096, 8192, "tn", bf16, "sm90_bf16_128x64x64", false},
    {128, 4096, 14336, "tn", bf16, "sm90_bf16_128x64x64", false},
    {128, 4096, 4096, "tn", bf16, "sm90_bf16_128x64x64", false},
    {128, 12288, 8192, "tn", bf16, "sm90_bf16_128x128x64_c2", false},  // 192 tiles of 128x64: two rounds
    // A small problem with a long K: 128x64 where its slices put more CTAs to work than both
    // clustered tiles' (256 x 256: 8 tiles in 16 slices against 2 cluster tiles in 8), not where
    // they tie (1024 x 1024: 128 unsplit tiles against 32 cluster tiles of 128x128 in 2 slices).
    {256, 256, 8192, "tn", bf16, "sm90_bf16_128x64x64", false},
    {1024, 1024, 8192, "tn", bf16, "sm90_bf16_128x256x64_c2", false},
    // 129 to 256 wide or tall: two 128-wide tile columns (or rows) in 2x1 clusters, one round;
    // with a short K and 128x64 tiles that fit one round, those (the small-problem rule first).
    {240, 8192, 1024, "tn", bf16, "sm90_bf16_128x128x64_c2", false},
    {8192, 256, 1024, "tn", bf16, "sm90_bf16_128x128x64_c2", false},
    {192, 8192, 8192, "tn", bf16, "sm90_bf16_128x128x64_c2", false},
    {8192, 160, 8192, "tn", bf16, "sm90_bf16_128x128x64_c2", false},
    {256, 4096, 4096, "tn", bf16, "sm90_bf16_128x64x64", false},   // 128 tiles of 128x64
    {192, 4096, 4096, "tn", bf16, "sm90_bf16_128x64x64", false},
    // Small problems, K short: 128x64 where its tiles fit one round, else 128x128 in 2x1
    // clusters; with a long K, the 128x256 tiles in K slices. fp8 likewise: a small problem on
    // the 128-wide tiles, a large one on the 256-wide default.
    {1024, 1024, 1024, "tn", bf16, "sm90_bf16_128x64x64", false},
    {1024, 2048, 1024, "tn", bf16, "sm90_bf16_128x128x64_c2", false},
    // 64x64 tiles where they fit one round with 1.5x the 128x64 tiles' CTAs (256 x 192: 12
    // against 8; 1536 x 192, canonical 192 x 1536: 72 against 48; 768 x 384 x 3000: 72 against
    // 36, before the rule for rows off the sectors below).
    {256, 192, 1000, "tn", bf16, "sm90_bf16_64x64x64", false},
    {1536, 192, 2048, "tn", bf16, "sm90_bf16_64x64x64", false},
    {768, 384, 3000, "tn", bf16, "sm90_bf16_64x64x64", false},
    // Rows off the L2's 32-byte sectors (K = 3000: 6000-byte rows): 128x128 in 2x1 clusters
    // where they put as many CTAs to work (32 cluster tiles in 2 slices against 128 tiles), not
    // where they would put fewer (1024 x 192: 8 cluster tiles against 32 tiles in 4 slices).
    {1024, 1024, 3000, "tn", bf16, "sm90_bf16_128x128x64_c2", false},
    {1024, 1024, 3008, "tn", bf16, "sm90_bf16_128x64x64", false},
    {1024, 192, 3000, "tn", bf16, "sm90_bf16_128x64x64", false},
    {1024, 1024, 65536, "tn", bf16, "sm90_bf16_128x256x64_c2", false},
    {1024, 1024, 1024, "tn", e4m3, "sm90_e4m3_128x128x128_c2", false},
    {4096, 4096, 1024, "tn", e4m3, "sm90_e4m3_128x256x128_c2", true},
    // tf32: the 128x256 tiles where they fill at least half the SMs' first round or K >= 4096
    // (split-K; the smaller problems with a shorter K go to the sm80 tf32 kernels:
    // sm90_select_gemm_kernel returns none for them).
    {4096, 4096, 4096, "tn", tf32, "sm90_tf32_128x256x32_c2", true},
    {2048, 2048, 1024, "nt", tf32, "sm90_tf32_128x256x32_c2", true},
    {1024, 1024, 4096, "tn", tf32, "sm90_tf32_128x256x32_c2", true},
    // At most 16 wide: 64x16 tiles where they fit one round (16 x 4096 with a short K), else
    // 128x64 (12288 rows: 192 tiles of 64); few tiles with a long K: 128-row tiles split K in 4
    // slices on every SM where the 64-row tiles would fill under 45% of the SMs, but 64 of them keep K
    // (16 x 4096 x 8192 0.96 against 0.86 on the H100, 0.94 against 0.85 on the H200);
    // 64 wide above 16.
    {16, 4096, 64, "tn", bf16, "sm90_bf16_64x16x64", true},
    {16, 12288, 64, "tn", bf16, "sm90_bf16_128x64x64", false},
    {16, 4096, 8192, "tn", bf16, "sm90_bf16_64x16x64", false},
    {16, 4096, 4096, "tn", bf16, "sm90_bf16_64x16x64", false},
    {40, 4096, 4096, "tn", bf16, "sm90_bf16_64x64x64", false},
    // A few tiles with a very long K: the 64-row tiles where their K slices put as many CTAs to
    // work as the 128-row tiles' (H200: 64x64x65536 13.1 us against 17.4, 64x128x65536 13.3
    // against 15.3); not where the 128-row tiles' slices put more (32 x 4096 x 8192: 64 unsplit
    // 64-row tiles against 32 tiles of 128 rows in 4 slices).
    {64, 64, 65536, "tn", bf16, "sm90_bf16_64x64x64", false},
    {64, 128, 65536, "tn", bf16, "sm90_bf16_64x64x64", false},
    {32, 4096, 8192, "tn", bf16, "sm90_bf16_128x64x64", false},
    // An MN-major operand: the 64-wide tiles read it in place (the 16-wide ones would stage it).
    {16, 4096, 4096, "nt", bf16, "sm90_bf16_64x64x64", false},

    // C unread and D fit for TMA stores: the 4-stage two-slab kernel takes the 2x1-cluster
    // problems; an odd leading dimension of D the copy warps of the 3-stage kernel.
    {4096, 4096, 1024, "tn", bf16, "sm90_bf16_128x256x64_c2_s4", true, 0.0f},
    {4096, 4096, 1024, "tn", bf16, "sm90_bf16_128x256x64_c2", true, 0.0f, 0, 1},
    // beta != 0 on a problem for 2x1 clusters (not small: 128 cluster tiles): the _tmac kernel
    // where TMA can load C and store D (16-byte aligned rows), the register-epilogue kernel where
    // C's rows are not aligned.
    {2048, 4096, 512, "tn", bf16, "sm90_bf16_128x256x64_c2_tmac", true, 1.0f},
    {2048, 4096, 512, "tn", f16, "sm90_fp16_128x256x64_c2_tmac", true, 1.0f},
    {2048, 4096, 512, "tn", bf16, "sm90_bf16_128x256x64_c2", true, 1.0f, 1},
    {2048, 4096, 512, "tn", f16, "sm90_fp16_128x256x64_c2", true, 1.0f, 1},
    // Some sm_90a entry for bf16 and fp16 on any sm_90 GPU.
    {512, 512, 512, "tn", bf16, "sm90_", true},
    {512, 512, 512, "tn", f16, "sm90_", true},
    // 192-wide tiles where their rounds take under 0.9 of the 256-wide ones' (132 SMs: 66 clusters):
    // 1536^3, 48 cluster tiles in one round against 36; 1536x4096x4096 (canonical 4096 x 1536) 128
    // in two against 96. Not 2048^3 (88 tiles, two rounds, against 64 in one), not with an MN-major
    // operand (its 96-row shares would be staged), not where C is read.
    {1536, 1536, 1536, "tn", bf16, "sm90_bf16_128x192x64_c2", false, 0.0f},
    {1536, 4096, 4096, "tn", bf16, "sm90_bf16_128x192x64_c2", false, 0.0f},
    {1536, 1536, 1536, "tn", f16, "sm90_fp16_128x192x64_c2", false, 0.0f},
    {2048, 2048, 2048, "tn", bf16, "sm90_bf16_128x256x64_c2_s4", false, 0.0f},
    {1536, 1536, 1536, "nn", bf16, "sm90_bf16_128x256x64_c2_s4", false, 0.0f},
    {1536, 1536, 1536, "tn", bf16, "sm90_bf16_128x256x64_c2_tmac", false, 1.0f},
    // With K slices the work per cluster decides: 1024 x 1024 x 16384, 24 cluster
    // tiles of 192 in 2 slices of 128 k-tiles against 16 of 256 in 4 of 64; 384 x 2048 x 16384
    // (canonical 2048 x 384) 16 of 192 in 4 against 16 of 256 in 4. 1024 x 2048 x 8192 (canonical
    // 2048 x 1024): 64 of 128x128 in one pass against 32 of 256 in 2 slices.
    {1024, 1024, 16384, "tn", bf16, "sm90_bf16_128x256x64_c2_s4", false, 0.0f},
    {384, 2048, 16384, "tn", bf16, "sm90_bf16_128x192x64_c2", false, 0.0f},
    {1024, 2048, 8192, "tn", bf16, "sm90_bf16_128x128x64_c2", false, 0.0f},
    {1024, 2048, 8192, "tn", bf16, "sm90_bf16_128x256x64_c2_tmac", false, 1.0f},
    // Where either side slices K, an estimate that counts the slices' reduction decides:
    // 768 x 1024 x 16384 (48.0 us against 50.6 for 256 wide on the H100) and
    // 1000 x 384 x 8192 (22.8 against 24.9), both of which the work-only rule gave to 256.
    {768, 1024, 16384, "tn", bf16, "sm90_bf16_128x192x64_c2", false, 0.0f},
    {1000, 384, 8192, "tn", bf16, "sm90_bf16_128x192x64_c2", false, 0.0f},
};

}  // namespace tessel::test
