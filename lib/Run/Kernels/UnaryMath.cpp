//===- Run/Kernels/UnaryMath.cpp - exp, log, sqrt, floor, isnan, ... ------===//
//
// Float functions promote integral inputs to float32 (as PyTorch does) and
// compute in float for float32, in double for float64. Rounding functions
// and neg/abs/sign keep the input dtype; round is half-to-even.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

namespace exir::run::kern {
namespace {

/// out = f(self) in float (integral inputs promote to float32).
template <typename F> void floatUnary(std::span<Value *> args, F f) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 1);
  ScalarType compute = floatOpType(self.dtype);
  checkCanCast(compute, out.dtype);
  switchCompute(compute, [&]<typename C>() {
    if constexpr (std::is_floating_point_v<C>)
      mapElementwise<C, C, 1>(out, {&self}, [&f](C x) { return C(f(x)); });
  });
}

/// out = f(self) in self's dtype.
template <typename F> void sameUnary(std::span<Value *> args, F f, bool allowBool = true) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 1);
  if (!allowBool && self.dtype == ScalarType::Bool) fail("not supported for bool tensors");
  checkCanCast(self.dtype, out.dtype);
  switchCompute(self.dtype, [&]<typename C>() {
    mapElementwise<C, C, 1>(out, {&self}, [&f](C x) { return C(f(x)); });
  });
}

/// out = f(self) as bool.
template <typename F> void predicateUnary(std::span<Value *> args, F f) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 1);
  switchCompute(self.dtype, [&]<typename C>() {
    mapElementwise<C, bool, 1>(out, {&self}, [&f](C x) { return bool(f(x)); });
  });
}

/// Rounding is the identity on integers.
template <typename F> auto rounding(F f) {
  return [f](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>) return decltype(x)(f(x));
    else return x;
  };
}

#define EXIR_FLOAT_UNARY(name, expr) \
  {"aten::" name ".out", [](auto args) { floatUnary(args, [](auto x) { return expr; }); }}

KernelRegistration registration({
    EXIR_FLOAT_UNARY("exp", std::exp(x)),
    EXIR_FLOAT_UNARY("expm1", std::expm1(x)),
    EXIR_FLOAT_UNARY("log", std::log(x)),
    EXIR_FLOAT_UNARY("log1p", std::log1p(x)),
    EXIR_FLOAT_UNARY("log2", std::log2(x)),
    EXIR_FLOAT_UNARY("log10", std::log10(x)),
    EXIR_FLOAT_UNARY("sqrt", std::sqrt(x)),
    EXIR_FLOAT_UNARY("rsqrt", decltype(x)(1) / std::sqrt(x)),
    EXIR_FLOAT_UNARY("reciprocal", decltype(x)(1) / x),
    EXIR_FLOAT_UNARY("sin", std::sin(x)),
    EXIR_FLOAT_UNARY("cos", std::cos(x)),
    EXIR_FLOAT_UNARY("tan", std::tan(x)),
    EXIR_FLOAT_UNARY("sinh", std::sinh(x)),
    EXIR_FLOAT_UNARY("cosh", std::cosh(x)),
    EXIR_FLOAT_UNARY("tanh", std::tanh(x)),
    EXIR_FLOAT_UNARY("asin", std::asin(x)),
    EXIR_FLOAT_UNARY("acos", std::acos(x)),
    EXIR_FLOAT_UNARY("atan", std::atan(x)),
    EXIR_FLOAT_UNARY("asinh", std::asinh(x)),
    EXIR_FLOAT_UNARY("acosh", std::acosh(x)),
    EXIR_FLOAT_UNARY("atanh", std::atanh(x)),
    EXIR_FLOAT_UNARY("erf", std::erf(x)),
    EXIR_FLOAT_UNARY("sigmoid", decltype(x)(1) / (decltype(x)(1) + std::exp(-x))),
    {"aten::neg.out", [](auto args) { sameUnary(args, [](auto x) { return -x; }, /*allowBool=*/false); }},
    {"aten::abs.out", [](auto args) { sameUnary(args, [](auto x) { return x < 0 ? -x : x; }); }},
    // ATen computes (0 < x) - (x < 0): NaN and -0.0 give 0.
    {"aten::sign.out", [](auto args) { sameUnary(args, [](auto x) { return decltype(x)((x > 0) - (x < 0)); }); }},
    {"aten::floor.out", [](auto args) { sameUnary(args, rounding([](auto x) { return std::floor(x); })); }},
    {"aten::ceil.out", [](auto args) { sameUnary(args, rounding([](auto x) { return std::ceil(x); })); }},
    {"aten::trunc.out", [](auto args) { sameUnary(args, rounding([](auto x) { return std::trunc(x); })); }},
    // nearbyint in the default rounding mode rounds half to even, like torch.round.
    {"aten::round.out", [](auto args) { sameUnary(args, rounding([](auto x) { return std::nearbyint(x); })); }},
    {"aten::bitwise_not.out", [](auto args) {
       const Tensor &self = tensorArg(args, 0);
       if (!isIntegralType(self.dtype, /*includeBool=*/true)) fail("bitwise_not needs an integral or bool tensor");
       if (self.dtype == ScalarType::Bool) sameUnary(args, [](auto x) { return decltype(x)(!x); });
       else sameUnary(args, [](auto x) {
         if constexpr (std::is_integral_v<decltype(x)>) return decltype(x)(~x);
         else return x; // not reached: float dtypes are refused above
       });
     }},
    {"aten::logical_not.out", [](auto args) { predicateUnary(args, [](auto x) { return x == 0; }); }},
    {"aten::isnan.out", [](auto args) { predicateUnary(args, [](auto x) { return x != x; }); }},
    {"aten::isinf.out", [](auto args) {
       predicateUnary(args, [](auto x) {
         if constexpr (std::is_floating_point_v<decltype(x)>) return std::isinf(x);
         else return false;
       });
     }},
});

#undef EXIR_FLOAT_UNARY

} // namespace
} // namespace exir::run::kern
