// The layout algebra compiles for the device and computes there what it computes on the host.
#include "gpu/gpu_test.hpp"

#include <tessel/layout.hpp>

#include <vector>

using namespace tessel;

namespace {

// A static swizzled layout, a static divided layout and a run-time layout, evaluated per thread.
__global__ void eval_layouts(int n, int stride_m, long long* out) {
  auto sw = composition(Swizzle<3, 3, 3>{}, make_layout(make_shape(_8{}, _64{}), make_stride(_64{}, _1{})));
  auto div = zipped_divide(make_layout(make_shape(_16{}, _32{})), make_tile(_4{}, _8{}));
  auto dyn = composition(make_layout(make_shape(stride_m, 16), make_stride(1, stride_m)), make_layout(make_shape(_4{}, _4{}), make_stride(_2{}, _16{})));
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[3 * i + 0] = sw(i % size(sw));
    out[3 * i + 1] = div(i % size(div));
    out[3 * i + 2] = dyn(i % size(dyn));
  }
}

}  // namespace

TEST(LayoutDevice, DeviceEvaluationMatchesHost) {
  TESSEL_REQUIRE_GPU();
  int const n = 1024, stride_m = 32;
  long long* d_out = nullptr;
  TESSEL_CUDA_OK(cudaMalloc(&d_out, 3 * n * sizeof(long long)));
  TESSEL_CUDA_OK(cudaMemset(d_out, 0xff, 3 * n * sizeof(long long)));  // poison
  eval_layouts<<<(n + 127) / 128, 128>>>(n, stride_m, d_out);
  TESSEL_CUDA_OK(cudaGetLastError());
  std::vector<long long> out(3 * n);
  TESSEL_CUDA_OK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(long long), cudaMemcpyDeviceToHost));
  TESSEL_CUDA_OK(cudaFree(d_out));

  auto sw = composition(Swizzle<3, 3, 3>{}, make_layout(make_shape(_8{}, _64{}), make_stride(_64{}, _1{})));
  auto div = zipped_divide(make_layout(make_shape(_16{}, _32{})), make_tile(_4{}, _8{}));
  auto dyn = composition(make_layout(make_shape(stride_m, 16), make_stride(1, stride_m)), make_layout(make_shape(_4{}, _4{}), make_stride(_2{}, _16{})));
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(out[3 * i + 0], sw(i % size(sw))) << "swizzled layout, i=" << i;
    ASSERT_EQ(out[3 * i + 1], div(i % size(div))) << "zipped_divide, i=" << i;
    ASSERT_EQ(out[3 * i + 2], dyn(i % size(dyn))) << "run-time composition, i=" << i;
  }
}
