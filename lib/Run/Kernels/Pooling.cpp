//===- Run/Kernels/Pooling.cpp - max/avg/adaptive pooling, upsampling -----===//
//
// 2d pooling over [N, C, H, W] or [C, H, W] inputs with PyTorch's output size
// rule (ceil_mode drops a last window that would start in the padding), and
// nearest / bilinear upsampling with PyTorch's source-index formulas.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

#include <limits>

namespace exir::run::kern {
namespace {

/// An int[2] argument; one element applies to both dims, empty gives `dflt`.
std::array<int64_t, 2> pair2(std::vector<int64_t> v, std::array<int64_t, 2> dflt, const char *what) {
  if (v.empty()) return dflt;
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() != 2) fail(std::string(what) + " must have one or two elements");
  return {v[0], v[1]};
}

/// PyTorch's pooling_output_shape.
int64_t pooledSize(int64_t in, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation, bool ceilMode) {
  if (stride <= 0 || kernel <= 0 || dilation <= 0) fail("kernel_size, stride and dilation must be positive");
  if (pad < 0 || pad > ((kernel - 1) * dilation + 1) / 2)
    fail("pad should be at most half of the effective kernel size");
  int64_t numerator = in + 2 * pad - dilation * (kernel - 1) - 1 + (ceilMode ? stride - 1 : 0);
  int64_t out = (numerator >= 0 ? numerator / stride : -((-numerator + stride - 1) / stride)) + 1;
  if (ceilMode && (out - 1) * stride >= in + pad) --out;
  if (out <= 0) fail("the pooled output would be empty");
  return out;
}

/// The input as planes [N*C, H, W] and the output sizes with spatial dims (oh, ow).
struct Planes {
  int64_t planes, h, w;
  std::vector<int64_t> outSizes(int64_t oh, int64_t ow, const Tensor &t) const {
    std::vector<int64_t> sizes(t.sizes.begin(), t.sizes.end() - 2);
    sizes.push_back(oh);
    sizes.push_back(ow);
    return sizes;
  }
};
/// Sum of plane `pl`'s rows [h0, h1) x columns [w0, w1) in row-major `x`.
template <typename C>
C windowSum(const std::vector<C> &x, const Planes &p, int64_t pl, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
  C sum = 0;
  for (int64_t r = h0; r < h1; ++r)
    for (int64_t c = w0; c < w1; ++c) sum += x[size_t((pl * p.h + r) * p.w + c)];
  return sum;
}

Planes planesOf(const Tensor &t) {
  if (t.dim() != 3 && t.dim() != 4) fail("expected a 3-d or 4-d input, got " + sizesText(t.sizes));
  int64_t h = t.sizes[t.dim() - 2], w = t.sizes[t.dim() - 1];
  return {h != 0 && w != 0 ? t.numel() / (h * w) : 0, h, w};
}

void maxPool(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  auto kernel = pair2(intListArg(args, 1), {0, 0}, "kernel_size");
  auto stride = pair2(intListArg(args, 2), kernel, "stride");
  auto pad = pair2(intListArg(args, 3), {0, 0}, "padding");
  auto dilation = pair2(intListArg(args, 4), {1, 1}, "dilation");
  bool ceilMode = boolArg(args, 5);
  Tensor &out = tensorArg(args, 6), &indices = tensorArg(args, 7);
  checkSameDtype(self, out, "self", "out");
  checkDtype(indices, ScalarType::Long, "indices");
  Planes p = planesOf(self);
  int64_t oh = pooledSize(p.h, kernel[0], pad[0], stride[0], dilation[0], ceilMode);
  int64_t ow = pooledSize(p.w, kernel[1], pad[1], stride[1], dilation[1], ceilMode);
  out.resize(p.outSizes(oh, ow, self));
  indices.resize(out.sizes);
  checkSameDimOrder({&self, &out, &indices});
  switchCompute(self.dtype, [&]<typename C>() {
    std::vector<C> x = toVector<C>(self), y(size_t(out.numel()));
    std::vector<int64_t> idx(y.size());
    for (int64_t pl = 0; pl < p.planes; ++pl)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          C best = std::numeric_limits<C>::lowest();
          if constexpr (std::numeric_limits<C>::has_infinity) best = -std::numeric_limits<C>::infinity();
          int64_t bestIndex = -1;
          for (int64_t a = 0; a < kernel[0]; ++a) {
            int64_t r = i * stride[0] - pad[0] + a * dilation[0];
            if (r < 0 || r >= p.h) continue;
            for (int64_t b = 0; b < kernel[1]; ++b) {
              int64_t c = j * stride[1] - pad[1] + b * dilation[1];
              if (c < 0 || c >= p.w) continue;
              C v = x[size_t((pl * p.h + r) * p.w + c)];
              // NaN wins and sticks, as in PyTorch.
              if (bestIndex < 0 || v > best || v != v) {
                best = v;
                bestIndex = r * p.w + c;
                if (v != v) goto done;
              }
            }
          }
        done:
          y[size_t((pl * oh + i) * ow + j)] = best;
          idx[size_t((pl * oh + i) * ow + j)] = bestIndex;
        }
    writeValues(out, y);
    writeValues(indices, idx);
  });
}

void avgPool(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  auto kernel = pair2(intListArg(args, 1), {0, 0}, "kernel_size");
  auto stride = pair2(intListArg(args, 2), kernel, "stride");
  auto pad = pair2(intListArg(args, 3), {0, 0}, "padding");
  bool ceilMode = boolArg(args, 4), countIncludePad = boolArg(args, 5);
  std::optional<int64_t> divisorOverride = optIntArg(args, 6);
  Tensor &out = tensorArg(args, 7);
  checkSameDtype(self, out, "self", "out");
  if (divisorOverride && *divisorOverride == 0) fail("divisor must be not zero");
  Planes p = planesOf(self);
  int64_t oh = pooledSize(p.h, kernel[0], pad[0], stride[0], 1, ceilMode);
  int64_t ow = pooledSize(p.w, kernel[1], pad[1], stride[1], 1, ceilMode);
  out.resize(p.outSizes(oh, ow, self));
  checkSameDimOrder({&self, &out});
  switchCompute(self.dtype, [&]<typename C>() {
    std::vector<C> x = toVector<C>(self), y(size_t(out.numel()));
    for (int64_t pl = 0; pl < p.planes; ++pl)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          int64_t h0 = i * stride[0] - pad[0], w0 = j * stride[1] - pad[1];
          int64_t h1 = std::min(h0 + kernel[0], p.h + pad[0]), w1 = std::min(w0 + kernel[1], p.w + pad[1]);
          int64_t poolSize = (h1 - h0) * (w1 - w0);
          h0 = std::max<int64_t>(h0, 0), w0 = std::max<int64_t>(w0, 0);
          h1 = std::min(h1, p.h), w1 = std::min(w1, p.w);
          C sum = windowSum(x, p, pl, h0, h1, w0, w1);
          int64_t divisor = divisorOverride ? *divisorOverride : countIncludePad ? poolSize : (h1 - h0) * (w1 - w0);
          y[size_t((pl * oh + i) * ow + j)] = divisor ? C(sum / C(divisor)) : C(0);
        }
    writeValues(out, y);
  });
}

void adaptiveAvgPool(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  auto size = pair2(intListArg(args, 1), {0, 0}, "output_size");
  Tensor &out = tensorArg(args, 2);
  checkSameDtype(self, out, "self", "out");
  Planes p = planesOf(self);
  int64_t oh = size[0], ow = size[1];
  if (oh < 0 || ow < 0) fail("output_size must not be negative");
  out.resize(p.outSizes(oh, ow, self));
  checkSameDimOrder({&self, &out});
  switchCompute(self.dtype, [&]<typename C>() {
    std::vector<C> x = toVector<C>(self), y(size_t(out.numel()));
    for (int64_t pl = 0; pl < p.planes; ++pl)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          int64_t h0 = i * p.h / oh, h1 = ((i + 1) * p.h + oh - 1) / oh;
          int64_t w0 = j * p.w / ow, w1 = ((j + 1) * p.w + ow - 1) / ow;
          y[size_t((pl * oh + i) * ow + j)] = windowSum(x, p, pl, h0, h1, w0, w1) / C((h1 - h0) * (w1 - w0));
        }
    writeValues(out, y);
  });
}

/// Output sizes and the scale factors given (if any) of an upsample.
struct Upsample {
  int64_t oh, ow;
  std::optional<double> scaleH, scaleW; // given scale factors
};
/// The .vec forms: output_size, or scale_factors from which the size follows.
Upsample upsampleSizes(std::span<Value *> args, size_t sizeIdx, size_t scalesIdx, const Planes &p) {
  Upsample u;
  bool hasSize = false;
  std::vector<int64_t> size = intListArg(args, sizeIdx, &hasSize);
  if (hasSize) {
    if (size.size() != 2) fail("output_size must have two elements");
    u.oh = size[0], u.ow = size[1];
  } else {
    if (args[scalesIdx]->isNone()) fail("either output_size or scale_factors must be given");
    const std::vector<double> &scales = args[scalesIdx]->toDoubleList();
    if (scales.size() != 2) fail("scale_factors must have two elements");
    u.scaleH = scales[0], u.scaleW = scales[1];
    u.oh = int64_t(std::floor(double(p.h) * scales[0])), u.ow = int64_t(std::floor(double(p.w) * scales[1]));
  }
  if (u.oh <= 0 || u.ow <= 0) fail("the upsampled output would be empty");
  return u;
}
/// The .out forms: output_size, and optional scales used for the index mapping.
Upsample upsampleSizesWithScales(std::span<Value *> args, size_t sizeIdx, size_t scaleHIdx) {
  Upsample u;
  std::vector<int64_t> size = intListArg(args, sizeIdx);
  if (size.size() != 2) fail("output_size must have two elements");
  u.oh = size[0], u.ow = size[1];
  if (!args[scaleHIdx]->isNone()) u.scaleH = args[scaleHIdx]->toDouble();
  if (!args[scaleHIdx + 1]->isNone()) u.scaleW = args[scaleHIdx + 1]->toDouble();
  if (u.oh <= 0 || u.ow <= 0) fail("the upsampled output would be empty");
  return u;
}

/// PyTorch's compute_scales_value / area_pixel_compute_scale, in float.
float pixelScale(int64_t in, int64_t out, std::optional<double> scale, bool alignCorners) {
  if (alignCorners) return out > 1 ? float(in - 1) / float(out - 1) : 0.0f;
  return scale && *scale > 0 ? float(1.0 / *scale) : float(in) / float(out);
}

int64_t nearestIndex(int64_t o, int64_t in, int64_t out, float scale) {
  if (out == in) return o;
  if (out == 2 * in) return o >> 1;
  return std::min(int64_t(std::floor(float(o) * scale)), in - 1);
}

void upsampleNearest(const Tensor &self, const Upsample &u, Tensor &out) {
  checkSameDtype(self, out, "self", "out");
  Planes p = planesOf(self);
  out.resize(p.outSizes(u.oh, u.ow, self));
  checkSameDimOrder({&self, &out});
  float sh = pixelScale(p.h, u.oh, u.scaleH, false), sw = pixelScale(p.w, u.ow, u.scaleW, false);
  switchCompute(self.dtype, [&]<typename C>() {
    std::vector<C> x = toVector<C>(self), y(size_t(out.numel()));
    for (int64_t pl = 0; pl < p.planes; ++pl)
      for (int64_t i = 0; i < u.oh; ++i) {
        int64_t r = nearestIndex(i, p.h, u.oh, sh);
        for (int64_t j = 0; j < u.ow; ++j)
          y[size_t((pl * u.oh + i) * u.ow + j)] = x[size_t((pl * p.h + r) * p.w + nearestIndex(j, p.w, u.ow, sw))];
      }
    writeValues(out, y);
  });
}

void upsampleBilinear(const Tensor &self, const Upsample &u, bool alignCorners, Tensor &out) {
  checkFloating(self, "input");
  checkSameDtype(self, out, "self", "out");
  Planes p = planesOf(self);
  out.resize(p.outSizes(u.oh, u.ow, self));
  checkSameDimOrder({&self, &out});
  float sh = pixelScale(p.h, u.oh, u.scaleH, alignCorners), sw = pixelScale(p.w, u.ow, u.scaleW, alignCorners);
  // Source coordinate, its floor, the next index and the weight of the next.
  auto source = [alignCorners](int64_t o, int64_t in, float scale, int64_t &i0, int64_t &i1, float &lambda) {
    float src = alignCorners ? scale * float(o) : std::max(scale * (float(o) + 0.5f) - 0.5f, 0.0f);
    i0 = std::min(int64_t(src), in - 1);
    i1 = i0 + (i0 < in - 1 ? 1 : 0);
    lambda = std::min(std::max(src - float(i0), 0.0f), 1.0f);
  };
  switchCompute(self.dtype, [&]<typename C>() {
    std::vector<C> x = toVector<C>(self), y(size_t(out.numel()));
    for (int64_t i = 0; i < u.oh; ++i) {
      int64_t r0, r1;
      float lh;
      source(i, p.h, sh, r0, r1, lh);
      for (int64_t j = 0; j < u.ow; ++j) {
        int64_t c0, c1;
        float lw;
        source(j, p.w, sw, c0, c1, lw);
        for (int64_t pl = 0; pl < p.planes; ++pl) {
          const C *plane = &x[size_t(pl * p.h * p.w)];
          C top = C(1 - lw) * plane[r0 * p.w + c0] + C(lw) * plane[r0 * p.w + c1];
          C bottom = C(1 - lw) * plane[r1 * p.w + c0] + C(lw) * plane[r1 * p.w + c1];
          y[size_t((pl * u.oh + i) * u.ow + j)] = C(1 - lh) * top + C(lh) * bottom;
        }
      }
    }
    writeValues(out, y);
  });
}

KernelRegistration registration({
    {"aten::max_pool2d_with_indices.out", [](auto args) { maxPool(args); }},
    {"aten::avg_pool2d.out", [](auto args) { avgPool(args); }},
    {"aten::_adaptive_avg_pool2d.out", [](auto args) { adaptiveAvgPool(args); }},
    {"aten::upsample_nearest2d.vec_out", [](auto args) {
       const Tensor &self = tensorArg(args, 0);
       upsampleNearest(self, upsampleSizes(args, 1, 2, planesOf(self)), tensorArg(args, 3));
     }},
    {"aten::upsample_nearest2d.out", [](auto args) {
       upsampleNearest(tensorArg(args, 0), upsampleSizesWithScales(args, 1, 2), tensorArg(args, 4));
     }},
    {"aten::upsample_bilinear2d.vec_out", [](auto args) {
       const Tensor &self = tensorArg(args, 0);
       upsampleBilinear(self, upsampleSizes(args, 1, 3, planesOf(self)), boolArg(args, 2), tensorArg(args, 4));
     }},
    {"aten::upsample_bilinear2d.out", [](auto args) {
       upsampleBilinear(tensorArg(args, 0), upsampleSizesWithScales(args, 1, 3), boolArg(args, 2), tensorArg(args, 5));
     }},
});

} // namespace
} // namespace exir::run::kern
