//===- Run/Kernels/Arithmetic.cpp - add, sub, mul, div, pow, ... ----------===//
//
// Binary arithmetic with PyTorch's broadcasting and type promotion. A Scalar
// `other` takes part in promotion as a wrapped number and is then used as a
// 0-dim tensor of the computation dtype. Integer division by zero is an error
// (PyTorch raises ZeroDivisionError); float division follows IEEE.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

namespace exir::run::kern {
namespace {

void checkAlpha(ScalarType compute, const Scalar &alpha) {
  if (isIntegralType(compute, /*includeBool=*/true) && alpha.isFloating())
    fail("for integral input tensors, alpha must not be a floating point number");
  if (compute == ScalarType::Bool && !alpha.isBool() && alpha.as<int64_t>() != 1 && alpha.as<int64_t>() != 0)
    fail("for bool input tensors, alpha must be a bool");
}

int64_t checkedDivisor(int64_t b) {
  if (b == 0) fail("integer division by zero");
  return b;
}

template <typename T> T floorDivide(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    // PyTorch's div_floor_floating: exact for values where floor(a / b) would round wrongly.
    if (b == 0) return a / b;
    T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && (b < 0) != (mod < 0)) div -= T(1);
    if (div == 0) return std::copysign(T(0), a / b);
    T floordiv = std::floor(div);
    if (div - floordiv > T(0.5)) floordiv += T(1);
    return floordiv;
  } else {
    T q = a / checkedDivisor(b);
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
  }
}

template <typename T> T remainderOf(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    T mod = std::fmod(a, b);
    if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
    return mod;
  } else {
    T mod = a % checkedDivisor(b);
    if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
    return mod;
  }
}

template <typename T> T powerOf(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::pow(a, b);
  } else {
    // PyTorch's powi: negative exponents give 0 except for bases 1 and -1.
    if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
    T result = 1;
    for (T base = a, e = b; e; e >>= 1, base *= base)
      if (e & 1) result *= base;
    return result;
  }
}

/// out = a + alpha * b (sign = +1) or a - alpha * b (sign = -1); `reverse`
/// swaps the operands (rsub: other - alpha * self).
void addSub(std::span<Value *> args, size_t alphaIdx, size_t outIdx, int sign, bool reverse) {
  const Tensor &self = tensorArg(args, 0);
  Other other(args, 1);
  Scalar alpha = scalarArg(args, alphaIdx);
  Tensor &out = tensorArg(args, outIdx);
  ScalarType compute = resultType(self, other);
  checkCanCast(compute, out.dtype);
  checkAlpha(compute, alpha);
  if (sign < 0 && compute == ScalarType::Bool) fail("subtraction of bool tensors is not supported");
  const Tensor &b = other.as(compute);
  const Tensor *x = reverse ? &b : &self, *y = reverse ? &self : &b;
  switchCompute(compute, [&]<typename C>() {
    C a = alpha.as<C>();
    if (sign > 0) mapElementwise<C, C, 2>(out, {x, y}, [a](C u, C v) { return C(u + a * v); });
    else mapElementwise<C, C, 2>(out, {x, y}, [a](C u, C v) { return C(u - a * v); });
  });
}

/// A binary op computed in the promoted dtype: f.template operator()<C>(u, v).
template <typename F> void binary(std::span<Value *> args, size_t outIdx, F f, bool floatOp = false) {
  const Tensor &self = tensorArg(args, 0);
  Other other(args, 1);
  Tensor &out = tensorArg(args, outIdx);
  ScalarType compute = resultType(self, other);
  if (floatOp) compute = floatOpType(compute);
  checkCanCast(compute, out.dtype);
  const Tensor &b = other.as(compute);
  switchCompute(compute, [&]<typename C>() {
    mapElementwise<C, C, 2>(out, {&self, &b}, [&f](C u, C v) { return f.template operator()<C>(u, v); });
  });
}

void div(std::span<Value *> args, size_t outIdx, std::optional<std::string> mode) {
  if (!mode) {
    binary(args, outIdx, []<typename C>(C u, C v) { return C(u / v); }, /*floatOp=*/true);
  } else if (*mode == "trunc") {
    binary(args, outIdx, []<typename C>(C u, C v) {
      if constexpr (std::is_floating_point_v<C>) return std::trunc(u / v);
      else return C(u / checkedDivisor(v));
    });
  } else if (*mode == "floor") {
    binary(args, outIdx, []<typename C>(C u, C v) { return floorDivide(u, v); });
  } else {
    fail("rounding_mode must be None, 'trunc' or 'floor', got '" + *mode + "'");
  }
}

void powScalarBase(std::span<Value *> args) {
  Scalar base = scalarArg(args, 0);
  const Tensor &exponent = tensorArg(args, 1);
  Tensor &out = tensorArg(args, 2);
  ScalarType compute = ResultType().add(base).add(exponent).get();
  checkCanCast(compute, out.dtype);
  Tensor b = scalarTensor(base, compute);
  switchCompute(compute, [&]<typename C>() {
    mapElementwise<C, C, 2>(out, {&b, &exponent}, [](C u, C v) { return powerOf(u, v); });
  });
}

void checkNotBool(const Tensor &t, const char *op) {
  if (t.dtype == ScalarType::Bool) fail(std::string(op) + " is not supported for bool tensors");
}

KernelRegistration registration({
    {"aten::add.out", [](auto args) { addSub(args, 2, 3, +1, false); }},
    {"aten::add.Scalar_out", [](auto args) { addSub(args, 2, 3, +1, false); }},
    {"aten::sub.out", [](auto args) { addSub(args, 2, 3, -1, false); }},
    {"aten::sub.Scalar_out", [](auto args) { addSub(args, 2, 3, -1, false); }},
    {"aten::rsub.Tensor_out", [](auto args) { addSub(args, 2, 3, -1, true); }},
    {"aten::rsub.Scalar_out", [](auto args) { addSub(args, 2, 3, -1, true); }},
    {"aten::mul.out", [](auto args) { binary(args, 2, []<typename C>(C u, C v) { return C(u * v); }); }},
    {"aten::mul.Scalar_out", [](auto args) { binary(args, 2, []<typename C>(C u, C v) { return C(u * v); }); }},
    {"aten::div.out", [](auto args) { div(args, 2, std::nullopt); }},
    {"aten::div.Scalar_out", [](auto args) { div(args, 2, std::nullopt); }},
    {"aten::div.out_mode", [](auto args) { div(args, 3, optStringArg(args, 2)); }},
    {"aten::div.Scalar_mode_out", [](auto args) { div(args, 3, optStringArg(args, 2)); }},
    {"aten::floor_divide.out",
     [](auto args) { binary(args, 2, []<typename C>(C u, C v) { return floorDivide(u, v); }); }},
    {"aten::remainder.Tensor_out",
     [](auto args) { binary(args, 2, []<typename C>(C u, C v) { return remainderOf(u, v); }); }},
    {"aten::remainder.Scalar_out",
     [](auto args) { binary(args, 2, []<typename C>(C u, C v) { return remainderOf(u, v); }); }},
    {"aten::fmod.Tensor_out", [](auto args) {
       binary(args, 2, []<typename C>(C u, C v) {
         if constexpr (std::is_floating_point_v<C>) return C(std::fmod(u, v));
         else return C(u % checkedDivisor(v));
       });
     }},
    {"aten::fmod.Scalar_out", [](auto args) {
       binary(args, 2, []<typename C>(C u, C v) {
         if constexpr (std::is_floating_point_v<C>) return C(std::fmod(u, v));
         else return C(u % checkedDivisor(v));
       });
     }},
    {"aten::pow.Tensor_Tensor_out", [](auto args) {
       checkNotBool(tensorArg(args, 0), "pow");
       binary(args, 2, []<typename C>(C u, C v) { return powerOf(u, v); });
     }},
    {"aten::pow.Tensor_Scalar_out", [](auto args) {
       binary(args, 2, []<typename C>(C u, C v) { return powerOf(u, v); });
     }},
    {"aten::pow.Scalar_out", [](auto args) { powScalarBase(args); }},
    {"aten::atan2.out",
     [](auto args) { binary(args, 2, []<typename C>(C u, C v) { return C(std::atan2(u, v)); }, true); }},
});

} // namespace
} // namespace exir::run::kern
