// The sm_80 convolution kernels (src/conv/sm80_conv_launch.hpp: sm80_conv_run), called directly,
// against a direct convolution that accumulates in fp64 (one thread per output element, below).
//
// Every run: random inputs in [-1, 1) (never zeros), the output poisoned with NaN first, every op
// (fprop, dgrad, wgrad) and both dtypes on each geometry; tensors with padded strides, whose gaps
// must still hold the poison afterwards (nothing written outside the tensor). Geometries: N = 1,
// H = W = 1, padding larger than the filter, stride larger than the filter, dilation 2, every
// channel count 1..9, C = 33 with K = 65, several tiles in M and N, groups = 2 (aligned and not),
// depthwise (3x3, 5x5, 7x7, 11x11, strides 1 and 2, dilation 2, padding past the filter, one pixel,
// C = 1, 3, 5, 8, 16, 24, 64, 72, 8 or 1 channels per thread: the direct kernels of every pass), 3-D,
// and the fused epilogue (alpha, beta * residual, bias, ReLU / GELU / SiLU); wgrad with its
// reduction split into slices (fp32 partials, then the slice sum; the depthwise wgrad's own split
// over pixels).
//
// Tolerance, per output element. The inputs are bf16/fp16 values, exact in fp64, so the reference
// differs from the kernel only by the kernel's roundings:
//   products      exact in fp32 (8x8 or 11x11 significant bits)
//   accumulation  fp32 over at most Kterms products: |error| <= Kterms * u32 * S, S = sum |a*b|
//                 (the classical bound for recursive summation; u32 = 2^-24). Tensor cores add in
//                 their own order and may truncate, so the bound is taken twice: 2 Kterms u32 S
//   epilogue      alpha*acc + beta*res + bias in fp32: 3 more roundings of terms of size at most
//                 M = |alpha| S + |beta res| + |bias|: 4 u32 M; the activation's fp32 evaluation
//                 adds a few ulps of its result, and its slope (<= 1.13) scales the error before it
//   output        rounded to the dtype: u_out |y| (u_out = 2^-8 bf16, 2^-11 fp16)
//   => |out - ref| <= 1.13 (2 Kterms u32 S + 4 u32 M) + u_out (|ref| + that) + 8 u32 |ref| + 1e-30.
// A missing or extra product moves the sum by about S / Kterms, far above this bound for the
// sizes here (Kterms <= 2^11). NaN where the reference is finite fails; the first bad coordinate
// is reported.
#include "../../src/conv/sm80_conv_launch.hpp"
#include "gpu/gpu_test.hpp"

#include <tessel/conv/kernel/sm80_conv_params.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/half.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace tessel;
using kernel::ConvActivation;
using kernel::Sm80ConvParams;
using conv::Operator;

namespace {

// ---- the reference ------------------------------------------------------------------------------

double ref_activate(double v, ConvActivation a) {
  switch (a) {
    case ConvActivation::relu: return v > 0.0 ? v : (std::isnan(v) ? v : 0.0);
    case ConvActivation::gelu_tanh: return 0.5 * v * (1.0 + std::tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v)));
    case ConvActivation::gelu: return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    case ConvActivation::silu: return v / (1.0 + std::exp(-v));
    case ConvActivation::none: break;
  }
  return v;
}

// One output element of `out` per thread: the fp64 sum of products (acc) and of their magnitudes
// (mag), at the element's dense index (n, z, p, q, k) / (n, d, h, w, c) / (k, t, r, s, c).
template <class Element>
__global__ void reference_conv_kernel(Sm80ConvParams p, double* acc, double* mag, long long count) {
  long long const idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= count) return;
  auto const* x = static_cast<Element const*>(p.x);
  auto const* w = static_cast<Element const*>(p.filter);
  auto const* dy = static_cast<Element const*>(p.y);
  int const cg = p.c / p.groups, kg = p.k / p.groups;
  auto const xat = [&](int n, int d, int h, int ww, int c) {
    return double(float(x[n * p.x_stride[0] + d * p.x_stride[1] + h * p.x_stride[2] + ww * p.x_stride[3] + c]));
  };
  auto const yat = [&](int n, int z, int pp, int q, int k) {
    return double(float(dy[n * p.y_stride[0] + z * p.y_stride[1] + pp * p.y_stride[2] + q * p.y_stride[3] + k]));
  };
  auto const wat = [&](int k, int t, int r, int s, int c) {
    return double(float(w[k * p.w_stride_k + ((t * p.r + r) * p.s + s) * cg + c]));
  };
  double sum = 0.0, abs_sum = 0.0;
  long long i = idx;
  if (p.op == Operator::kFprop) {
    int const k = int(i % p.k); i /= p.k;
    int const q = int(i % p.q); i /= p.q;
    int const pp = int(i % p.p); i /= p.p;
    int const z = int(i % p.z); int const n = int(i / p.z);
    int const g = k / kg;
    for (int t = 0; t < p.t; ++t)
      for (int r = 0; r < p.r; ++r)
        for (int s = 0; s < p.s; ++s) {
          int const d = z * p.stride_d - p.pad_d + t * p.dilation_d;
          int const h = pp * p.stride_h - p.pad_h + r * p.dilation_h;
          int const ww = q * p.stride_w - p.pad_w + s * p.dilation_w;
          if (d < 0 || d >= p.d || h < 0 || h >= p.h || ww < 0 || ww >= p.w) continue;
          for (int c = 0; c < cg; ++c) {
            double const prod = xat(n, d, h, ww, g * cg + c) * wat(k, t, r, s, c);
            sum += prod, abs_sum += fabs(prod);
          }
        }
  } else if (p.op == Operator::kDgrad) {
    int const c = int(i % p.c); i /= p.c;
    int const ww = int(i % p.w); i /= p.w;
    int const h = int(i % p.h); i /= p.h;
    int const d = int(i % p.d); int const n = int(i / p.d);
    int const g = c / cg;
    for (int t = 0; t < p.t; ++t)
      for (int r = 0; r < p.r; ++r)
        for (int s = 0; s < p.s; ++s) {
          int const nz = d + p.pad_d - t * p.dilation_d, np = h + p.pad_h - r * p.dilation_h, nq = ww + p.pad_w - s * p.dilation_w;
          if (nz < 0 || np < 0 || nq < 0 || nz % p.stride_d || np % p.stride_h || nq % p.stride_w) continue;
          int const z = nz / p.stride_d, pp = np / p.stride_h, q = nq / p.stride_w;
          if (z >= p.z || pp >= p.p || q >= p.q) continue;
          for (int kk = 0; kk < kg; ++kk) {
            double const prod = yat(n, z, pp, q, g * kg + kk) * wat(g * kg + kk, t, r, s, c - g * cg);
            sum += prod, abs_sum += fabs(prod);
          }
        }
  } else {
    int const c = int(i % cg); i /= cg;
    int const s = int(i % p.s); i /= p.s;
    int const r = int(i % p.r); i /= p.r;
    int const t = int(i % p.t); int const k = int(i / p.t);
    int const g = k / kg;
    for (int n = 0; n < p.n; ++n)
      for (int z = 0; z < p.z; ++z)
        for (int pp = 0; pp < p.p; ++pp)
          for (int q = 0; q < p.q; ++q) {
            int const d = z * p.stride_d - p.pad_d + t * p.dilation_d;
            int const h = pp * p.stride_h - p.pad_h + r * p.dilation_h;
            int const ww = q * p.stride_w - p.pad_w + s * p.dilation_w;
            if (d < 0 || d >= p.d || h < 0 || h >= p.h || ww < 0 || ww >= p.w) continue;
            double const prod = yat(n, z, pp, q, k) * xat(n, d, h, ww, g * cg + c);
            sum += prod, abs_sum += fabs(prod);
          }
  }
  acc[idx] = sum;
  mag[idx] = abs_sum;
}

// ---- problems -----------------------------------------------------------------------------------

struct Geometry {
  char const* name;
  int n, d, h, w, c, k, t, r, s;
  int pad[3], stride[3], dilation[3];  // d, h, w
  int groups = 1;
  int gap = 0;  // extra elements after each pixel's channels (x, y) and each filter (w): padded strides
};

struct Epilogue {
  float alpha = 1.0f, beta = 0.0f;
  bool residual = false, bias = false;
  ConvActivation act = ConvActivation::none;
};

int out_extent(int in, int f, int pad, int stride, int dil) { return (in + 2 * pad - (dil * (f - 1) + 1)) / stride + 1; }

template <class T>
struct DeviceBuffer {
  T* ptr = nullptr;
  explicit DeviceBuffer(std::size_t count) {
    if (cudaMalloc(&ptr, count * sizeof(T) + 16) != cudaSuccess) ptr = nullptr;
  }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(DeviceBuffer const&) = delete;
  DeviceBuffer& operator=(DeviceBuffer const&) = delete;
};

template <class Element>
std::uint16_t bits_of(Element e) {
  std::uint16_t b;
  std::memcpy(&b, &e, 2);
  return b;
}
template <class Element>
constexpr std::uint16_t kNanBits = std::is_same_v<Element, bfloat16_t> ? 0x7fc0 : 0x7e00;

template <class Element>
std::vector<Element> random_tensor(std::size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<Element> v(count);
  for (auto& e : v) {
    float f = dist(rng);
    if (std::fabs(f) < 1.0f / 64) f = 0.5f;  // never zero
    e = Element(f);
  }
  return v;
}

// Runs op on geometry g in Element with epilogue e; checks every element (file comment). Returns
// the kernel's name. slices > 0: a wgrad's reduction split in that many slices (their partial
// sums in the library's pool, then the slice sum).
template <class Element>
std::string run_case(Geometry const& g, Operator op, Epilogue const& e, std::uint32_t seed, int slices = 0) {
  std::mt19937 rng(seed);
  Sm80ConvParams p{};
  p.op = op;
  p.n = g.n, p.d = g.d, p.h = g.h, p.w = g.w, p.c = g.c, p.k = g.k, p.t = g.t, p.r = g.r, p.s = g.s;
  p.pad_d = g.pad[0], p.pad_h = g.pad[1], p.pad_w = g.pad[2];
  p.stride_d = g.stride[0], p.stride_h = g.stride[1], p.stride_w = g.stride[2];
  p.dilation_d = g.dilation[0], p.dilation_h = g.dilation[1], p.dilation_w = g.dilation[2];
  p.groups = g.groups;
  p.z = out_extent(g.d, g.t, g.pad[0], g.stride[0], g.dilation[0]);
  p.p = out_extent(g.h, g.r, g.pad[1], g.stride[1], g.dilation[1]);
  p.q = out_extent(g.w, g.s, g.pad[2], g.stride[2], g.dilation[2]);
  int const cg = g.c / g.groups;
  long long const xc = g.c + g.gap, yc = g.k + g.gap;
  p.x_stride[3] = xc, p.x_stride[2] = g.w * xc, p.x_stride[1] = g.h * g.w * xc, p.x_stride[0] = g.d * g.h * g.w * xc;
  p.y_stride[3] = yc, p.y_stride[2] = p.q * yc, p.y_stride[1] = p.p * p.q * yc, p.y_stride[0] = p.z * p.p * p.q * yc;
  p.w_stride_k = static_cast<long long>(g.t) * g.r * g.s * cg + g.gap;
  std::size_t const x_size = std::size_t(p.x_stride[0]) * g.n, y_size = std::size_t(p.y_stride[0]) * g.n;
  std::size_t const w_size = std::size_t(p.w_stride_k) * g.k;

  std::vector<Element> hx = random_tensor<Element>(x_size, rng), hy = random_tensor<Element>(y_size, rng),
                       hw = random_tensor<Element>(w_size, rng);
  // out: y (fprop), dx (dgrad), dw (wgrad); `logical` elements, each at out_offset(i).
  std::size_t const out_size = op == Operator::kFprop ? y_size : op == Operator::kDgrad ? x_size : w_size;
  int const out_channels = op == Operator::kFprop ? g.k : op == Operator::kDgrad ? g.c : int(g.t * g.r * g.s * cg);
  int const bias_channels = op == Operator::kFprop ? g.k : g.c;
  std::vector<Element> hres = random_tensor<Element>(out_size, rng);
  std::vector<float> hbias(static_cast<std::size_t>(bias_channels));
  for (auto& b : hbias) b = std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng);

  DeviceBuffer<Element> dx(x_size), dyb(y_size), dw(w_size), dout(out_size), dres(out_size);
  DeviceBuffer<float> dbias(hbias.size());
  EXPECT_TRUE(dx.ptr && dyb.ptr && dw.ptr && dout.ptr && dres.ptr && dbias.ptr) << "cudaMalloc failed";
  if (!(dx.ptr && dyb.ptr && dw.ptr && dout.ptr && dres.ptr && dbias.ptr)) return "";
  cudaMemcpy(dx.ptr, hx.data(), x_size * sizeof(Element), cudaMemcpyHostToDevice);
  cudaMemcpy(dyb.ptr, hy.data(), y_size * sizeof(Element), cudaMemcpyHostToDevice);
  cudaMemcpy(dw.ptr, hw.data(), w_size * sizeof(Element), cudaMemcpyHostToDevice);
  cudaMemcpy(dres.ptr, hres.data(), out_size * sizeof(Element), cudaMemcpyHostToDevice);
  cudaMemcpy(dbias.ptr, hbias.data(), hbias.size() * sizeof(float), cudaMemcpyHostToDevice);
  std::vector<std::uint16_t> poison(out_size, kNanBits<Element>);
  cudaMemcpy(dout.ptr, poison.data(), out_size * 2, cudaMemcpyHostToDevice);

  p.x = dx.ptr, p.filter = dw.ptr, p.y = dyb.ptr;
  p.out = dout.ptr;
  p.residual = e.residual ? dres.ptr : nullptr;
  p.bias = e.bias && op != Operator::kWgrad ? dbias.ptr : nullptr;
  p.alpha = e.alpha, p.beta = e.beta, p.activation = e.act;
  if (op == Operator::kFprop) p.y = nullptr;  // not read
  if (op == Operator::kDgrad) p.x = nullptr;
  if (op == Operator::kWgrad) p.filter = nullptr;
  // the input the op does not read stays allocated for the reference's sake
  Sm80ConvParams ref_p = p;
  ref_p.x = dx.ptr, ref_p.filter = dw.ptr, ref_p.y = dyb.ptr;

  DType const dtype = std::is_same_v<Element, bfloat16_t> ? DType::bf16 : DType::f16;
  std::string const name = sm80_conv_kernel_name(p, dtype);
  Sm80ConvRunOptions opts;
  opts.slices = slices;
  int const made = sm80_conv_split(p, dtype, opts).slices;
  if (slices > 1 && op == Operator::kWgrad && 1LL * g.n * p.z * p.p * p.q > 32)  // at least 2 k-tiles of 32
    EXPECT_GT(made, 1) << name << ": " << slices << " slices asked, none made";
  bool const smallc_wgrad = name.ends_with("_smallc") && op == Operator::kWgrad;  // partials even for one slice
  EXPECT_EQ(sm80_conv_workspace_size(p, dtype, opts) > 0, made > 1 || smallc_wgrad) << name;
  Status const st = sm80_conv_run(p, dtype, nullptr, opts);
  EXPECT_TRUE(st.ok()) << name << ": " << st.reason;
  cudaError_t const err = cudaDeviceSynchronize();
  EXPECT_EQ(err, cudaSuccess) << name << ": " << cudaGetErrorString(err);
  if (!st.ok() || err != cudaSuccess) return name;

  // The logical output elements, in the dense order of the reference.
  long long const pixels = op == Operator::kFprop   ? 1LL * g.n * p.z * p.p * p.q
                           : op == Operator::kDgrad ? 1LL * g.n * g.d * g.h * g.w
                                                    : g.k;
  long long const count = pixels * out_channels;
  DeviceBuffer<double> dacc{static_cast<std::size_t>(count)}, dmag{static_cast<std::size_t>(count)};
  reference_conv_kernel<Element><<<unsigned((count + 127) / 128), 128>>>(ref_p, dacc.ptr, dmag.ptr, count);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "reference";
  std::vector<double> acc(static_cast<std::size_t>(count)), mag(static_cast<std::size_t>(count));
  cudaMemcpy(acc.data(), dacc.ptr, acc.size() * sizeof(double), cudaMemcpyDeviceToHost);
  cudaMemcpy(mag.data(), dmag.ptr, mag.size() * sizeof(double), cudaMemcpyDeviceToHost);
  std::vector<Element> out(out_size);
  cudaMemcpy(out.data(), dout.ptr, out_size * sizeof(Element), cudaMemcpyDeviceToHost);

  // Element offset of logical output i (dense index over (pixel, channel)).
  auto const out_offset = [&](long long i) -> long long {
    long long const ch = i % out_channels, px = i / out_channels;
    if (op == Operator::kWgrad) return px * p.w_stride_k + ch;
    long long const* st4 = op == Operator::kFprop ? p.y_stride : p.x_stride;
    int const e0 = op == Operator::kFprop ? p.q : g.w, e1 = op == Operator::kFprop ? p.p : g.h,
              e2 = op == Operator::kFprop ? p.z : g.d;
    long long const i0 = px % e0, i1 = px / e0 % e1, i2 = px / e0 / e1 % e2, n = px / e0 / e1 / e2;
    return n * st4[0] + i2 * st4[1] + i1 * st4[2] + i0 * st4[3] + ch;
  };
  int const k_terms = op == Operator::kWgrad ? g.n * p.z * p.p * p.q : g.t * g.r * g.s * (op == Operator::kFprop ? cg : g.k / g.groups);
  double const u32 = std::ldexp(1.0, -24), u_out = std::is_same_v<Element, bfloat16_t> ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
  std::vector<char> written(out_size, 0);
  double worst = 0.0;  // largest |error| / bound
  for (long long i = 0; i < count; ++i) {
    long long const off = out_offset(i);
    written[std::size_t(off)] = 1;
    int const ch = int(i % out_channels);
    double const res = e.residual && e.beta != 0.0f ? double(float(hres[std::size_t(off)])) : 0.0;
    double const bias = p.bias ? double(hbias[std::size_t(ch)]) : 0.0;
    double const pre = double(e.alpha) * acc[std::size_t(i)] + double(e.beta) * res + bias;
    double const ref = ref_activate(pre, e.act);
    double const m = std::fabs(double(e.alpha)) * mag[std::size_t(i)] + std::fabs(double(e.beta) * res) + std::fabs(bias);
    double const e_pre = 1.13 * (2.0 * k_terms * u32 * std::fabs(double(e.alpha)) * mag[std::size_t(i)] + 4.0 * u32 * m);
    double const bound = e_pre + u_out * (std::fabs(ref) + e_pre) + 8.0 * u32 * std::fabs(ref) + 1e-30;
    double const got = double(float(out[std::size_t(off)]));
    double const err = std::fabs(got - ref);
    if (!(err <= bound)) {  // NaN fails
      ADD_FAILURE() << name << " " << g.name << " " << conv::to_string(op) << ": element " << i << " (pixel "
                    << i / out_channels << ", channel " << ch << "): got " << got << ", reference " << ref << ", |error| "
                    << err << " > bound " << bound;
      return name;
    }
    worst = std::max(worst, err / bound);
  }
  for (std::size_t i = 0; i < out_size; ++i) {
    if (!written[i] && bits_of(out[i]) != kNanBits<Element>) {
      ADD_FAILURE() << name << " " << g.name << " " << conv::to_string(op) << ": wrote element " << i
                    << " outside the tensor (a stride gap)";
      return name;
    }
  }
  std::printf("  %-44s %-28s %s%s: %lld outputs, worst error %.2f of the bound\n", name.c_str(), g.name,
              conv::to_string(op), made > 1 ? (" in " + std::to_string(made) + " slices").c_str() : "", count, worst);
  return name;
}

constexpr Operator kOps[] = {Operator::kFprop, Operator::kDgrad, Operator::kWgrad};

// Every op, both dtypes.
void run_all(Geometry const& g, Epilogue const& e = {}) {
  std::uint32_t seed = 1234;
  for (Operator op : kOps) {
    run_case<bfloat16_t>(g, op, e, seed++);
    run_case<half_t>(g, op, e, seed++);
  }
}

// clang-format off
//                            name                       n  d  h   w   c    k   t  r  s  pad        stride     dilation   groups gap
Geometry const kBasic      = {"3x3 c16 k24",             2, 1, 9,  11, 16,  24, 1, 3, 3, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, 0};
Geometry const kManyTiles  = {"3x3 c32 k136 20x20",      2, 1, 20, 20, 32,  136,1, 3, 3, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, 0};
Geometry const kOdd        = {"3x3 c33 k65 9x9",         1, 1, 9,  9,  33,  65, 1, 3, 3, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, 0};
Geometry const kPixel      = {"1x1 c8 k8 h=w=1",         1, 1, 1,  1,  8,   8,  1, 1, 1, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 1, 0};
Geometry const kPixel3     = {"3x3 pad1 c5 k7 h=w=1",    1, 1, 1,  1,  5,   7,  1, 3, 3, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, 0};
Geometry const kBigPad     = {"3x3 pad4 c8 k16 5x5",     1, 1, 5,  5,  8,   16, 1, 3, 3, {0, 4, 4}, {1, 1, 1}, {1, 1, 1}, 1, 0};
Geometry const kBigStride  = {"2x2 stride3 c8 k8 10x11", 2, 1, 10, 11, 8,   8,  1, 2, 2, {0, 0, 1}, {1, 3, 3}, {1, 1, 1}, 1, 0};
Geometry const kStride2    = {"3x3 stride2 c16 k16",     2, 1, 13, 12, 16,  16, 1, 3, 3, {0, 1, 1}, {1, 2, 2}, {1, 1, 1}, 1, 0};
Geometry const kDilation   = {"3x3 dil2 c24 k8",         1, 1, 12, 10, 24,  8,  1, 3, 3, {0, 2, 2}, {1, 1, 1}, {1, 2, 2}, 1, 0};
Geometry const kStem       = {"7x7 stride2 c3 k64",      1, 1, 23, 21, 3,   64, 1, 7, 7, {0, 3, 3}, {1, 2, 2}, {1, 1, 1}, 1, 0};
Geometry const kGroups     = {"3x3 groups2 c16 k32",     2, 1, 7,  8,  16,  32, 1, 3, 3, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 2, 0};
Geometry const kGroupsOdd  = {"3x3 groups2 c6 k10",      2, 1, 7,  8,  6,   10, 1, 3, 3, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 2, 0};
Geometry const kGroups4    = {"1x1 groups4 c64 k32",     1, 1, 5,  6,  64,  32, 1, 1, 1, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 4, 0};
Geometry const kGap        = {"3x3 c16 k16 padded",      2, 1, 6,  7,  16,  16, 1, 3, 3, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, 8};
Geometry const kGapOdd     = {"3x3 c16 k16 gap3",        2, 1, 6,  7,  16,  16, 1, 3, 3, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, 3};
Geometry const k3d         = {"3x3x3 c8 k16",            1, 5, 6,  7,  8,   16, 3, 3, 3, {1, 1, 1}, {1, 2, 1}, {1, 1, 1}, 1, 0};
Geometry const k3dOdd      = {"3x2x3 c3 k5 dil",         2, 6, 5,  7,  3,   5,  3, 2, 3, {2, 0, 1}, {2, 1, 1}, {2, 1, 2}, 1, 0};
Geometry const kDw3        = {"dw 3x3 c64",              2, 1, 10, 9,  64,  64, 1, 3, 3, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 64, 0};
Geometry const kDw3s2      = {"dw 3x3 stride2 c72",      1, 1, 11, 12, 72,  72, 1, 3, 3, {0, 1, 1}, {1, 2, 2}, {1, 1, 1}, 72, 0};
Geometry const kDw5        = {"dw 5x5 c16",              1, 1, 9,  9,  16,  16, 1, 5, 5, {0, 2, 2}, {1, 1, 1}, {1, 1, 1}, 16, 0};
Geometry const kDw7s2      = {"dw 7x7 stride2 c24",      1, 1, 15, 14, 24,  24, 1, 7, 7, {0, 3, 3}, {1, 2, 2}, {1, 1, 1}, 24, 0};
Geometry const kDwOdd      = {"dw 3x3 c5 dil2",          2, 1, 8,  9,  5,   5,  1, 3, 3, {0, 2, 2}, {1, 1, 1}, {1, 2, 2}, 5, 0};
Geometry const kDwGap      = {"dw 3x3 c16 gap8",         1, 1, 6,  6,  16,  16, 1, 3, 3, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 16, 8};
Geometry const kDwC1       = {"dw 3x3 c1 7x9",           2, 1, 7,  9,  1,   1,  1, 3, 3, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1,  0};
Geometry const kDwPixel    = {"dw 3x3 pad1 c8 h=w=1",    1, 1, 1,  1,  8,   8,  1, 3, 3, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 8,  0};
Geometry const kDwBigPad   = {"dw 3x3 pad4 c24 5x6",     2, 1, 5,  6,  24,  24, 1, 3, 3, {0, 4, 4}, {1, 1, 1}, {1, 1, 1}, 24, 0};
Geometry const kDwC3s2d2   = {"dw 3x3 s2 dil2 c3",       2, 1, 13, 12, 3,   3,  1, 3, 3, {0, 2, 1}, {1, 2, 2}, {1, 2, 2}, 3,  0};
Geometry const kDwGapOdd   = {"dw 3x3 c24 gap3",         2, 1, 9,  8,  24,  24, 1, 3, 3, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 24, 3};
Geometry const kDw11       = {"dw 11x11 c16 pad5",       1, 1, 13, 12, 16,  16, 1, 11,11, {0, 5, 5}, {1, 1, 1}, {1, 1, 1}, 16, 0};
Geometry const kDwAsym     = {"dw 5x3 s(2,1) c72",       2, 1, 15, 14, 72,  72, 1, 5, 3, {0, 2, 1}, {1, 2, 1}, {1, 1, 2}, 72, 0};
// clang-format on

class ConvKernel : public ::testing::Test {
 protected:
  void SetUp() override { TESSEL_REQUIRE_GPU(); }
};

TEST_F(ConvKernel, Basic) { run_all(kBasic); }
TEST_F(ConvKernel, ManyTilesInMAndN) { run_all(kManyTiles); }
TEST_F(ConvKernel, C33K65) { run_all(kOdd); }
TEST_F(ConvKernel, OnePixel) {
  run_all(kPixel);
  run_all(kPixel3);
}
TEST_F(ConvKernel, PaddingLargerThanFilter) { run_all(kBigPad); }
TEST_F(ConvKernel, StrideLargerThanFilter) { run_all(kBigStride); }
TEST_F(ConvKernel, Stride2) { run_all(kStride2); }
TEST_F(ConvKernel, Dilation2) { run_all(kDilation); }
TEST_F(ConvKernel, StemC3) { run_all(kStem); }
TEST_F(ConvKernel, EveryChannelCount1To9) {
  for (int c = 1; c <= 9; ++c) {
    for (int k : {c, 9 - c + 1}) {
      Geometry g = {"3x3 small channels", 1, 1, 7, 6, c, k, 1, 3, 3, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, 0};
      std::string const name = "3x3 c" + std::to_string(c) + " k" + std::to_string(k);
      g.name = name.c_str();
      run_all(g);
    }
  }
}
TEST_F(ConvKernel, Groups) {
  run_all(kGroups);
  run_all(kGroupsOdd);
  run_all(kGroups4);
}
TEST_F(ConvKernel, PaddedStridesWriteNothingOutside) {
  run_all(kGap);
  run_all(kGapOdd);
}
TEST_F(ConvKernel, ThreeD) {
  run_all(k3d);
  run_all(k3dOdd);
}
TEST_F(ConvKernel, Depthwise) {
  for (Geometry const& g : {kDw3, kDw3s2, kDw5, kDw7s2, kDwOdd, kDwGap}) run_all(g);
}
// The direct dgrad and wgrad kernels on ragged geometry: C = 1 and 3, one pixel, padding past the
// filter, stride 2 with dilation 2, odd strides (gap 3: 1 channel per thread at C = 24), 121 taps
// (the wgrad's 14 tap groups), an asymmetric filter, stride and dilation.
TEST_F(ConvKernel, DepthwiseRagged) {
  for (Geometry const& g : {kDwC1, kDwPixel, kDwBigPad, kDwC3s2d2, kDwGapOdd, kDw11, kDwAsym}) run_all(g);
}
// The depthwise wgrad with its pixels split into 2, 3 and 7 slices (partials, then its own slice
// sum), with alpha, beta * residual and an activation; nothing written outside dw.
TEST_F(ConvKernel, DepthwiseWgradSlices) {
  Epilogue const res{1.25f, -0.5f, true, false, ConvActivation::none};
  Epilogue const relu{0.5f, 0.75f, true, false, ConvActivation::relu};
  std::uint32_t seed = 555;
  for (int slices : {2, 3, 7}) {
    for (Geometry const& g : {kDw3, kDw3s2, kDw7s2, kDwOdd, kDwGap, kDwC1, kDwBigPad, kDwC3s2d2, kDwGapOdd, kDw11, kDwAsym}) {
      run_case<bfloat16_t>(g, Operator::kWgrad, slices == 3 ? relu : res, seed++, slices);
      run_case<half_t>(g, Operator::kWgrad, res, seed++, slices);
    }
  }
  run_case<bfloat16_t>(kDwPixel, Operator::kWgrad, res, seed++, 3);  // one pixel: no split to make
}
// wgrad with its reduction split (2, 3 and 7 slices, ragged k-tile counts, the last slice
// shorter): the fp32 partials and the slice sum give the result the bound allows, with the fused
// epilogue, groups, odd channels, 3-D and padded strides (nothing written outside dw).
TEST_F(ConvKernel, WgradSplitReduction) {
  Epilogue const plain{};
  Epilogue const res{1.25f, -0.5f, true, false, ConvActivation::none};
  Epilogue const relu{0.5f, 0.75f, true, false, ConvActivation::relu};
  std::uint32_t seed = 99;
  for (int slices : {2, 3, 7}) {
    for (Geometry const& g : {kBasic, kManyTiles, kOdd, kGroups, kGroupsOdd, k3dOdd, kStem, kGapOdd}) {
      run_case<bfloat16_t>(g, Operator::kWgrad, plain, seed++, slices);
      run_case<half_t>(g, Operator::kWgrad, slices == 3 ? relu : res, seed++, slices);
    }
  }
  run_case<bfloat16_t>(kGap, Operator::kWgrad, res, seed++, 4);
  run_case<half_t>(kPixel, Operator::kWgrad, plain, seed++, 3);  // one k-tile: no split to make
}

TEST_F(ConvKernel, DepthwisePicksTheDirectKernel) {
  EXPECT_EQ(run_case<bfloat16_t>(kDw3, Operator::kFprop, {}, 7), "sm80_conv_depthwise_bf16_vec8");
  EXPECT_EQ(run_case<half_t>(kDwOdd, Operator::kFprop, {}, 8), "sm80_conv_depthwise_fp16_vec1");
  EXPECT_EQ(run_case<bfloat16_t>(kDw3, Operator::kDgrad, {}, 9), "sm80_conv_depthwise_dgrad_bf16_vec8");
  EXPECT_EQ(run_case<half_t>(kDwGapOdd, Operator::kDgrad, {}, 10), "sm80_conv_depthwise_dgrad_fp16_vec1");
  EXPECT_EQ(run_case<half_t>(kDw3s2, Operator::kWgrad, {}, 11), "sm80_conv_depthwise_wgrad_fp16_vec8");
  EXPECT_EQ(run_case<bfloat16_t>(kDwC1, Operator::kWgrad, {}, 12), "sm80_conv_depthwise_wgrad_bf16_vec1");
}
TEST_F(ConvKernel, FusedEpilogue) {
  Epilogue relu{0.5f, 0.75f, true, true, ConvActivation::relu};
  run_all(kBasic, relu);
  run_all(kOdd, relu);
  run_all(kDw3, relu);
  run_all(kDwOdd, relu);
  run_all(kDwGapOdd, relu);
  run_all(k3dOdd, relu);
  run_all(kGap, relu);
  run_all(kGapOdd, relu);
  Epilogue gelu{1.0f, 1.0f, true, false, ConvActivation::gelu_tanh};  // the convolution's GELU
  run_all(kGroups, gelu);
  Epilogue silu{-1.5f, 0.0f, true, true, ConvActivation::silu};  // beta 0: the residual is not read
  run_all(kStride2, silu);
  run_all(kDw7s2, silu);
}

// ---- no GPU needed ----------------------------------------------------------------------------------

Sm80ConvParams plain_params(Operator op, int c, int k, int groups) {
  Sm80ConvParams p{};
  alignas(16) static bfloat16_t dummy[64];  // 16-byte aligned (the selection looks at addresses); never read
  p.op = op;
  p.n = 1, p.d = 1, p.h = 8, p.w = 8, p.c = c, p.k = k, p.t = 1, p.r = 3, p.s = 3, p.z = 1, p.p = 8, p.q = 8;
  p.pad_h = p.pad_w = 1;
  p.stride_d = p.stride_h = p.stride_w = p.dilation_d = p.dilation_h = p.dilation_w = 1;
  p.groups = groups;
  p.x_stride[3] = c, p.x_stride[2] = 8LL * c, p.x_stride[1] = p.x_stride[0] = 64LL * c;
  p.y_stride[3] = k, p.y_stride[2] = 8LL * k, p.y_stride[1] = p.y_stride[0] = 64LL * k;
  p.w_stride_k = 9LL * (c / groups);
  p.x = p.filter = p.y = dummy;
  p.out = dummy;
  p.alpha = 1.0f;
  return p;
}

TEST(ConvKernelSelection, NamesWithoutCuda) {
  EXPECT_STREQ(sm80_conv_kernel_name(plain_params(Operator::kFprop, 64, 64, 1), DType::bf16), "sm80_conv_fprop_bf16_128x128x32");
  EXPECT_STREQ(sm80_conv_kernel_name(plain_params(Operator::kDgrad, 3, 64, 1), DType::f16),  // stride 1: dy block too large
               "sm80_conv_dgrad_fp16_128x128x32_align1");
  Sm80ConvParams strided = plain_params(Operator::kDgrad, 3, 64, 1);
  strided.stride_h = strided.stride_w = 2, strided.p = strided.q = 4;
  strided.y_stride[2] = 4LL * 64, strided.y_stride[1] = strided.y_stride[0] = 16LL * 64;
  EXPECT_STREQ(sm80_conv_kernel_name(strided, DType::f16), "sm80_conv_dgrad_fp16_smallc");
  EXPECT_STREQ(sm80_conv_kernel_name(plain_params(Operator::kFprop, 3, 64, 1), DType::bf16), "sm80_conv_fprop_bf16_smallc");
  // The stem's dgrad stages 88 KiB at C = 3 (filters of 4 channel rows) and 116 KiB at C = 8: on a
  // GPU whose blocks get 99 KiB (sm_86, sm_89) the C = 8 one stays on the implicit GEMM; the fprop
  // (61 KiB) runs everywhere.
  Sm80ConvParams stem = plain_params(Operator::kDgrad, 3, 64, 1);
  stem.h = stem.w = 32, stem.r = stem.s = 7, stem.pad_h = stem.pad_w = 3, stem.stride_h = stem.stride_w = 2, stem.p = stem.q = 16;
  stem.x_stride[3] = 3, stem.x_stride[2] = 32LL * 3, stem.x_stride[1] = stem.x_stride[0] = 1024LL * 3;
  stem.y_stride[3] = 64, stem.y_stride[2] = 16LL * 64, stem.y_stride[1] = stem.y_stride[0] = 256LL * 64;
  stem.w_stride_k = 49 * 3;
  for (int cc : {90, 80, 89}) EXPECT_STREQ(sm80_conv_kernel_name(stem, DType::bf16, cc), "sm80_conv_dgrad_bf16_smallc") << cc;
  Sm80ConvParams stem8 = stem;
  stem8.c = 8, stem8.w_stride_k = 49 * 8;
  stem8.x_stride[3] = 8, stem8.x_stride[2] = 32LL * 8, stem8.x_stride[1] = stem8.x_stride[0] = 1024LL * 8;
  EXPECT_STREQ(sm80_conv_kernel_name(stem8, DType::bf16, 90), "sm80_conv_dgrad_bf16_smallc");
  EXPECT_STREQ(sm80_conv_kernel_name(stem8, DType::bf16, 89), "sm80_conv_dgrad_bf16_128x128x32");
  stem.op = Operator::kFprop;
  EXPECT_STREQ(sm80_conv_kernel_name(stem, DType::bf16, 89), "sm80_conv_fprop_bf16_smallc");
  EXPECT_STREQ(sm80_conv_kernel_name(plain_params(Operator::kDgrad, 3, 72, 1), DType::f16),
               "sm80_conv_dgrad_fp16_128x128x32_align1");
  EXPECT_STREQ(sm80_conv_kernel_name(plain_params(Operator::kWgrad, 64, 65, 1), DType::bf16),
               "sm80_conv_wgrad_bf16_128x128x32_align1");
  EXPECT_STREQ(sm80_conv_kernel_name(plain_params(Operator::kFprop, 64, 64, 64), DType::bf16), "sm80_conv_depthwise_bf16_vec8");
  EXPECT_STREQ(sm80_conv_kernel_name(plain_params(Operator::kDgrad, 64, 64, 64), DType::bf16),
               "sm80_conv_depthwise_dgrad_bf16_vec8");
  EXPECT_STREQ(sm80_conv_kernel_name(plain_params(Operator::kWgrad, 64, 64, 64), DType::f16),
               "sm80_conv_depthwise_wgrad_fp16_vec8");
  EXPECT_STREQ(sm80_conv_kernel_name(plain_params(Operator::kWgrad, 5, 5, 5), DType::bf16), "sm80_conv_depthwise_wgrad_bf16_vec1");
  EXPECT_STREQ(sm80_conv_kernel_name(plain_params(Operator::kDgrad, 16, 32, 16), DType::bf16),  // multiplier 2: not direct
               "sm80_conv_dgrad_bf16_128x128x32_align1");
  EXPECT_STREQ(sm80_conv_kernel_name(plain_params(Operator::kFprop, 64, 64, 1), DType::f32), "none");
}

// Which problems split: a wgrad with few tiles and a long sum on a GPU with SMs to fill; never
// fprop or dgrad, never without SMs given; a forced count is dealt evenly.
TEST(ConvKernelSelection, WgradSplits) {
  Sm80ConvParams p = plain_params(Operator::kWgrad, 64, 64, 1);
  p.n = 64, p.h = p.w = p.p = p.q = 28;  // GEMM-K = 64 * 28 * 28 = 50176: 1568 k-tiles; 5 tiles
  p.x_stride[1] = p.x_stride[0] = 28LL * 28 * 64, p.x_stride[2] = 28LL * 64;
  p.y_stride[1] = p.y_stride[0] = 28LL * 28 * 64, p.y_stride[2] = 28LL * 64;
  Sm80ConvRunOptions o;
  o.sms = 132;
  ConvSplit const s = sm80_conv_split(p, DType::bf16, o);
  EXPECT_EQ(s.slices, 53);  // ceil(264 / 5)
  EXPECT_EQ(sm80_conv_workspace_size(p, DType::bf16, o), std::size_t(s.slices) * 64 * 576 * sizeof(float));
  o.sms = 0;
  EXPECT_EQ(sm80_conv_split(p, DType::bf16, o).slices, 1);
  EXPECT_EQ(sm80_conv_workspace_size(p, DType::bf16, o), 0u);
  o.slices = 4;
  EXPECT_EQ(sm80_conv_split(p, DType::bf16, o).slices, 4);
  o = {};
  o.sms = 132;
  p.op = Operator::kFprop;
  EXPECT_EQ(sm80_conv_split(p, DType::bf16, o).slices, 1);
  p.op = Operator::kDgrad;
  EXPECT_EQ(sm80_conv_split(p, DType::bf16, o).slices, 1);
}

// The depthwise wgrad splits its n*p*q pixels (tessel/conv/conv_depthwise_split.hpp): 4 CTAs a
// slice at C = 256 and 3x3, the workspace slices x r*s x c floats; a forced count is dealt evenly;
// the depthwise fprop and dgrad never split.
TEST(ConvKernelSelection, DepthwiseWgradSplits) {
  Sm80ConvParams p = plain_params(Operator::kWgrad, 256, 256, 256);
  p.n = 128, p.h = p.w = p.p = p.q = 28;  // 100352 pixels
  p.x_stride[1] = p.x_stride[0] = 28LL * 28 * 256, p.x_stride[2] = 28LL * 256;
  p.y_stride[1] = p.y_stride[0] = 28LL * 28 * 256, p.y_stride[2] = 28LL * 256;
  ASSERT_STREQ(sm80_conv_kernel_name(p, DType::bf16), "sm80_conv_depthwise_wgrad_bf16_vec8");
  Sm80ConvRunOptions o;
  o.sms = 132;
  ConvSplit const s = sm80_conv_split(p, DType::bf16, o);
  EXPECT_EQ(s.slices, 264);  // the header's example
  EXPECT_EQ(s.k_tiles_per_slice, 381);
  EXPECT_EQ(sm80_conv_workspace_size(p, DType::bf16, o), std::size_t(264) * 9 * 256 * sizeof(float));
  o.sms = 0;
  EXPECT_EQ(sm80_conv_split(p, DType::bf16, o).slices, 1);
  EXPECT_EQ(sm80_conv_workspace_size(p, DType::bf16, o), 0u);
  o.slices = 5;
  EXPECT_EQ(sm80_conv_split(p, DType::bf16, o).slices, 5);
  EXPECT_EQ(sm80_conv_split(p, DType::bf16, o).k_tiles_per_slice, 20071);  // ceil(100352 / 5)
  o = {};
  o.sms = 132;
  for (Operator op : {Operator::kFprop, Operator::kDgrad}) {
    p.op = op;
    EXPECT_EQ(sm80_conv_split(p, DType::bf16, o).slices, 1);
    EXPECT_EQ(sm80_conv_workspace_size(p, DType::bf16, o), 0u);
  }
}

TEST(ConvKernelSelection, RefusalsNameTheRule) {
  Status s = sm80_conv_run(plain_params(Operator::kFprop, 64, 64, 1), DType::f32, nullptr);
  EXPECT_EQ(s.code, StatusCode::not_supported);
  EXPECT_NE(s.reason.find("dtype"), std::string::npos) << s.reason;
  s = sm80_conv_run(plain_params(Operator::kFprop, 6, 64, 4), DType::bf16, nullptr);
  EXPECT_EQ(s.code, StatusCode::invalid_argument);
  EXPECT_NE(s.reason.find("groups"), std::string::npos) << s.reason;
  Sm80ConvParams p = plain_params(Operator::kFprop, 64, 64, 1);
  p.q = 7;
  s = sm80_conv_run(p, DType::bf16, nullptr);
  EXPECT_EQ(s.code, StatusCode::invalid_argument);
  EXPECT_NE(s.reason.find("output extents"), std::string::npos) << s.reason;
  p = plain_params(Operator::kDgrad, 64, 64, 1);
  p.y = nullptr;
  s = sm80_conv_run(p, DType::bf16, nullptr);
  EXPECT_EQ(s.code, StatusCode::invalid_argument);
}

}  // namespace
