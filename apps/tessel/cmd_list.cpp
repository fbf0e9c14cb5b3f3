// apps/tessel/cmd_list.cpp -- `tessel list`: the compiled GEMM kernels, what each can do, and
// whether this GPU can run it (the registry of tessel/gemm/device/gemm_registry.hpp); then the
// attention kernels (tessel/attention/attention.hpp's registry) and the convolution kernels
// (tessel/conv/conv.hpp's).
#include "command.hpp"

#if defined(TESSEL_HAS_CUDA)

#include <tessel/attention/attention.hpp>
#include <tessel/attention/attention_backward.hpp>
#include <tessel/conv/conv.hpp>
#include <tessel/gemm.hpp>
#include <tessel/runtime/device.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

int run_list(std::vector<std::string> const& args) {
  for (auto const& a : args) {
    if (a == "--help") {
      std::printf("usage: tessel list    the compiled GEMM, attention and convolution kernels, what each runs,\n"
                  "                      and the GEMM heuristic's rule\n");
      return 0;
    }
    throw tessel::cli::UsageError("unexpected argument '" + a + "' (tessel list takes none)");
  }
  std::string const no_gpu = tessel::no_device_reason();
  int dev = 0;
  std::optional<tessel::DeviceInfo> info;
  if (no_gpu.empty() && cudaGetDevice(&dev) == cudaSuccess) info = tessel::query_device(dev);
  if (info)
    std::printf("GPU: %s (sm_%d%d)\n\n", info->name.c_str(), info->cc_major, info->cc_minor);
  else
    std::printf("GPU: none (%s); images are not checked\n\n", no_gpu.c_str());

  for (tessel::GemmKernelInfo const& k : tessel::gemm_kernels()) {
    std::printf("%s\n", k.name);
    std::printf("  what       %s\n", k.summary);
    std::printf("  tile       %s\n", k.tile);
    std::printf("  dtypes     %s\n", k.dtypes);
    std::printf("  layouts    %s\n", k.layouts);
    std::printf("  alignment  %s\n", k.alignment);
    std::printf("  chosen     %s\n", k.selection);
    if (info) {
      tessel::GemmArguments g;  // fp32 -> fp32: the instance the image check probes
      cudaFuncAttributes attr{};
      if (tessel::Status s = tessel::gemm_kernel_runs_here(k, g); !s) {
        std::printf("  this GPU   cannot run it: %s\n", s.reason.c_str());
      } else if (k.attributes(g, &attr) == cudaSuccess) {
        std::printf("  this GPU   runs the sm_%d image: %d registers/thread, %zu B static smem, %d B local\n",
                    attr.binaryVersion, attr.numRegs, attr.sharedSizeBytes, int(attr.localSizeBytes));
      }
    } else {
      std::printf("  arch       sm_%d or newer\n", k.min_cc);
    }
    std::printf("\n");
  }
  std::printf("Heuristic (kernel auto): on an sm_90 GPU bf16, fp16 and fp8 e4m3 x e4m3 run the sm90 kernels\n"
              "(a D at most 64 wide or tall: sm90_<dtype>_64x64x64 where its tiles fit one round on the SMs\n"
              "unless few 128-row tiles split a long K, else sm90_<dtype>_128x64x64; 128x256 in 2x1 clusters\n"
              "by default; each entry's `chosen`). Otherwise bf16, fp16 and tf32 on sm_80 or newer run the\n"
              "sm80 tensor-core kernels: sm80_<dtype>_skinny when\n"
              "min(M, N) <= 64 and the long operand is >= 8 MiB (bf16, fp16), else 128x128x32 when its tiles fill\n"
              "every SM or K >= 4096, else the 64x64 tile.\n"
              "fp32: simt_64x64x8 when ceil(M/128)*ceil(N/128)*batch is below the SM count, else simt_128x128x8_128t.\n"
              "K = 0 or alpha = 0 computes D = beta*C without a GEMM kernel.\n");

  std::printf("\nAttention kernels (tessel attention --kernel NAME):\n\n");
  for (int i = 0; i < tessel::attention_kernel_count(); ++i) {
    tessel::AttentionKernelInfo const k = tessel::attention_kernel_info(i);
    std::printf("%s\n", k.name);
    std::printf("  what       %s\n", k.description);
    std::printf("  arch       sm_%d or newer\n\n", k.min_sm);
  }

  std::printf("\nAttention backward kernels (tessel::attention_backward; tessel attention --backward):\n\n");
  for (int i = 0; i < tessel::attention_backward_kernel_count(); ++i) {
    tessel::AttentionBackwardKernelInfo const k = tessel::attention_backward_kernel_info(i);
    std::printf("%s\n", k.name);
    std::printf("  what       %s\n", k.description);
    std::printf("  arch       sm_%d or newer\n\n", k.min_sm);
  }

  std::printf("\nConvolution kernels (tessel conv --kernel NAME; the library picks one per problem):\n\n");
  for (int i = 0; i < tessel::conv_kernel_count(); ++i) {
    tessel::ConvKernelInfo const k = tessel::conv_kernel_info(i);
    std::printf("%s\n", k.name);
    std::printf("  what       %s\n", k.description);
    std::printf("  arch       sm_%d or newer\n\n", k.min_sm);
  }
  std::printf("gemm:<GEMM kernel>\n  what       a 1x1 convolution at stride 1, no padding, groups 1, evenly strided pixel rows,\n"
              "             no bias or activation: one GEMM, run by the GEMM API's kernel (the GEMM kernels above)\n\n");
  return 0;
}

}  // namespace

static tessel::cli::Register reg{{"list", "the compiled GEMM, attention (forward and backward) and convolution kernels and what each can do", run_list}};

#else

namespace {
int run_list(std::vector<std::string> const&) {
  throw tessel::cli::UsageError("this tessel was built without CUDA (TESSEL_ENABLE_CUDA=OFF): no kernels are compiled");
}
}  // namespace
static tessel::cli::Register reg{{"list", "the compiled GEMM, attention and convolution kernels (needs a CUDA build)", run_list}};

#endif
