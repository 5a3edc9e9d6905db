//===- Run/Kernels/Comparison.cpp - eq, lt, logical_*, bitwise_*, max/min -===//
//
// Comparisons compute in the promoted dtype of their operands and store bools
// (cast to out's dtype, which PyTorch lets be any). maximum/minimum propagate
// NaN. Bitwise ops accept integral and bool tensors only.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

namespace exir::run::kern {
namespace {

/// out = f(self, other) as bool, computed in the promoted dtype.
template <typename F> void predicate(std::span<Value *> args, F f) {
  const Tensor &self = tensorArg(args, 0);
  Other other(args, 1);
  Tensor &out = tensorArg(args, 2);
  ScalarType compute = resultType(self, other);
  const Tensor &b = other.as(compute);
  switchCompute(compute, [&]<typename C>() {
    mapElementwise<C, bool, 2>(out, {&self, &b}, [&f](C u, C v) { return bool(f(u, v)); });
  });
}

/// Logical ops read every operand as "nonzero" whatever its dtype.
template <typename F> void logical(std::span<Value *> args, F f) {
  const Tensor &self = tensorArg(args, 0), &other = tensorArg(args, 1);
  Tensor &out = tensorArg(args, 2);
  ResultType rt;
  ScalarType compute = rt.add(self).add(other).get();
  switchCompute(compute, [&]<typename C>() {
    mapElementwise<C, bool, 2>(out, {&self, &other}, [&f](C u, C v) { return bool(f(u != C(0), v != C(0))); });
  });
}

template <typename F> void bitwise(std::span<Value *> args, F f) {
  const Tensor &self = tensorArg(args, 0);
  Other other(args, 1);
  Tensor &out = tensorArg(args, 2);
  ScalarType compute = resultType(self, other);
  if (!isIntegralType(compute, /*includeBool=*/true))
    fail("bitwise ops need integral or bool operands, got " + dtypeText(compute));
  checkCanCast(compute, out.dtype);
  const Tensor &b = other.as(compute);
  mapElementwise<int64_t, int64_t, 2>(out, {&self, &b}, f);
}

template <bool IsMax> void extremum(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0), &other = tensorArg(args, 1);
  Tensor &out = tensorArg(args, 2);
  ScalarType compute = ResultType().add(self).add(other).get();
  checkCanCast(compute, out.dtype);
  switchCompute(compute, [&]<typename C>() {
    mapElementwise<C, C, 2>(out, {&self, &other}, [](C u, C v) -> C {
      if (u != u) return u; // NaN propagates
      if (v != v) return v;
      return IsMax ? (u < v ? v : u) : (v < u ? v : u);
    });
  });
}

#define EXIR_COMPARISON(name, expr)                                                                        \
  {"aten::" name ".Tensor_out", [](auto args) { predicate(args, [](auto u, auto v) { return expr; }); }}, \
  {"aten::" name ".Scalar_out", [](auto args) { predicate(args, [](auto u, auto v) { return expr; }); }}

KernelRegistration registration({
    EXIR_COMPARISON("eq", u == v),
    EXIR_COMPARISON("ne", u != v),
    EXIR_COMPARISON("lt", u < v),
    EXIR_COMPARISON("le", u <= v),
    EXIR_COMPARISON("gt", u > v),
    EXIR_COMPARISON("ge", u >= v),
    {"aten::logical_and.out", [](auto args) { logical(args, [](bool u, bool v) { return u && v; }); }},
    {"aten::logical_or.out", [](auto args) { logical(args, [](bool u, bool v) { return u || v; }); }},
    {"aten::logical_xor.out", [](auto args) { logical(args, [](bool u, bool v) { return u != v; }); }},
    {"aten::bitwise_and.Tensor_out", [](auto args) { bitwise(args, [](int64_t u, int64_t v) { return u & v; }); }},
    {"aten::bitwise_and.Scalar_out", [](auto args) { bitwise(args, [](int64_t u, int64_t v) { return u & v; }); }},
    {"aten::bitwise_or.Tensor_out", [](auto args) { bitwise(args, [](int64_t u, int64_t v) { return u | v; }); }},
    {"aten::bitwise_or.Scalar_out", [](auto args) { bitwise(args, [](int64_t u, int64_t v) { return u | v; }); }},
    {"aten::bitwise_xor.Tensor_out", [](auto args) { bitwise(args, [](int64_t u, int64_t v) { return u ^ v; }); }},
    {"aten::bitwise_xor.Scalar_out", [](auto args) { bitwise(args, [](int64_t u, int64_t v) { return u ^ v; }); }},
    {"aten::maximum.out", [](auto args) { extremum<true>(args); }},
    {"aten::minimum.out", [](auto args) { extremum<false>(args); }},
});

#undef EXIR_COMPARISON

} // namespace
} // namespace exir::run::kern
