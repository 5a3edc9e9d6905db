//===- Run/Kernels/Quantized.cpp - quantized_decomposed:: ops -------------===//
//
// The decomposed quantization ops as torch.ao defines them:
//   q = clamp(round_half_even(x * (1 / scale)) + zero_point, quant_min, quant_max)
//   x = (q - zero_point) * scale
// Per-tensor ops compute in float32 (the Python float scale meets a float32
// tensor as a wrapped number); per-channel ops promote with the scales
// tensor (float64 scales compute in double), as the decompositions do.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

namespace exir::run::kern {
namespace {

void checkQuantDtype(ScalarType dtype, int64_t quantMin, int64_t quantMax) {
  if (!isIntegralType(dtype, /*includeBool=*/false)) fail("quantized dtype must be integral, got " + dtypeText(dtype));
  if (quantMin > quantMax) fail("quant_min " + std::to_string(quantMin) + " is larger than quant_max " + std::to_string(quantMax));
}

ScalarType dtypeArg(std::span<Value *> args, size_t i) { return ScalarType(intArg(args, i)); }

/// The single value of a scale / zero_point tensor (the .tensor overloads).
double singleValue(const Tensor &t, const char *what) {
  if (t.numel() != 1) fail(std::string(what) + " must have one element, got sizes " + sizesText(t.sizes));
  return toVector<double>(t)[0];
}

void quantizePerTensor(const Tensor &input, double scale, int64_t zeroPoint, int64_t quantMin, int64_t quantMax,
                       ScalarType dtype, Tensor &out) {
  checkFloating(input, "input");
  checkQuantDtype(dtype, quantMin, quantMax);
  checkDtype(out, dtype, "out");
  switchCompute(input.dtype, [&]<typename C>() {
    if constexpr (std::is_floating_point_v<C>) {
      const C inverse = C(1.0 / scale);
      mapElementwise<C, int64_t, 1>(out, {&input}, [=](C x) {
        C q = std::nearbyint(x * inverse) + C(zeroPoint);
        return int64_t(std::min(std::max(q, C(quantMin)), C(quantMax)));
      });
    }
  });
}

void dequantizePerTensor(const Tensor &input, double scale, int64_t zeroPoint, int64_t quantMin, int64_t quantMax,
                         ScalarType dtype, std::span<Value *> args, size_t outDtypeIdx, Tensor &out) {
  checkQuantDtype(dtype, quantMin, quantMax);
  checkDtype(input, dtype, "input");
  if (!args[outDtypeIdx]->isNone()) checkDtype(out, dtypeArg(args, outDtypeIdx), "out");
  checkFloating(out, "out");
  const float s = float(scale), z = float(zeroPoint);
  mapElementwise<float, float, 1>(out, {&input}, [=](float q) { return (q - z) * s; });
}

/// Per-channel parameters along `axis`: out[i] = f(x[i], channel of i).
template <typename C, typename F>
void perChannel(const Tensor &input, Tensor &out, int64_t axis, F f) {
  std::vector<C> x = toVector<C>(input), y(x.size());
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < input.dim(); ++d) inner *= input.sizes[d];
  int64_t channels = input.sizes[axis];
  for (size_t i = 0; i < x.size(); ++i) y[i] = f(x[i], (int64_t(i) / inner) % channels);
  writeValues(out, y);
}

void quantizePerChannel(std::span<Value *> args) {
  const Tensor &input = tensorArg(args, 0), &scales = tensorArg(args, 1), &zeroPoints = tensorArg(args, 2);
  int64_t quantMin = intArg(args, 4), quantMax = intArg(args, 5);
  ScalarType dtype = dtypeArg(args, 6);
  Tensor &out = tensorArg(args, 7);
  checkFloating(input, "input");
  checkQuantDtype(dtype, quantMin, quantMax);
  checkDtype(out, dtype, "out");
  int64_t axis = wrapDim(intArg(args, 3), input.dim());
  if (scales.numel() != input.sizes[axis] || zeroPoints.numel() != input.sizes[axis])
    fail("scales and zero_points must have " + std::to_string(input.sizes[axis]) + " elements");
  out.resize(input.sizes);
  checkSameDimOrder({&input, &out});
  ScalarType compute = promoteTypes(input.dtype, scales.dtype);
  switchCompute(compute, [&]<typename C>() {
    if constexpr (std::is_floating_point_v<C>) {
      std::vector<C> s = toVector<C>(scales), inverse(s.size()), z = toVector<C>(zeroPoints);
      for (size_t i = 0; i < s.size(); ++i) inverse[i] = C(1) / s[i];
      perChannel<C>(input, out, axis, [&](C x, int64_t c) {
        C q = std::nearbyint(x * inverse[c]) + z[c];
        return std::min(std::max(q, C(quantMin)), C(quantMax));
      });
    }
  });
}

void dequantizePerChannel(std::span<Value *> args) {
  const Tensor &input = tensorArg(args, 0), &scales = tensorArg(args, 1);
  const Tensor *zeroPoints = args[2]->toOptionalTensor();
  int64_t quantMin = intArg(args, 4), quantMax = intArg(args, 5);
  ScalarType dtype = dtypeArg(args, 6);
  Tensor &out = tensorArg(args, 8);
  checkQuantDtype(dtype, quantMin, quantMax);
  checkDtype(input, dtype, "input");
  if (!args[7]->isNone()) checkDtype(out, dtypeArg(args, 7), "out");
  checkFloating(out, "out");
  int64_t axis = wrapDim(intArg(args, 3), input.dim());
  if (scales.numel() != input.sizes[axis] || (zeroPoints && zeroPoints->numel() != input.sizes[axis]))
    fail("scales and zero_points must have " + std::to_string(input.sizes[axis]) + " elements");
  out.resize(input.sizes);
  checkSameDimOrder({&input, &out});
  ScalarType compute = promoteTypes(ScalarType::Float, scales.dtype);
  switchCompute(compute, [&]<typename C>() {
    if constexpr (std::is_floating_point_v<C>) {
      std::vector<C> s = toVector<C>(scales);
      std::vector<C> z = zeroPoints ? toVector<C>(*zeroPoints) : std::vector<C>(s.size(), C(0));
      perChannel<C>(input, out, axis, [&](C q, int64_t c) { return C(float(q) - float(z[c])) * s[c]; });
    }
  });
}

/// choose_qparams: a per-tensor affine scale and zero point covering [min, max] and 0.
void chooseQparams(std::span<Value *> args) {
  const Tensor &input = tensorArg(args, 0);
  int64_t quantMin = intArg(args, 1), quantMax = intArg(args, 2);
  double eps = args[3]->toDouble();
  Tensor &scaleOut = tensorArg(args, 5), &zeroPointOut = tensorArg(args, 6);
  checkDtype(input, ScalarType::Float, "input");
  checkQuantDtype(dtypeArg(args, 4), quantMin, quantMax);
  std::vector<float> x = toVector<float>(input);
  float lo = 0, hi = 0; // the range always contains 0
  for (float v : x) lo = std::min(lo, v), hi = std::max(hi, v);
  float scale = std::max((hi - lo) / float(quantMax - quantMin), float(eps));
  int64_t zeroPoint = quantMin - int64_t(std::nearbyint(lo / scale));
  zeroPoint = std::min(std::max(zeroPoint, quantMin), quantMax);
  scaleOut.resize({1});
  zeroPointOut.resize({1});
  writeValues(scaleOut, std::vector<double>{scale});
  writeValues(zeroPointOut, std::vector<int64_t>{zeroPoint});
}

KernelRegistration registration({
    {"quantized_decomposed::quantize_per_tensor.out", [](std::span<Value *> args) {
       quantizePerTensor(tensorArg(args, 0), args[1]->toDouble(), intArg(args, 2), intArg(args, 3), intArg(args, 4),
                         dtypeArg(args, 5), tensorArg(args, 6));
     }},
    {"quantized_decomposed::quantize_per_tensor.Tensor_out", [](std::span<Value *> args) {
       quantizePerTensor(tensorArg(args, 0), singleValue(tensorArg(args, 1), "scale"),
                         int64_t(singleValue(tensorArg(args, 2), "zero_point")), intArg(args, 3), intArg(args, 4),
                         dtypeArg(args, 5), tensorArg(args, 6));
     }},
    {"quantized_decomposed::dequantize_per_tensor.out", [](std::span<Value *> args) {
       dequantizePerTensor(tensorArg(args, 0), args[1]->toDouble(), intArg(args, 2), intArg(args, 3), intArg(args, 4),
                           dtypeArg(args, 5), args, 6, tensorArg(args, 7));
     }},
    {"quantized_decomposed::dequantize_per_tensor.Tensor_out", [](std::span<Value *> args) {
       dequantizePerTensor(tensorArg(args, 0), singleValue(tensorArg(args, 1), "scale"),
                           int64_t(singleValue(tensorArg(args, 2), "zero_point")), intArg(args, 3), intArg(args, 4),
                           dtypeArg(args, 5), args, 6, tensorArg(args, 7));
     }},
    {"quantized_decomposed::quantize_per_channel.out", [](auto args) { quantizePerChannel(args); }},
    {"quantized_decomposed::dequantize_per_channel.out", [](auto args) { dequantizePerChannel(args); }},
    {"quantized_decomposed::choose_qparams.Tensor_out", [](auto args) { chooseQparams(args); }},
});

} // namespace
} // namespace exir::run::kern
