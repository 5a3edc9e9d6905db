//===- Run/Kernels/Activation.cpp - relu, gelu, clamp, where, ... ---------===//
//
// Activations compute in the input's float dtype (relu, hardtanh and clamp
// keep integral dtypes too). clamp and where promote their operands like
// PyTorch; masked_fill keeps self's dtype and casts the fill value to it.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

#include <numbers>

namespace exir::run::kern {
namespace {

/// out (args[outIdx]) = f(self) with f a generic lambda of one C.
template <typename F> void activation(std::span<Value *> args, size_t outIdx, bool floatOnly, F f) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, outIdx);
  if (floatOnly) checkFloating(self, "self");
  if (self.dtype == ScalarType::Bool) fail("not supported for bool tensors");
  checkCanCast(self.dtype, out.dtype);
  switchCompute(self.dtype, [&]<typename C>() {
    mapElementwise<C, C, 1>(out, {&self}, [&f](C x) { return C(f(x)); });
  });
}

template <typename C> C clampValue(C x, const std::optional<C> &lo, const std::optional<C> &hi) {
  if (lo && x < *lo) x = *lo; // a NaN x fails both comparisons and stays NaN
  if (hi && x > *hi) x = *hi;
  return x;
}

void clampScalar(std::span<Value *> args, size_t minIdx, size_t maxIdx, size_t outIdx) {
  const Tensor &self = tensorArg(args, 0);
  std::optional<Scalar> lo = optScalarArg(args, minIdx), hi = optScalarArg(args, maxIdx);
  Tensor &out = tensorArg(args, outIdx);
  if (!lo && !hi) fail("at least one of 'min' or 'max' must not be None");
  ResultType rt;
  rt.add(self);
  if (lo) rt.add(*lo);
  if (hi) rt.add(*hi);
  ScalarType compute = rt.get();
  if (compute == ScalarType::Bool) fail("not supported for bool tensors");
  checkCanCast(compute, out.dtype);
  switchCompute(compute, [&]<typename C>() {
    std::optional<C> l, h;
    if (lo) l = lo->as<C>();
    if (hi) h = hi->as<C>();
    mapElementwise<C, C, 1>(out, {&self}, [&](C x) { return clampValue(x, l, h); });
  });
}

void clampTensor(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  const Tensor *lo = args[1]->toOptionalTensor(), *hi = args[2]->toOptionalTensor();
  Tensor &out = tensorArg(args, 3);
  if (!lo && !hi) fail("at least one of 'min' or 'max' must not be None");
  ResultType rt;
  rt.add(self);
  if (lo) rt.add(*lo);
  if (hi) rt.add(*hi);
  ScalarType compute = rt.get();
  checkCanCast(compute, out.dtype);
  bool hasLo = lo, hasHi = hi;
  // A missing bound is replaced by self, and ignored.
  switchCompute(compute, [&]<typename C>() {
    mapElementwise<C, C, 3>(out, {&self, lo ? lo : &self, hi ? hi : &self}, [=](C x, C l, C h) {
      return clampValue(x, hasLo ? std::optional<C>(l) : std::nullopt, hasHi ? std::optional<C>(h) : std::nullopt);
    });
  });
}

void where(std::span<Value *> args) {
  const Tensor &cond = tensorArg(args, 0), &self = tensorArg(args, 1), &other = tensorArg(args, 2);
  Tensor &out = tensorArg(args, 3);
  if (cond.dtype != ScalarType::Bool && cond.dtype != ScalarType::Byte)
    fail("condition must be a bool tensor, got " + dtypeText(cond.dtype));
  ScalarType compute = ResultType().add(self).add(other).get();
  checkCanCast(compute, out.dtype);
  switchCompute(compute, [&]<typename C>() {
    mapElementwise<C, C, 3>(out, {&cond, &self, &other}, [](C c, C x, C y) { return c != C(0) ? x : y; });
  });
}

void maskedFill(std::span<Value *> args, const Scalar &value) {
  const Tensor &self = tensorArg(args, 0), &mask = tensorArg(args, 1);
  Tensor &out = tensorArg(args, 3);
  checkDtype(mask, ScalarType::Bool, "mask");
  checkSameDtype(self, out, "self", "out");
  switchCompute(self.dtype, [&]<typename C>() {
    C fill = value.as<C>();
    mapElementwise<C, C, 2>(out, {&self, &mask}, [fill](C x, C m) { return m != C(0) ? fill : x; });
  });
}

Scalar scalarOfTensor(const Tensor &t) {
  if (t.numel() != 1) fail("value must be a tensor with one element, got sizes " + sizesText(t.sizes));
  if (t.dtype == ScalarType::Bool) { Scalar s; s.kind = Scalar::Kind::Bool; s.b = *t.ptr<bool>(); return s; }
  if (isFloatingType(t.dtype)) return Scalar::ofDouble(toVector<double>(t)[0]);
  return Scalar::ofInt(toVector<int64_t>(t)[0]);
}

template <typename C> C geluOf(C x, bool tanhApprox) {
  if (tanhApprox) {
    const C kBeta = C(std::numbers::sqrt2 * std::numbers::inv_sqrtpi); // sqrt(2 / pi)
    C inner = kBeta * (x + C(0.044715) * x * x * x);
    return C(0.5) * x * (C(1) + std::tanh(inner));
  }
  return x * C(0.5) * (C(1) + std::erf(x * C(std::numbers::sqrt2 / 2)));
}

KernelRegistration registration({
    // relu is clamp_min(x, 0): NaN propagates.
    {"aten::relu.out", [](auto args) {
       activation(args, 1, false, [](auto x) { return x != x || x > 0 ? x : decltype(x)(0); });
     }},
    {"aten::hardtanh.out", [](auto args) {
       Scalar lo = scalarArg(args, 1), hi = scalarArg(args, 2);
       activation(args, 3, false, [lo, hi](auto x) {
         using C = decltype(x);
         return clampValue<C>(x, lo.as<C>(), hi.as<C>());
       });
     }},
    {"aten::leaky_relu.out", [](auto args) {
       Scalar slope = scalarArg(args, 1);
       activation(args, 2, true, [slope](auto x) { return x > 0 ? x : x * slope.as<decltype(x)>(); });
     }},
    {"aten::elu.out", [](auto args) {
       Scalar alpha = scalarArg(args, 1), scale = scalarArg(args, 2), inputScale = scalarArg(args, 3);
       activation(args, 4, true, [=](auto x) {
         using C = decltype(x);
         return x <= 0 ? C(std::expm1(x * inputScale.as<C>()) * alpha.as<C>() * scale.as<C>()) : C(x * scale.as<C>());
       });
     }},
    {"aten::gelu.out", [](auto args) {
       std::string approximate = optStringArg(args, 1).value_or("none");
       if (approximate != "none" && approximate != "tanh")
         fail("approximate must be 'none' or 'tanh', got '" + approximate + "'");
       bool tanhApprox = approximate == "tanh";
       activation(args, 2, true, [tanhApprox](auto x) { return geluOf(x, tanhApprox); });
     }},
    {"aten::hardswish.out", [](auto args) {
       activation(args, 1, true, [](auto x) {
         using C = decltype(x);
         return x * std::min(std::max(x + C(3), C(0)), C(6)) / C(6);
       });
     }},
    {"aten::hardsigmoid.out", [](auto args) {
       activation(args, 1, true, [](auto x) {
         using C = decltype(x);
         return std::min(std::max(x + C(3), C(0)), C(6)) / C(6);
       });
     }},
    {"aten::softplus.out", [](auto args) {
       Scalar beta = scalarArg(args, 1), threshold = scalarArg(args, 2);
       activation(args, 3, true, [=](auto x) {
         using C = decltype(x);
         C b = beta.as<C>();
         return x * b > threshold.as<C>() ? x : C(std::log1p(std::exp(x * b)) / b);
       });
     }},
    {"aten::silu.out", [](auto args) {
       activation(args, 1, true, [](auto x) { return x / (decltype(x)(1) + std::exp(-x)); });
     }},
    {"aten::clamp.out", [](auto args) { clampScalar(args, 1, 2, 3); }},
    {"aten::clamp.Tensor_out", [](auto args) { clampTensor(args); }},
    {"aten::where.self_out", [](auto args) { where(args); }},
    {"aten::masked_fill.Scalar_out", [](auto args) { maskedFill(args, scalarArg(args, 2)); }},
    {"aten::masked_fill.Tensor_out", [](auto args) { maskedFill(args, scalarOfTensor(tensorArg(args, 2))); }},
});

} // namespace
} // namespace exir::run::kern
