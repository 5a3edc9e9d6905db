//===- Run/Kernels/Convolution.cpp - convolution.out (1d/2d/3d) -----------===//
//
// Direct convolution over up to three spatial dims (1d and 2d run as 3d with
// unit leading dims), with groups, stride, padding, dilation, and the
// transposed form with output_padding. Accumulates in the computation type
// (float for float32, like PyTorch's CPU kernels).
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

namespace exir::run::kern {
namespace {

/// A per-spatial-dim parameter padded to 3 dims (leading dims get `fill`);
/// a one-element list applies to every dim.
std::array<int64_t, 3> spatial3(std::vector<int64_t> v, int64_t spatial, int64_t fill, const char *what) {
  if (v.size() == 1 && spatial > 1) v.assign(size_t(spatial), v[0]);
  if (int64_t(v.size()) != spatial)
    fail(std::string(what) + " has " + std::to_string(v.size()) + " entries, expected " + std::to_string(spatial));
  std::array<int64_t, 3> out{fill, fill, fill};
  for (int64_t i = 0; i < spatial; ++i) out[size_t(3 - spatial + i)] = v[size_t(i)];
  return out;
}

struct ConvShape {
  int64_t n, cin, cout, groups;
  std::array<int64_t, 3> in, kernel, out, stride, pad, dilation;
};

/// First and one-past-last output index o with 0 <= o * stride + offset < size.
std::pair<int64_t, int64_t> validRange(int64_t outSize, int64_t stride, int64_t offset, int64_t size) {
  auto ceilDiv = [](int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); };
  auto floorDiv = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  int64_t lo = std::max<int64_t>(0, ceilDiv(-offset, stride));
  int64_t hi = std::min<int64_t>(outSize, floorDiv(size - 1 - offset, stride) + 1);
  return {lo, std::max(lo, hi)};
}

template <typename C>
void convForward(const ConvShape &s, const std::vector<C> &x, const std::vector<C> &w, const std::vector<C> &bias,
                 std::vector<C> &y) {
  const int64_t cinG = s.cin / s.groups, coutG = s.cout / s.groups;
  const int64_t inPlane = s.in[0] * s.in[1] * s.in[2], outPlane = s.out[0] * s.out[1] * s.out[2];
  const int64_t kVolume = s.kernel[0] * s.kernel[1] * s.kernel[2];
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t oc = 0; oc < s.cout; ++oc) {
      C *yPlane = &y[size_t((n * s.cout + oc) * outPlane)];
      std::fill(yPlane, yPlane + outPlane, bias.empty() ? C(0) : bias[oc]);
      int64_t g = oc / coutG;
      for (int64_t icg = 0; icg < cinG; ++icg) {
        const C *xPlane = &x[size_t((n * s.cin + g * cinG + icg) * inPlane)];
        const C *wKernel = &w[size_t((oc * cinG + icg) * kVolume)];
        for (int64_t kd = 0; kd < s.kernel[0]; ++kd)
          for (int64_t kh = 0; kh < s.kernel[1]; ++kh)
            for (int64_t kw = 0; kw < s.kernel[2]; ++kw) {
              C wv = wKernel[(kd * s.kernel[1] + kh) * s.kernel[2] + kw];
              int64_t offD = kd * s.dilation[0] - s.pad[0], offH = kh * s.dilation[1] - s.pad[1],
                      offW = kw * s.dilation[2] - s.pad[2];
              auto [d0, d1] = validRange(s.out[0], s.stride[0], offD, s.in[0]);
              auto [h0, h1] = validRange(s.out[1], s.stride[1], offH, s.in[1]);
              auto [w0, w1] = validRange(s.out[2], s.stride[2], offW, s.in[2]);
              for (int64_t od = d0; od < d1; ++od)
                for (int64_t oh = h0; oh < h1; ++oh) {
                  const C *xRow = xPlane + ((od * s.stride[0] + offD) * s.in[1] + oh * s.stride[1] + offH) * s.in[2];
                  C *yRow = yPlane + (od * s.out[1] + oh) * s.out[2];
                  for (int64_t ow = w0; ow < w1; ++ow) yRow[ow] += wv * xRow[ow * s.stride[2] + offW];
                }
            }
      }
    }
}

/// Transposed convolution: each input element scatters into the output.
template <typename C>
void convTransposed(const ConvShape &s, const std::vector<C> &x, const std::vector<C> &w, const std::vector<C> &bias,
                    std::vector<C> &y) {
  const int64_t cinG = s.cin / s.groups, coutG = s.cout / s.groups;
  const int64_t inPlane = s.in[0] * s.in[1] * s.in[2], outPlane = s.out[0] * s.out[1] * s.out[2];
  const int64_t kVolume = s.kernel[0] * s.kernel[1] * s.kernel[2];
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t oc = 0; oc < s.cout; ++oc)
      std::fill(&y[size_t((n * s.cout + oc) * outPlane)], &y[size_t((n * s.cout + oc) * outPlane)] + outPlane,
                bias.empty() ? C(0) : bias[oc]);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t ic = 0; ic < s.cin; ++ic) {
      int64_t g = ic / cinG;
      const C *xPlane = &x[size_t((n * s.cin + ic) * inPlane)];
      for (int64_t ocg = 0; ocg < coutG; ++ocg) {
        int64_t oc = g * coutG + ocg;
        C *yPlane = &y[size_t((n * s.cout + oc) * outPlane)];
        const C *wKernel = &w[size_t((ic * coutG + ocg) * kVolume)];
        for (int64_t id = 0; id < s.in[0]; ++id)
          for (int64_t ih = 0; ih < s.in[1]; ++ih)
            for (int64_t iw = 0; iw < s.in[2]; ++iw) {
              C xv = xPlane[(id * s.in[1] + ih) * s.in[2] + iw];
              for (int64_t kd = 0; kd < s.kernel[0]; ++kd) {
                int64_t od = id * s.stride[0] - s.pad[0] + kd * s.dilation[0];
                if (od < 0 || od >= s.out[0]) continue;
                for (int64_t kh = 0; kh < s.kernel[1]; ++kh) {
                  int64_t oh = ih * s.stride[1] - s.pad[1] + kh * s.dilation[1];
                  if (oh < 0 || oh >= s.out[1]) continue;
                  for (int64_t kw = 0; kw < s.kernel[2]; ++kw) {
                    int64_t ow = iw * s.stride[2] - s.pad[2] + kw * s.dilation[2];
                    if (ow < 0 || ow >= s.out[2]) continue;
                    yPlane[(od * s.out[1] + oh) * s.out[2] + ow] += xv * wKernel[(kd * s.kernel[1] + kh) * s.kernel[2] + kw];
                  }
                }
              }
            }
      }
    }
}

void convolution(std::span<Value *> args) {
  const Tensor &input = tensorArg(args, 0), &weight = tensorArg(args, 1);
  const Tensor *bias = args[2]->toOptionalTensor();
  bool transposed = boolArg(args, 6);
  int64_t groups = intArg(args, 8);
  Tensor &out = tensorArg(args, 9);
  int64_t spatial = input.dim() - 2;
  if (spatial < 1 || spatial > 3) fail("expected a 3-d, 4-d or 5-d input, got " + sizesText(input.sizes));
  if (weight.dim() != input.dim()) fail("weight " + sizesText(weight.sizes) + " and input " + sizesText(input.sizes) + " ranks differ");
  checkSameDtype(input, weight, "input", "weight");
  checkSameDtype(input, out, "input", "out");
  if (bias) checkSameDtype(input, *bias, "input", "bias");
  if (groups <= 0) fail("groups must be positive");

  ConvShape s;
  s.n = input.sizes[0];
  s.cin = input.sizes[1];
  s.groups = groups;
  s.in = spatial3({input.sizes.begin() + 2, input.sizes.end()}, spatial, 1, "input");
  s.kernel = spatial3({weight.sizes.begin() + 2, weight.sizes.end()}, spatial, 1, "weight");
  s.stride = spatial3(intListArg(args, 3), spatial, 1, "stride");
  s.pad = spatial3(intListArg(args, 4), spatial, 0, "padding");
  s.dilation = spatial3(intListArg(args, 5), spatial, 1, "dilation");
  std::array<int64_t, 3> outputPadding{0, 0, 0};
  if (transposed) outputPadding = spatial3(intListArg(args, 7), spatial, 0, "output_padding");
  if (s.cin % groups) fail("input channels " + std::to_string(s.cin) + " are not divisible by groups " + std::to_string(groups));
  if (transposed) {
    if (weight.sizes[0] != s.cin) fail("transposed weight " + sizesText(weight.sizes) + " does not match input channels " + std::to_string(s.cin));
    s.cout = weight.sizes[1] * groups;
  } else {
    s.cout = weight.sizes[0];
    if (weight.sizes[1] * groups != s.cin)
      fail("weight " + sizesText(weight.sizes) + " expects " + std::to_string(weight.sizes[1] * groups) +
           " input channels, got " + std::to_string(s.cin));
    if (s.cout % groups) fail("output channels are not divisible by groups");
  }
  if (bias && bias->numel() != s.cout) fail("bias has " + std::to_string(bias->numel()) + " elements, expected " + std::to_string(s.cout));
  std::vector<int64_t> outSizes{s.n, s.cout};
  for (size_t i = 0; i < 3; ++i) {
    if (s.stride[i] <= 0 || s.dilation[i] <= 0) fail("stride and dilation must be positive");
    int64_t span = s.dilation[i] * (s.kernel[i] - 1);
    s.out[i] = transposed ? (s.in[i] - 1) * s.stride[i] - 2 * s.pad[i] + span + outputPadding[i] + 1
                          : (s.in[i] + 2 * s.pad[i] - span - 1) / s.stride[i] + 1;
    if (s.out[i] <= 0 || (!transposed && s.in[i] + 2 * s.pad[i] - span - 1 < 0))
      fail("the kernel is larger than the padded input");
    if (i >= size_t(3 - spatial)) outSizes.push_back(s.out[i]);
  }
  out.resize(outSizes);
  checkSameDimOrder({&input, &out});
  switchCompute(input.dtype, [&]<typename C>() {
    std::vector<C> x = toVector<C>(input), w = toVector<C>(weight), b = bias ? toVector<C>(*bias) : std::vector<C>();
    std::vector<C> y(size_t(out.numel()));
    if (transposed) convTransposed(s, x, w, b, y);
    else convForward(s, x, w, b, y);
    writeValues(out, y);
  });
}

KernelRegistration registration({
    {"aten::convolution.out", [](auto args) { convolution(args); }},
});

} // namespace
} // namespace exir::run::kern
