// tessel/conv/conv_depthwise_split.hpp -- how many slices the direct depthwise weight gradient
// (kernel/sm80_depthwise_wgrad.hpp) cuts its sum over the n*p*q output pixels into. dw has only
// C*R*S elements (3x3 C256: 2304) and each is a sum over every output pixel of the batch (n128
// 28x28: 100352), so the CTAs of one slice -- ceil(C / 64) channel blocks times ceil(R*S / 9) tap
// groups -- are far too few to fill a GPU on their own.
//
// Rule: no split without SMs to fill (sms = 0) or when one slice's CTAs already make
// kDepthwiseWgradCtasPerSm per SM; otherwise enough slices for that many CTAs per SM, each slice at
// least kDepthwiseWgradMinPixels pixels long, at most kDepthwiseWgradMaxSlices slices; the pixels
// are then dealt out evenly (ceil) and slices that would be empty dropped. (conv_split_forced, over
// pixels, makes a given count: tests.)
//   e.g. 3x3 C256, n128 28x28 (100352 pixels) on 132 SMs: 4 CTAs a slice, wanted ceil(1056 / 4) =
//        264 (<= 100352 / 256 = 392, <= 1024) -> 264 slices of 381 pixels (the last 347); 1056 CTAs.
//   e.g. 3x3 C1024, n128 14x14 (25088 pixels): 16 CTAs a slice, wanted 66 (<= 98) -> 66 slices of
//        381 pixels (the last 323).
//   e.g. 3x3 C64, n2 8x8 (128 pixels): fewer than 2 slices of 256 pixels -> no split.
// Pure function of its arguments (host test conv_depthwise_split_test); plain C++.
#pragma once

#include <tessel/conv/conv_split.hpp>

#include <cstdint>

namespace tessel {

// CTAs per SM a split aims at: the 256-thread CTAs keep 9 x 8 fp32 sums a thread in registers, so
// an SM holds about two at a time; eight give four waves, the last partial one a small share.
inline constexpr std::int64_t kDepthwiseWgradCtasPerSm = 8;
// The shortest slice, in pixels: 8 passes of the CTA's 32 pixel lanes (Vec 8), against which the
// CTA's closing reduction (shuffles, shared memory, 9 x 64 partial sums written) stays small.
inline constexpr std::int64_t kDepthwiseWgradMinPixels = 256;
// The most slices: bounds the workspace (slices x C*R*S x 4 bytes) and the second pass's sums.
inline constexpr std::int64_t kDepthwiseWgradMaxSlices = 1024;

// The split of a sum over `pixels` output pixels whose every slice takes `ctas_per_slice` CTAs, on
// a GPU of `sms` SMs (file comment). k_tiles_per_slice counts pixels. Pre: ctas_per_slice >= 1,
// pixels >= 0, sms >= 0.
constexpr ConvSplit conv_depthwise_wgrad_split(std::int64_t ctas_per_slice, std::int64_t pixels, std::int64_t sms) {
  ConvSplit s;
  s.k_tiles_per_slice = int(pixels);
  if (ctas_per_slice < 1 || sms < 1 || ctas_per_slice >= kDepthwiseWgradCtasPerSm * sms) return s;
  std::int64_t want = (kDepthwiseWgradCtasPerSm * sms + ctas_per_slice - 1) / ctas_per_slice;
  if (want > pixels / kDepthwiseWgradMinPixels) want = pixels / kDepthwiseWgradMinPixels;
  if (want > kDepthwiseWgradMaxSlices) want = kDepthwiseWgradMaxSlices;
  if (want < 2) return s;
  std::int64_t const per = (pixels + want - 1) / want;
  s.k_tiles_per_slice = int(per);
  s.slices = int((pixels + per - 1) / per);
  return s;
}

}  // namespace tessel
