// tessel::dist on every visible GPU of one process (ncclCommInitAll, one host thread per rank):
// all-gather + GEMM bitwise equal to the sequential all-gather + the pinned tessel::gemm,
// GEMM + reduce-scatter within fp32-accumulation tolerance of the float64 sum of the ranks'
// rounded partial products, ragged shapes (M not divisible by P or by the chunk), bf16 and fp16,
// random data, poisoned outputs, and a bad shape on one rank refused on every rank without a hang.
// Skips visibly with fewer than two GPUs. NVLink multicast stays off (NCCL_NVLS_ENABLE=0).
#include "gpu_test.hpp"

#include <tessel/dist/dist.hpp>
#include <tessel/gemm/device/gemm.hpp>
#include <tessel/gemm/device/gemm_registry.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace tessel;
using namespace tessel::dist;

constexpr int kMaxRanks = 8;

struct World {
  int ranks = 0;
  std::vector<ncclComm_t> comms;
  std::vector<Context*> ctx;
  std::vector<cudaStream_t> streams;
  std::string error;
};

World& world() {
  static World w = [] {
    World w;
    // Multicast objects can take a shared host's GPUs out of service: never let NCCL make one.
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    (void)cudaGetLastError();
    w.ranks = std::min(n, kMaxRanks);
    if (w.ranks < 2) return w;
    w.comms.resize(w.ranks);
    std::vector<int> devs(w.ranks);
    for (int i = 0; i < w.ranks; ++i) devs[i] = i;
    if (ncclResult_t r = ncclCommInitAll(w.comms.data(), w.ranks, devs.data()); r != ncclSuccess) {
      w.error = std::string("ncclCommInitAll: ") + ncclGetErrorString(r);
      return w;
    }
    w.ctx.assign(w.ranks, nullptr);
    w.streams.assign(w.ranks, nullptr);
    std::vector<Status> st(w.ranks);
    std::vector<std::thread> threads;
    for (int r = 0; r < w.ranks; ++r)
      threads.emplace_back([&, r] {
        cudaSetDevice(r);
        cudaStreamCreateWithFlags(&w.streams[r], cudaStreamNonBlocking);
        Options o;
        o.timeout_ms = 60000;
        st[r] = Context::create(w.comms[r], o, &w.ctx[r]);
      });
    for (auto& t : threads) t.join();
    for (int r = 0; r < w.ranks; ++r)
      if (!st[r]) w.error += "rank " + std::to_string(r) + ": " + st[r].reason + "; ";
    if (w.error.empty()) {
      ContextInfo const i = w.ctx[0]->info();
      std::printf("[dist] %d ranks, NCCL %d at run time\n", i.nranks, i.nccl_version);
    }
    return w;
  }();
  return w;
}

#define TESSEL_REQUIRE_RANKS()                                                                            \
  do {                                                                                                    \
    TESSEL_REQUIRE_GPU();                                                                                 \
    if (world().ranks < 2) GTEST_SKIP() << "tessel::dist needs 2 or more GPUs; " << world().ranks << " visible"; \
    ASSERT_TRUE(world().error.empty()) << world().error;                                                  \
  } while (0)

// Runs fn(rank) on one thread per rank, the rank's device current.
void on_every_rank(std::function<void(int)> const& fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < world().ranks; ++r)
    threads.emplace_back([&, r] {
      cudaSetDevice(r);
      fn(r);
    });
  for (auto& t : threads) t.join();
}

// Host values of the element types, as float and as stored bits.
std::uint16_t to_bits(float x, DType t) {
  if (t == DType::bf16) {
    __nv_bfloat16 const h = __float2bfloat16_rn(x);
    std::uint16_t b;
    std::memcpy(&b, &h, 2);
    return b;
  }
  __half const h = __float2half_rn(x);
  std::uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
float from_bits(std::uint16_t b, DType t) {
  if (t == DType::bf16) {
    __nv_bfloat16 h;
    std::memcpy(static_cast<void*>(&h), &b, 2);
    return __bfloat162float(h);
  }
  __half h;
  std::memcpy(static_cast<void*>(&h), &b, 2);
  return __half2float(h);
}

std::vector<std::uint16_t> random_bits(std::size_t n, DType t, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<std::uint16_t> v(n);
  for (auto& x : v) x = to_bits(u(gen), t);
  return v;
}

void* upload(std::vector<std::uint16_t> const& v) {
  void* p = nullptr;
  cudaMalloc(&p, std::max<std::size_t>(v.size(), 1) * 2);
  cudaMemcpy(p, v.data(), v.size() * 2, cudaMemcpyHostToDevice);
  return p;
}

std::vector<std::uint16_t> download(void const* p, std::size_t n) {
  std::vector<std::uint16_t> v(n);
  cudaMemcpy(v.data(), p, n * 2, cudaMemcpyDeviceToHost);
  return v;
}

struct AgCase {
  DType t;
  std::int64_t m_shard, n, k, chunk_rows;
  bool gathered;
};

class DistAllGather : public ::testing::TestWithParam<AgCase> {};

TEST_P(DistAllGather, BitwiseEqualToTheSequentialGatherAndPinnedGemm) {
  TESSEL_REQUIRE_RANKS();
  AgCase const cs = GetParam();
  int const P = world().ranks;
  std::int64_t const M = cs.m_shard * P;
  std::vector<std::vector<std::uint16_t>> shards(P);
  for (int r = 0; r < P; ++r) shards[r] = random_bits(std::size_t(cs.m_shard * cs.k), cs.t, 100 + r);
  std::vector<std::uint16_t> a_full;
  for (auto const& s : shards) a_full.insert(a_full.end(), s.begin(), s.end());
  std::vector<std::string> failures(P);
  on_every_rank([&](int r) {
    auto const b = random_bits(std::size_t(cs.k * cs.n), cs.t, 200 + r);  // K x N, col-major (a weight [N, K])
    void* dA = upload(shards[r]);
    void* dB = upload(b);
    void* dAfull = upload(a_full);
    void *dD = nullptr, *dRef = nullptr, *dG = nullptr;
    std::size_t const d_bytes = std::size_t(M * cs.n) * 2;
    cudaMalloc(&dD, d_bytes);
    cudaMalloc(&dRef, d_bytes);
    cudaMalloc(&dG, std::size_t(M * cs.k) * 2);
    cudaMemset(dD, 0xFF, d_bytes);  // NaN: every element must be written
    cudaMemset(dG, 0xFF, std::size_t(M * cs.k) * 2);
    AllGatherGemmArguments g;
    g.m_shard = cs.m_shard, g.n = cs.n, g.k = cs.k, g.ab_type = cs.t, g.d_type = cs.t;
    g.a_shard = dA, g.lda = cs.k, g.b = dB, g.ldb = cs.k, g.b_order = MatrixOrder::col_major;
    g.d = dD, g.ldd = cs.n, g.chunk_rows = cs.chunk_rows;
    if (cs.gathered) g.a_gathered = dG, g.ld_gathered = cs.k;
    cudaStream_t const s = world().streams[r];
    // The sequential reference: the gathered A, one tessel::gemm with the kernel pinned the same way.
    GemmArguments ref = full_gemm(g, P);
    ref.a = dAfull, ref.d = dRef;
    GemmKernelInfo const* k = select_gemm_kernel(ref);
    ref = pin_gemm(ref, k != nullptr ? k->name : nullptr);
    Status const rs = gemm(ref, s);
    cudaStreamSynchronize(s);
    auto const want = download(dRef, std::size_t(M * cs.n));
    std::string& f = failures[r];
    if (!rs) f = "reference gemm: " + rs.reason;
    // Twice: the first call may grow the staging; the second finds it grown and enqueues the own
    // shard's GEMM before the argument agreement's wait.
    for (int call = 0; call < 2 && f.empty(); ++call) {
      cudaMemset(dD, 0xFF, d_bytes);
      cudaMemset(dG, 0xFF, std::size_t(M * cs.k) * 2);
      Status const st = all_gather_gemm(*world().ctx[r], g, s);
      cudaStreamSynchronize(s);
      std::string const which = "call " + std::to_string(call + 1) + ": ";
      if (!st) f = which + "all_gather_gemm: " + st.reason;
      else if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) f = which + cudaGetErrorString(e);
      else {
        auto const d = download(dD, std::size_t(M * cs.n));
        for (std::size_t i = 0; i < d.size() && f.empty(); ++i) {
          if (std::isnan(from_bits(d[i], cs.t)))
            f = which + "D(" + std::to_string(i / cs.n) + ", " + std::to_string(i % cs.n) + ") is NaN (never written?)";
          else if (d[i] != want[i])
            f = which + "D(" + std::to_string(i / cs.n) + ", " + std::to_string(i % cs.n) + ") = " +
                std::to_string(from_bits(d[i], cs.t)) + ", the sequential result " +
                std::to_string(from_bits(want[i], cs.t)) + " (kernel " + (k != nullptr ? k->name : "none") + ")";
        }
        if (cs.gathered && f.empty() && download(dG, a_full.size()) != a_full)
          f = which + "a_gathered is not the concatenated shards";
      }
    }
    for (void* p : {dA, dB, dAfull, dD, dRef, dG}) cudaFree(p);
  });
  for (int r = 0; r < P; ++r) EXPECT_TRUE(failures[r].empty()) << "rank " << r << ": " << failures[r];
}

INSTANTIATE_TEST_SUITE_P(Shapes, DistAllGather,
                         ::testing::Values(AgCase{DType::bf16, 1000, 384, 520, 256, true},   // 1000 = 3 x 256 + 232
                                           AgCase{DType::f16, 1000, 384, 520, 0, false},
                                           AgCase{DType::bf16, 777, 200, 64, 100, false},   // nothing a tile multiple
                                           AgCase{DType::f16, 1, 33, 17, 0, true},
                                           AgCase{DType::bf16, 2048, 1024, 1024, 0, false}));

struct RsCase {
  DType t;
  std::int64_t m, n, k_shard, chunk_rows;
};

class DistReduceScatter : public ::testing::TestWithParam<RsCase> {};

TEST_P(DistReduceScatter, WithinRoundingOfTheSumOfRoundedPartials) {
  TESSEL_REQUIRE_RANKS();
  RsCase const cs = GetParam();
  int const P = world().ranks;
  // Rank r's K shard is k_shard + 8 r wide (the shards need not be equal); its A is row-major.
  std::vector<std::vector<std::uint16_t>> as(P), bs(P);
  for (int r = 0; r < P; ++r) {
    std::int64_t const kr = cs.k_shard + 8 * r;
    as[r] = random_bits(std::size_t(cs.m * kr), cs.t, 300 + r);
    bs[r] = random_bits(std::size_t(kr * cs.n), cs.t, 400 + r);  // row-major K_r x N
  }
  // float64 sums of the products, and of their magnitudes (the tolerance's scale).
  std::vector<double> want(std::size_t(cs.m * cs.n), 0.0), scale(want.size(), 0.0);
  for (int r = 0; r < P; ++r) {
    std::int64_t const kr = cs.k_shard + 8 * r;
    for (std::int64_t i = 0; i < cs.m; ++i)
      for (std::int64_t j = 0; j < cs.n; ++j) {
        double acc = 0, mag = 0;
        for (std::int64_t l = 0; l < kr; ++l) {
          double const x = double(from_bits(as[r][i * kr + l], cs.t)) * from_bits(bs[r][l * cs.n + j], cs.t);
          acc += x, mag += std::fabs(x);
        }
        want[i * cs.n + j] += acc;
        scale[i * cs.n + j] += mag;
      }
  }
  double const eps = cs.t == DType::bf16 ? 1.0 / 256 : 1.0 / 2048;  // one rounding of the dtype
  std::vector<std::string> failures(P);
  on_every_rank([&](int r) {
    std::int64_t const kr = cs.k_shard + 8 * r, rows = rs_block_rows(cs.m, P, r), start = rs_block_start(cs.m, P, r);
    void* dA = upload(as[r]);
    void* dB = upload(bs[r]);
    void* dD = nullptr;
    cudaMalloc(&dD, std::max<std::size_t>(std::size_t(rows * cs.n) * 2, 2));
    cudaMemset(dD, 0xFF, std::size_t(rows * cs.n) * 2);
    GemmReduceScatterArguments g;
    g.m = cs.m, g.n = cs.n, g.k_shard = kr, g.ab_type = g.d_type = cs.t;
    g.a = dA, g.lda = kr, g.a_order = MatrixOrder::row_major;
    g.b = dB, g.ldb = cs.n, g.b_order = MatrixOrder::row_major;
    g.d = dD, g.ldd = cs.n, g.chunk_rows = cs.chunk_rows;
    std::string& f = failures[r];
    // Twice: the first call may grow the staging; the second finds it grown and enqueues the
    // peers' blocks before the argument agreement's wait.
    for (int call = 0; call < 2 && f.empty(); ++call) {
      cudaMemset(dD, 0xFF, std::size_t(rows * cs.n) * 2);
      Status const st = gemm_reduce_scatter(*world().ctx[r], g, world().streams[r]);
      cudaStreamSynchronize(world().streams[r]);
      std::string const which = "call " + std::to_string(call + 1) + ": ";
      if (!st) f = which + st.reason;
      else if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) f = which + cudaGetErrorString(e);
      else {
        auto const d = download(dD, std::size_t(rows * cs.n));
        for (std::int64_t i = 0; i < rows && f.empty(); ++i)
          for (std::int64_t j = 0; j < cs.n && f.empty(); ++j) {
            double const got = from_bits(d[i * cs.n + j], cs.t), w = want[(start + i) * cs.n + j];
            // P partials rounded once each, their sum rounded once more, plus fp32 accumulation.
            double const tol = (P + 2) * eps * scale[(start + i) * cs.n + j] + 1e-6;
            if (!(std::fabs(got - w) <= tol))
              f = which + "D(" + std::to_string(start + i) + ", " + std::to_string(j) + ") = " + std::to_string(got) +
                  ", float64 " + std::to_string(w) + ", tolerance " + std::to_string(tol);
          }
      }
    }
    for (void* p : {dA, dB, dD}) cudaFree(p);
  });
  for (int r = 0; r < P; ++r) EXPECT_TRUE(failures[r].empty()) << "rank " << r << ": " << failures[r];
}

INSTANTIATE_TEST_SUITE_P(Shapes, DistReduceScatter,
                         ::testing::Values(RsCase{DType::bf16, 1001, 384, 256, 128},  // blocks not divisible by the chunk
                                           RsCase{DType::f16, 1001, 384, 256, 0},
                                           RsCase{DType::bf16, 3, 40, 24, 0},         // fewer rows than ranks x 2
                                           RsCase{DType::f16, 777, 136, 72, 100}));

// A bad shape on one rank: every rank returns an error (none hangs), and the context still works.
TEST(DistErrors, ABadShapeOnOneRankIsRefusedOnEveryRank) {
  TESSEL_REQUIRE_RANKS();
  int const P = world().ranks;
  std::vector<Status> warm(P), mismatch(P), refused(P), after(P), rs_mismatch(P), rs_after(P);
  on_every_rank([&](int r) {
    void *dA = nullptr, *dB = nullptr, *dD = nullptr;
    cudaMalloc(&dA, 1 << 20), cudaMalloc(&dB, 1 << 20), cudaMalloc(&dD, 1 << 22);
    AllGatherGemmArguments g;
    g.m_shard = 64, g.n = 64, g.k = 64, g.a_shard = dA, g.lda = 64, g.b = dB, g.ldb = 64, g.d = dD, g.ldd = 64;
    // A good call first: the staging then holds the call, and the ranks whose own arguments
    // pass enqueue their own GEMM before the agreement refuses.
    warm[r] = all_gather_gemm(*world().ctx[r], g, world().streams[r]);
    AllGatherGemmArguments bad = g;
    if (r == P - 1) bad.m_shard = 48, bad.lda = 64;  // valid alone, but not the others' shard
    mismatch[r] = all_gather_gemm(*world().ctx[r], bad, world().streams[r]);
    bad = g;
    if (r == 1) bad.d = nullptr;  // refused by rank 1's own rules
    refused[r] = all_gather_gemm(*world().ctx[r], bad, world().streams[r]);
    after[r] = all_gather_gemm(*world().ctx[r], g, world().streams[r]);
    // The same for the reduce-scatter: a mismatch after a good call (its staging grown).
    GemmReduceScatterArguments h;
    h.m = 64, h.n = 64, h.k_shard = 64, h.a = dA, h.lda = 64, h.b = dB, h.ldb = 64, h.d = dD, h.ldd = 64;
    (void)gemm_reduce_scatter(*world().ctx[r], h, world().streams[r]);
    GemmReduceScatterArguments bad_rs = h;
    if (r == P - 1) bad_rs.n = 56, bad_rs.ldd = 56;  // valid alone, but not the others' N
    rs_mismatch[r] = gemm_reduce_scatter(*world().ctx[r], bad_rs, world().streams[r]);
    rs_after[r] = gemm_reduce_scatter(*world().ctx[r], h, world().streams[r]);
    cudaStreamSynchronize(world().streams[r]);
    cudaFree(dA), cudaFree(dB), cudaFree(dD);
  });
  for (int r = 0; r < P; ++r) {
    EXPECT_EQ(mismatch[r].code, StatusCode::invalid_argument) << "rank " << r;
    EXPECT_NE(mismatch[r].reason.find("m_shard: rank " + std::to_string(P - 1) + " passed 48, rank 0 64"),
              std::string::npos)
        << "rank " << r << ": " << mismatch[r].reason;
    EXPECT_EQ(refused[r].code, StatusCode::invalid_argument) << "rank " << r;
    EXPECT_EQ(refused[r].reason.rfind(r == 1 ? "d: null" : "rank 1 refused its arguments", 0), 0u)
        << "rank " << r << ": " << refused[r].reason;
    EXPECT_TRUE(warm[r].ok()) << "rank " << r << ": " << warm[r].reason;
    EXPECT_TRUE(after[r].ok()) << "rank " << r << ": " << after[r].reason;
    EXPECT_NE(rs_mismatch[r].reason.find("n: rank " + std::to_string(P - 1) + " passed 56, rank 0 64"), std::string::npos)
        << "rank " << r << ": " << rs_mismatch[r].reason;
    EXPECT_TRUE(rs_after[r].ok()) << "rank " << r << ": " << rs_after[r].reason;
  }
}

// A rank that never makes the call: after one call that every rank made, rank P-1 skips the
// next. The others' wait for the argument agreement passes the context's timeout, aborts its
// communicator and returns an error naming the timeout (no hang); the context refuses every later
// call; the caller's stream still synchronizes (nothing of the call waits on the absent rank
// there). The communication stream does not: NCCL's copy-engine wait for the absent rank outlives
// ncclCommAbort (two H200s, NCCL 2.28.9), so a device-wide synchronize would not return -- printed,
// not asserted (docs/dist.md, Risks). Contexts of its own; scripts/gpu-dist.sh runs it in a
// process of its own under a time limit.
TEST(DistTimeout, ARankThatNeverMakesTheCallTimesTheOthersOut) {
  TESSEL_REQUIRE_RANKS();
  int const P = world().ranks;
  std::vector<Context*> ctx(P, nullptr);
  std::vector<Status> created(P), first(P), made(P), later(P);
  std::vector<double> waited_ms(P, 0.0);
  std::vector<int> stream_synced(P, 1);
  on_every_rank([&](int r) {
    Options o;
    o.timeout_ms = 1500;
    created[r] = Context::create(world().comms[r], o, &ctx[r]);
  });
  for (int r = 0; r < P; ++r) ASSERT_TRUE(created[r].ok()) << "rank " << r << ": " << created[r].reason;
  std::fprintf(stderr, "[dist timeout] %d contexts created (timeout 1500 ms)\n", P);
  // A watchdog for a step that may not return: true if fn returned within `ms`.
  auto const within = [](int device, int ms, std::function<void()> fn) {
    auto done = std::make_shared<std::atomic<int>>(0);
    std::thread([done, device, fn] {
      cudaSetDevice(device);
      fn();
      done->store(1);
    }).detach();
    for (int i = 0; i < ms / 10 && done->load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return done->load() != 0;
  };
  std::vector<void*> buffers(3 * P, nullptr);
  on_every_rank([&](int r) {
    void *&dA = buffers[3 * r], *&dB = buffers[3 * r + 1], *&dD = buffers[3 * r + 2];
    cudaMalloc(&dA, 1 << 20), cudaMalloc(&dB, 1 << 20), cudaMalloc(&dD, 1 << 22);
    AllGatherGemmArguments g;
    g.m_shard = 64, g.n = 64, g.k = 64, g.a_shard = dA, g.lda = 64, g.b = dB, g.ldb = 64, g.d = dD, g.ldd = 64;
    first[r] = all_gather_gemm(*ctx[r], g, world().streams[r]);
    cudaStreamSynchronize(world().streams[r]);
  });
  for (int r = 0; r < P; ++r) ASSERT_TRUE(first[r].ok()) << "rank " << r << ": " << first[r].reason;
  std::fprintf(stderr, "[dist timeout] one call on every rank; now rank %d skips one\n", P - 1);
  on_every_rank([&](int r) {
    if (r == P - 1) return;  // this rank never makes the call
    AllGatherGemmArguments g;
    g.m_shard = 64, g.n = 64, g.k = 64, g.a_shard = buffers[3 * r], g.lda = 64, g.b = buffers[3 * r + 1], g.ldb = 64,
    g.d = buffers[3 * r + 2], g.ldd = 64;
    auto const t0 = std::chrono::steady_clock::now();
    made[r] = all_gather_gemm(*ctx[r], g, world().streams[r]);
    waited_ms[r] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "[dist timeout] rank %d: returned after %.0f ms: %s\n", r, waited_ms[r], made[r].reason.c_str());
    later[r] = all_gather_gemm(*ctx[r], g, world().streams[r]);
    cudaStream_t const s = world().streams[r];
    stream_synced[r] = within(r, 10000, [s] { cudaStreamSynchronize(s); });
    bool const device_synced = within(r, 3000, [] { cudaDeviceSynchronize(); });
    std::fprintf(stderr, "[dist timeout] rank %d: caller's stream %s; cudaDeviceSynchronize %s\n", r,
                 stream_synced[r] ? "synchronized" : "did not synchronize in 10 s",
                 device_synced ? "returned" : "did not return in 3 s (the communication stream waits on)");
  });
  for (int r = 0; r + 1 < P; ++r) {
    EXPECT_EQ(made[r].code, StatusCode::cuda_error) << "rank " << r << ": " << made[r].reason;
    EXPECT_NE(made[r].reason.find("did not finish within 1500 ms"), std::string::npos) << "rank " << r << ": " << made[r].reason;
    EXPECT_GE(waited_ms[r], 1400.0) << "rank " << r;
    EXPECT_LT(waited_ms[r], 10000.0) << "rank " << r;
    EXPECT_NE(later[r].reason.find("aborted"), std::string::npos) << "rank " << r << ": " << later[r].reason;
    EXPECT_EQ(stream_synced[r], 1) << "rank " << r << ": the caller's stream did not synchronize within 10 s";
  }
  // Every context is destroyed within the deadline: the absent rank's destroy all-gathers a record
  // that the others (aborted, or still in the call) never match, so it aborts instead of waiting in
  // NCCL's teardown; the aborted ones keep what their blocked communication streams may still use.
  for (int r = P - 1; r >= 0; --r) {
    Context* const c = ctx[r];
    bool const destroyed = within(r, 5000, [c] { Context::destroy(c); });
    std::fprintf(stderr, "[dist timeout] rank %d: Context::destroy %s\n", r,
                 destroyed ? "returned" : "did not return in 5 s");
    EXPECT_TRUE(destroyed) << "rank " << r << ": Context::destroy did not return within 5 s";
  }
}

}  // namespace
